#!/bin/sh
# gen.sh regenerates the golden recordings in this directory from a real
# run of refprog (30 calls, 10 objects, 3 leaked, 2 released twice) with
# uprobes (recorded by trace-cmd and, in a second run, by gprobe record),
# then the expected reports:
#   sh analyze/testdata/golden/gen.sh && go test ./analyze -run Golden -update
# kallsyms is left out (KALLSYMS_EMPTY) to keep the files small; the
# uncompressed trace.dat files are stored zstd-compressed (.zst).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$here/../../.." && go build -o "$tmp/gprobe" ./cmd/gprobe)
GPROBE=$tmp/gprobe KALLSYMS_EMPTY=1 sh "$here/../prog/record.sh" "$tmp/golden" 30 10 3 2
cd "$tmp/golden"
cp v7-zstd.dat trace.txt trace-tgid.txt trace-noirq.txt trace-lat.txt trace-pipe.txt report.txt "$here/"
for f in v6.dat v7-none.dat v7-zlib.dat gprobe.dat; do
	[ -f "$f" ] && zstd -q -19 -f "$f" -o "$here/$f.zst"
done
echo "golden recordings written to $here"
