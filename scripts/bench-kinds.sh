#!/usr/bin/env bash
# bench-kinds.sh measures gprobe's resolution of fprobes (--fprobe) and
# tracepoint probes (--tracepoint) against its resolution of the kprobe on
# the same function and arguments, on Debian's 6.12 -dbg vmlinux, in one
# run: each command is a fresh process, page cache warm, the two of a pair
# run alternately, repeated and reported as the median wall time and the
# largest peak RSS. It prints the ratios new/kprobe (1.00 or below: the new
# kind resolves at least as fast).
#
#   scripts/bench-kinds.sh [REPEAT]        (default 7)
#
# A tracepoint's prototype is that of its stub function, so its kprobe
# twin probes __probestub_NAME. Needs scripts/provision.sh to have run.
set -euo pipefail
cd "$(dirname "$0")/.."

REPEAT=${1:-7}
CACHE=${GPROBE_CACHE:-/var/cache/gprobe}
VMLINUX=${GPROBE_VMLINUX612:-$CACHE/6.12.117+deb12-cloud-amd64/vmlinux}
BIN=$(mktemp -d)/gprobe
trap 'rm -rf "$(dirname "$BIN")"' EXIT
scripts/build.sh "$BIN"

# kprobe spec | new-kind flag | new-kind spec
pairs=(
	'vfs_read file->f_pos count|--fprobe|vfs_read file->f_pos count'
	'vfs_read%return $retval|--fprobe|vfs_read%return $retval'
	'do_sys_openat2 dfd filename:ustring how->flags|--fprobe|do_sys_openat2 dfd filename:ustring how->flags'
	'tcp_sendmsg sk->__sk_common.skc_dport size|--fprobe|tcp_sendmsg sk->__sk_common.skc_dport size'
	'__probestub_sched_process_exec p->comm:string bprm->filename:string|--tracepoint|sched_process_exec p->comm:string bprm->filename:string'
	'__probestub_kfree call_site ptr|--tracepoint|kfree call_site ptr'
)

# run ARGS... prints "seconds rss_kb"; the definition must resolve.
run() {
	local tf out
	tf=$(mktemp)
	/usr/bin/time -o "$tf" -f "%e %M" "$BIN" -k "$VMLINUX" "$@" >/dev/null
	out=$(tail -n 1 "$tf")
	rm -f "$tf"
	echo "$out"
}

median() { sort -n | sed -n "$(( (REPEAT + 1) / 2 ))p"; }

printf "%-58s %9s %9s %7s   %9s %9s\n" "spec" "kprobe s" "new s" ratio "kprobe MiB" "new MiB"
worst=0
for p in "${pairs[@]}"; do
	IFS='|' read -r kspec flag nspec <<<"$p"
	kt=() nt=() krss=0 nrss=0
	for _ in $(seq "$REPEAT"); do
		read -r t m <<<"$(run -D "$kspec")"; kt+=("$t"); [ "$m" -gt "$krss" ] && krss=$m
		read -r t m <<<"$(run "$flag" -D "$nspec")"; nt+=("$t"); [ "$m" -gt "$nrss" ] && nrss=$m
	done
	k=$(printf '%s\n' "${kt[@]}" | median)
	n=$(printf '%s\n' "${nt[@]}" | median)
	r=$(awk -v a="$n" -v b="$k" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
	worst=$(awk -v a="$r" -v b="$worst" 'BEGIN { print (a > b ? a : b) }')
	printf "%-58s %9s %9s %7s   %9d %9d\n" "$flag ${nspec:0:45}" "$k" "$n" "$r" $((krss / 1024)) $((nrss / 1024))
done
echo "worst ratio new kind / kprobe: time $worst"
