#!/bin/sh
# bench-analyze.sh: gprobe analyze (latency + refcount) against
# `trace-cmd report` printing the same recording, side by side.
#
# It records refprog through real uprobes (analyze/testdata/prog/record.sh,
# needs root and tracefs): CALLS calls of work (entry + return probes) and
# OBJECTS objects through obj_get/obj_put, about 850,000 events by default,
# extracted by trace-cmd as a v7 zstd file. Then it times each tool RUNS
# times and prints the best times and their ratio.
#   scripts/bench-analyze.sh [CALLS OBJECTS RUNS]
set -eu
cd "$(dirname "$0")/.."
command -v /usr/bin/time > /dev/null || { echo "bench-analyze.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
calls=${1:-200000} objs=${2:-12500} runs=${3:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/gprobe" ./cmd/gprobe
sh analyze/testdata/prog/record.sh "$tmp/bench" "$calls" "$objs" 100 50 65536
dat=$tmp/bench/v7-zstd.dat
events=$("$tmp/gprobe" analyze --json "$dat" | sed -n 's/^  "events": \([0-9]*\),/\1/p')
lost=$("$tmp/gprobe" analyze --json "$dat" | sed -n 's/^  "lost_events": \([0-9]*\),/\1/p')
echo "recording: $events events ($lost lost), $(stat -c %s "$dat") bytes, trace-cmd v7 zstd"

# best of N: wall-clock seconds and CPU seconds (user + system), each
# the minimum over the runs (the machine may be shared), and the largest
# resident set.
best() {
	bw="" bc="" rss=0
	for i in $(seq "$runs"); do
		/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" > /dev/null
		read -r w u s m < "$tmp/time"
		[ "$m" -gt "$rss" ] && rss=$m
		c=$(echo "$u + $s" | bc)
		if [ -z "$bw" ] || [ "$(echo "$w < $bw" | bc)" = 1 ]; then bw=$w; fi
		if [ -z "$bc" ] || [ "$(echo "$c < $bc" | bc)" = 1 ]; then bc=$c; fi
	done
	echo "$bw $bc $rss"
}
set -- $(best "$tmp/gprobe" analyze --refcount get=obj_get,put=obj_put "$dat")
gw=$1 gc=$2 gm=$3
set -- $(best trace-cmd report "$dat")
rw=$1 rc=$2 rm=$3
printf '%-38s %8s %8s %10s\n' "" "wall s" "cpu s" "max RSS kB"
printf '%-38s %8.3f %8.3f %10d\n' "gprobe analyze (latency + refcount)" "$gw" "$gc" "$gm"
printf '%-38s %8.3f %8.3f %10d\n' "trace-cmd report (print only)" "$rw" "$rc" "$rm"
printf 'ratio: gprobe analyze is %.1fx faster (wall), %.1fx (cpu)\n' "$(echo "$rw / $gw" | bc -l)" "$(echo "$rc / $gc" | bc -l)"
