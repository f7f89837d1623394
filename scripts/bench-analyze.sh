#!/bin/sh
# bench-analyze.sh: the full analysis (latency and refcount together, text
# and --json) of gprobe analyze against `trace-cmd report -i FILE` printing
# the same recording, in one run, for recordings from 1k to 10M events and
# 100 to 1M objects still referenced at the end; then a fleet: the first
# size's recording as 50 hosts' files in one directory, `gprobe analyze DIR`
# against trace-cmd report on each file.
#
#   scripts/bench-analyze.sh [RUNS [EVENTS:LIVE ...]]
#
# RUNS=0 only makes the recordings.
# Each recording is refprog (analyze/testdata/prog) run through real
# uprobes by analyze/testdata/prog/record.sh (needs root and tracefs):
# LIVE objects leak (3 events each), the other events are half calls of a
# recursive function (entry and return probes), half objects whose
# references balance (4 events each). record.sh writes the events twice:
# trace-cmd extract's v7 zstd file (v7-zstd.dat) and gprobe record's v6
# file (gprobe.dat). Recordings take minutes for the largest sizes, so they
# are kept under $BENCH_CACHE (default /var/cache/gprobe/bench), keyed by
# the program, record.sh and the running kernel; a recording that lost
# events or has the wrong count is refused.
#
# Every tool runs RUNS times (default 3) on each file, the tools taking
# turns (each round starting with the next tool); the table gives the best wall and CPU (user + system) seconds and
# the largest resident set, the size of the JSON report, then trace-cmd's
# figure divided by gprobe's (the worse of text and --json): above 1 means
# gprobe is faster or smaller.
set -eu
cd "$(dirname "$0")/.."
for t in python3 trace-cmd gcc bc sha256sum; do
	command -v $t > /dev/null || { echo "bench-analyze.sh: needs $t" >&2; exit 1; }
done
runs=${1:-3}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- 1k:100 10k:100 10k:1k 100k:100 100k:10k 850k:50k 1M:100 1M:100k 10M:100 10M:1M
cache=${BENCH_CACHE:-/var/cache/gprobe/bench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
scripts/build.sh "$tmp/gprobe"
prog=analyze/testdata/prog
key=$(cat $prog/refprog.c $prog/record.sh | sha256sum | cut -c1-12)-$(uname -r)
spec=get=obj_get,put=obj_put

num() { # 10k -> 10000, 1M -> 1000000
	case $1 in
	*k) echo $((${1%k} * 1000)) ;;
	*M) echo $((${1%M} * 1000000)) ;;
	*) echo "$1" ;;
	esac
}

# recording EVENTS LIVE: the cached directory holding both files.
recording() {
	events=$(num "$1") live=$(num "$2")
	rest=$((events - 3 * live))
	[ "$rest" -ge 0 ] || { echo "bench-analyze.sh: $1 events cannot hold $2 leaked objects" >&2; exit 1; }
	balanced=$((rest / 8)) calls=$((rest / 8))
	dir=$cache/$key/$calls-$((live + balanced))-$live
	if [ ! -f "$dir/ok" ]; then
		mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
		rm -rf "$dir"
		mkdir -p "$(dirname "$dir")"
		# The ring buffer must hold every event for trace-cmd extract:
		# about 41 bytes each, on one CPU in the worst case.
		bufkb=$((events / 20 + 4096))
		GPROBE=$tmp/gprobe DAT_ONLY=1 sh $prog/record.sh "$dir" $calls $((live + balanced)) $live 0 $bufkb >&2
		want=$(( (calls / 3) * 12 + (calls % 3 > 0 ? 2 : 0) + (calls % 3 > 1 ? 4 : 0) + 3 * live + 4 * balanced))
		for f in v7-zstd.dat gprobe.dat; do
			"$tmp/gprobe" analyze --json "$dir/$f" > "$tmp/check.json"
			got=$(sed -n 's/^  "events": \([0-9]*\),/\1/p' "$tmp/check.json")
			lost=$(sed -n 's/^  "lost_events": \([0-9]*\),/\1/p' "$tmp/check.json")
			if [ "$got" != "$want" ] || [ "$lost" != 0 ]; then
				echo "bench-analyze.sh: $dir/$f has $got events ($lost lost), want $want" >&2
				exit 1
			fi
		done
		echo "$want" > "$dir/ok"
	fi
	echo "$dir"
}

