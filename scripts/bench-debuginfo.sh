#!/usr/bin/env bash
# bench-debuginfo.sh runs scripts/bench.sh once on Debian's 6.1 vmlinux as
# shipped (plain DWARF) and on its copies with zlib and zstd compressed
# debug sections: gprobe's first run (empty index cache) and its repeats
# (warm index) against perf probe, wall time and peak RSS. The numbers in
# docs/debuginfo.md come from it.
#
#   scripts/bench-debuginfo.sh [REPEAT]   (default 3)
#   ONLY=REGEX                            as for bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
for form in plain zlib zstd; do
	echo "== $form"
	if [ "$form" = plain ]; then
		scripts/bench.sh "${1:-3}"
	else
		COMPRESSED=$form scripts/bench.sh "${1:-3}"
	fi
	echo
done
