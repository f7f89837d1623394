#!/usr/bin/env bash
# bench.sh measures gprobe against perf probe on Debian's 6.1 vmlinux
# (590 MB, DWARF 5), side by side in one run: each command is a fresh
# process (a cold one-shot run), page cache warm for both, repeated and
# reported as the median wall time and the largest peak RSS. It prints the
# ratios gprobe/perf (below 1.00 means gprobe is faster or smaller).
#
#   scripts/bench.sh [REPEAT]        (default 5)
#   COLD=1 scripts/bench.sh          drop the page cache before every run
#                                    (root), so both read the vmlinux from disk
#   MODULES=1 scripts/bench.sh       kernel modules (-m) instead: Debian's
#                                    debug loop.ko, nf_conntrack.ko, xfs.ko
#
# Needs scripts/provision.sh to have run (perf, the vmlinux and source).
set -euo pipefail
cd "$(dirname "$0")/.."

REPEAT=${1:-5}
CACHE=${GPROBE_CACHE:-/var/cache/gprobe}
VMLINUX=${GPROBE_VMLINUX:-$CACHE/6.1.0-56-cloud-amd64/vmlinux}
KSRC=${GPROBE_KSRC:-$CACHE/6.1.0-56-cloud-amd64/src}
BIN=$(mktemp -d)/gprobe
trap 'rm -rf "$(dirname "$BIN")"' EXIT
go build -o "$BIN" ./cmd/gprobe

specs=(
	"-D do_sys_openat2:16"
	"-D vfs_read"
	"-D vfs_read%return"
	"-D build_open_how"
	"-D tcp_sendmsg:10"
	"-D getname_flags:20"
	"-D kmalloc"
	"-L do_sys_openat2"
	"-L vfs_read"
	"-L tcp_sendmsg"
	"-L build_open_how"
	"-D|vfs_read file->f_path.dentry->d_name.name:string count"
	'-D|do_sys_openat2:10 $vars'
	"-D|tcp_sendmsg sk->__sk_common.skc_dport size msg->msg_iter.count"
	"-V|vfs_read"
	"-V|do_sys_openat2:10"
	"-V|tcp_sendmsg:20"
)
MODS=$CACHE/6.1.0-56-cloud-amd64/modules/debug
if [ "${MODULES:-0}" = 1 ]; then
	specs=(
		"-m $MODS/drivers/block/loop.ko -D loop_configure"
		"-m $MODS/drivers/block/loop.ko -L lo_rw_aio"
		"-m $MODS/net/netfilter/nf_conntrack.ko -D nf_conntrack_in"
		"-m $MODS/net/netfilter/nf_conntrack.ko -D nf_conntrack_in:17"
		"-m $MODS/net/netfilter/nf_conntrack.ko -L nf_conntrack_in"
		"-m $MODS/fs/xfs/xfs.ko -D xfs_file_read_iter"
		"-m $MODS/fs/xfs/xfs.ko -D xfs_file_read_iter:6"
		"-m $MODS/fs/xfs/xfs.ko -D xfs_buf_read_map%return"
		"-m $MODS/fs/xfs/xfs.ko -L xfs_log_force"
		"-m $MODS/fs/xfs/xfs.ko -D xfs_file_*"
	)
fi

# measure CMD... prints "median_seconds max_rss_kb"
measure() {
	local times=() rss=0 out tf
	tf=$(mktemp)
	for _ in $(seq "$REPEAT"); do
		if [ "${COLD:-0}" = 1 ]; then sync; echo 3 > /proc/sys/vm/drop_caches; fi
		/usr/bin/time -o "$tf" -f "%e %M" "$@" >/dev/null 2>&1 || true
		out=$(tail -n 1 "$tf")
		times+=("${out% *}")
		[ "${out#* }" -gt "$rss" ] && rss=${out#* }
	done
	rm -f "$tf"
	printf '%s %s\n' "$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (REPEAT + 1) / 2 ))p")" "$rss"
}

W=40; [ "${MODULES:-0}" = 1 ] && W=48
printf "%-${W}s %9s %9s %7s   %9s %9s %7s\n" spec "perf s" "gprobe s" ratio "perf MiB" "gprobe MiB" ratio
worst_t=0 worst_m=0
for s in "${specs[@]}"; do
	# ONLY=REGEX limits the run to matching specs.
	[[ -n ${ONLY:-} && ! $s =~ $ONLY ]] && continue
	target=(-k "$VMLINUX")
	case "$s" in -m*) target=() ;; esac
	# "OPT SPEC" splits on spaces; "OPT|SPEC WITH ARGS" keeps SPEC whole.
	if [[ $s == *"|"* ]]; then args=("${s%%|*}" "${s#*|}"); else read -ra args <<<"$s"; fi
	read -r pt pm < <(measure perf probe "${target[@]}" -s "$KSRC" "${args[@]}")
	read -r gt gm < <(measure "$BIN" "${target[@]}" -s "$KSRC" "${args[@]}")
	rt=$(awk -v a="$gt" -v b="$pt" 'BEGIN{printf "%.2f", a/b}')
	rm=$(awk -v a="$gm" -v b="$pm" 'BEGIN{printf "%.2f", a/b}')
	printf "%-${W}.${W}s %9s %9s %7s   %9.0f %9.0f %7s\n" "${s/-m $MODS\//}" "$pt" "$gt" "$rt" "$(awk -v k="$pm" 'BEGIN{print k/1024}')" "$(awk -v k="$gm" 'BEGIN{print k/1024}')" "$rm"
	worst_t=$(awk -v a="$rt" -v b="$worst_t" 'BEGIN{print (a>b)?a:b}')
	worst_m=$(awk -v a="$rm" -v b="$worst_m" 'BEGIN{print (a>b)?a:b}')
done
echo "worst ratio gprobe/perf: time $worst_t, peak memory $worst_m"