# best CMD1 -- CMD2 -- CMD3: the best wall and CPU (user + system)
# seconds of $runs runs of each command and its largest resident set in
# MiB, measured to the microsecond (getrusage of the child), output
# discarded; one line per command. The commands take turns, run after run,
# so that a slow spell of a shared machine falls on all of them alike.
best() {
	python3 - "$runs" "$@" <<-'EOF'
	import os, subprocess, sys, time
	runs, cmds, cur = int(sys.argv[1]), [], []
	for a in sys.argv[2:] + ["--"]:
	    if a == "--":
	        cmds.append(cur)
	        cur = []
	    else:
	        cur.append(a)
	wall = [float("inf")] * len(cmds)
	cpu = [float("inf")] * len(cmds)
	rss = [0] * len(cmds)
	for r in range(runs):
	    # Each round starts one command later: a run right after a tool
	    # that freed hundreds of megabytes is slower here (the freed
	    # memory comes back at a cost), so every command takes every turn.
	    for k in range(len(cmds)):
	        i = (k + r) % len(cmds)
	        cmd = cmds[i]
	        t = time.monotonic()
	        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
	        _, status, ru = os.wait4(p.pid, 0)
	        w = time.monotonic() - t
	        if status != 0:
	            sys.exit(f"{cmd[0]} failed")
	        wall[i] = min(wall[i], w)
	        cpu[i] = min(cpu[i], ru.ru_utime + ru.ru_stime)
	        rss[i] = max(rss[i], ru.ru_maxrss)  # KiB
	for i in range(len(cmds)):
	    print(f"{wall[i]:.3f} {cpu[i]:.3f} {rss[i] // 1024}")
	EOF
}

ratio() { # ratio A B [A2 B2]: the smaller of A/B and A2/B2
	r=$(echo "scale=1; $1 / $2" | bc)
	if [ $# -gt 2 ]; then
		r2=$(echo "scale=1; $3 / $4" | bc)
		[ "$(echo "$r2 < $r" | bc)" = 1 ] && r=$r2
	fi
	echo "$r"
}

nz() { # bc divides by zero on a 0.00 timing
	if [ "$(echo "$1 == 0" | bc)" = 1 ]; then echo 0.01; else echo "$1"; fi
}

if [ "$runs" = 0 ]; then
	for size in "$@"; do recording "${size%:*}" "${size#*:}"; done
	exit 0
fi
first=$1 # the smallest size, for the fleet below
echo "gprobe analyze --refcount $spec (text, then --json) against trace-cmd report -i; best of $runs; $(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
printf '%8s %8s %-6s %5s | %-22s | %-22s | %-29s | %s\n' "" "" "" "" "trace-cmd report" "gprobe analyze" "gprobe analyze --json" "trace-cmd / gprobe"
printf '%8s %8s %-6s %5s | %6s %6s %8s | %6s %6s %8s | %6s %6s %8s %6s | %5s %5s %5s\n' events live file MB wall cpu MiB wall cpu MiB wall cpu MiB JSON-KB wall cpu mem
for size in "$@"; do
	dir=$(recording "${size%:*}" "${size#*:}")
	events=$(cat "$dir/ok")
	for f in v7-zstd.dat gprobe.dat; do
		mb=$(($(stat -c %s "$dir/$f") / 1048576))
		set -- $(best trace-cmd report -i "$dir/$f" -- \
			"$tmp/gprobe" analyze --refcount $spec "$dir/$f" -- \
			"$tmp/gprobe" analyze --json --refcount $spec "$dir/$f")
		tw=$1 tc=$2 tm=$3
		gw=$(nz $4) gc=$(nz $5) gm=$6
		jw=$(nz $7) jc=$(nz $8) jm=$9
		jb=$("$tmp/gprobe" analyze --json --refcount $spec "$dir/$f" | wc -c)
		jkb=$((jb / 1024))
		printf '%8d %8s %-6s %5d | %6.2f %6.2f %8d | %6.3f %6.3f %8d | %6.3f %6.3f %8d %6d | %5s %5s %5s\n' \
			"$events" "${size#*:}" "${f%%.dat}" "$mb" "$tw" "$tc" "$tm" "$gw" "$gc" "$gm" "$jw" "$jc" "$jm" "$jkb" \
			"$(ratio "$tw" "$gw" "$tw" "$jw")" "$(ratio "$tc" "$gc" "$tc" "$jc")" "$(ratio "$tm" "$gm" "$tm" "$jm")"
	done
done

# A fleet: the first size's recording copied as 50 hosts' files into one
# directory, analysed in one run (one pass over the files, their identical
# event formats inflated once) against trace-cmd printing each file. Only
# for a first size of up to 100k events: fifty copies of a larger one
# would take trace-cmd most of an hour.
fleet=50
dir=$(recording "${first%:*}" "${first#*:}")
events=$(cat "$dir/ok")
if [ "$events" -gt 100000 ]; then
	echo "fleet: skipped (the first size has $events events, over 100000)"
	exit 0
fi
mkdir -p "$tmp/fleet"
for f in v7-zstd.dat gprobe.dat; do
	rm -f "$tmp/fleet"/*
	for i in $(seq $fleet); do cp "$dir/$f" "$tmp/fleet/host$i.dat"; done
	set -- $(best sh -c 'for f in "$1"/*.dat; do trace-cmd report -i "$f"; done' sh "$tmp/fleet" -- \
		"$tmp/gprobe" analyze --refcount $spec "$tmp/fleet")
	printf 'fleet: %d files of %d events (%s), trace-cmd report on each %.2f s, gprobe analyze DIR %.3f s: %s\n' \
		$fleet "$events" "${f%%.dat}" "$1" "$4" "$(ratio "$1" "$(nz "$4")")"
done
