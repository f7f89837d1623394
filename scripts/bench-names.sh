#!/usr/bin/env bash
# bench-names.sh measures gprobe against perf probe on the symbols of C++
# libraries, side by side in one run: -F (every symbol demangled, then
# filtered and sorted) on Debian's libstdc++ (6969 symbols) and libjvm
# (58110, openjdk-17-jre-headless), with perf's default filter and with
# '*', and probes by C++ names (from the symbol table with %return).
# gprobe keeps a DSO's demangled listing in its index cache: the runs
# after the first demangle nothing. Each command is a fresh process, page
# cache warm, run REPEAT times, the tools taking turns; it prints the
# median wall time and the largest peak RSS of each, and the ratios
# gprobe/perf (below 1.00 means gprobe is faster or smaller; the goal is
# at most 0.50 for time and 1.00 for memory).
#
#   scripts/bench-names.sh [REPEAT]     (default 7)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${1:-7}
STDCXX=/usr/lib/x86_64-linux-gnu/libstdc++.so.6
JVM=/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
scripts/build.sh "$TMP/gprobe"
export PAGER=cat PERF_PAGER=cat

cases=(
	"$STDCXX|-F"
	"$STDCXX|-F|*"
	"$JVM|-F"
	"$JVM|-F|*"
	"$STDCXX|-D|ev=std\\:\\:terminate"
	"$STDCXX|-D|ev=std\\:\\:terminate%return"
	"$JVM|-D|ev=JVM_GC%return"
	"$JVM|-D|ev=os\\:\\:malloc%return"
)

# run TOOL ARGS...: one timed run, "seconds max_rss_kb" (the time from
# bash's microsecond clock: time's %e has 10 ms steps).
run() {
	local t0=$EPOCHREALTIME
	/usr/bin/time -o "$TMP/t" -f "%M" "$@" >/dev/null 2>&1 || true
	local t1=$EPOCHREALTIME
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", b-a}') $(tail -n 1 "$TMP/t")"
}

echo "$(date -u +%F), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
printf "%-44s %8s %8s %6s   %8s %8s %6s\n" case "perf s" "gprobe s" ratio "perf MiB" "gprobe MiB" ratio
worst_t=0 worst_m=0
for c in "${cases[@]}"; do
	IFS='|' read -ra f <<<"$c"
	lib=${f[0]}
	[ -r "$lib" ] || { echo "skipping $lib: not installed (scripts/provision.sh)"; continue; }
	args=("${f[@]:1}")
	pt=() gt=() pm=0 gm=0
	for i in $(seq "$REPEAT"); do
		# Take turns, each round starting with the other tool.
		if [ $((i % 2)) = 0 ]; then order=(p g); else order=(g p); fi
		for who in "${order[@]}"; do
			if [ "$who" = p ]; then
				read -r s m < <(run perf probe -x "$lib" "${args[@]}")
				pt+=("$s"); [ "$m" -gt "$pm" ] && pm=$m
			else
				read -r s m < <(run "$TMP/gprobe" -x "$lib" "${args[@]}")
				gt+=("$s"); [ "$m" -gt "$gm" ] && gm=$m
			fi
		done
	done
	med() { printf '%s\n' "$@" | sort -n | sed -n "$(( (${#@} + 1) / 2 ))p"; }
	p=$(med "${pt[@]}") g=$(med "${gt[@]}")
	tr=$(awk -v a="$g" -v b="$p" 'BEGIN{printf "%.2f", (b > 0) ? a/b : 0}')
	mr=$(awk -v a="$gm" -v b="$pm" 'BEGIN{printf "%.2f", a/b}')
	printf "%-44.44s %8s %8s %6s   %8.1f %8.1f %6s\n" "$(basename "$lib") ${args[*]}" "$p" "$g" "$tr" \
		"$(awk -v k="$pm" 'BEGIN{print k/1024}')" "$(awk -v k="$gm" 'BEGIN{print k/1024}')" "$mr"
	worst_t=$(awk -v a="$tr" -v b="$worst_t" 'BEGIN{print (a>b)?a:b}')
	worst_m=$(awk -v a="$mr" -v b="$worst_m" 'BEGIN{print (a>b)?a:b}')
done
echo "worst ratio gprobe/perf: time $worst_t, peak memory $worst_m"
