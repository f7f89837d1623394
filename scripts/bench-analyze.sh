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
calls=${1:-200000} objs=${2:-12500} runs=${3:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/gprobe" ./cmd/gprobe
sh analyze/testdata/prog/record.sh "$tmp/bench" "$calls" "$objs" 100 50 65536
dat=$tmp/bench/v7-zstd.dat
events=$("$tmp/gprobe" analyze --json "$dat" | sed -n 's/^  "events": \([0-9]*\),/\1/p')
lost=$("$tmp/gprobe" analyze --json "$dat" | sed -n 's/^  "lost_events": \([0-9]*\),/\1/p')
echo "recording: $events events ($lost lost), $(stat -c %s "$dat") bytes, trace-cmd v7 zstd"

# best of N wall-clock seconds
best() {
	b=""
	for i in $(seq "$runs"); do
		s=$(date +%s.%N)
		"$@" > /dev/null
		e=$(date +%s.%N)
		t=$(echo "$e - $s" | bc)
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ]; then b=$t; fi
	done
	echo "$b"
}
g=$(best "$tmp/gprobe" analyze --refcount get=obj_get,put=obj_put "$dat")
r=$(best trace-cmd report "$dat")
printf 'gprobe analyze (latency + refcount): %8.3f s\n' "$g"
printf 'trace-cmd report (print only):       %8.3f s\n' "$r"
printf 'ratio: gprobe analyze is %.1fx faster\n' "$(echo "$r / $g" | bc -l)"
