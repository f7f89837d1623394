#!/usr/bin/env bash
# bench.sh measures gprobe against perf probe on Debian's 6.1 vmlinux
# (590 MB, DWARF 5), side by side in one run: each command is a fresh
# process, page cache warm for both, repeated and reported as the median
# wall time and the largest peak RSS. gprobe's first column is a first run
# (an empty index cache, so it builds the index and, for compressed debug
# sections, inflates them into the cache); "repeat" is the same command
# again with that index warm. It prints the ratios gprobe/perf (below 1.00
# means gprobe is faster or smaller).
#
#   scripts/bench.sh [REPEAT]        (default 5)
#   COLD=1 scripts/bench.sh          drop the page cache before every first
#                                    run (root), so both read the vmlinux
#                                    from disk; repeats keep it warm
#   COMPRESSED=zlib scripts/bench.sh the vmlinux with its debug sections
#                                    compressed by objcopy
#                                    --compress-debug-sections=zlib (made
#                                    once, kept in $CACHE/test/compressed);
#                                    =zstd too, where perf 6.1 cannot read
#                                    the DWARF: its column is then perf on
#                                    the zlib copy
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
TMP=$(mktemp -d)
BIN=$TMP/gprobe
WARM=$TMP/warm # the index cache of the repeats
trap 'rm -rf "$TMP"' EXIT
scripts/build.sh "$BIN"
PERF_VMLINUX=$VMLINUX
if [ -n "${COMPRESSED:-}" ]; then
	compressed() {
		local out=$CACHE/test/compressed/vmlinux-$1
		if [ ! -f "$out" ]; then
			mkdir -p "$(dirname "$out")"
			objcopy --compress-debug-sections="$1" "$VMLINUX" "$out.tmp"
			mv "$out.tmp" "$out"
		fi
		echo "$out"
	}
	PERF_VMLINUX=$(compressed "$COMPRESSED")
	[ "$COMPRESSED" = zstd ] && PERF_VMLINUX=$(compressed zlib)
	VMLINUX=$(compressed "$COMPRESSED")
fi

specs=(
	"-D do_sys_openat2:16"
	"-D vfs_read"
	"-D vfs_read%return"
	"-D try_to_wake_up:20"
	"-D try_to_wake_up%return"
	"-D|vfs_read file->f_pos count"
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

# measure CMD... prints "median_seconds max_rss_kb". With FRESH=1 every run
# gets an empty index cache; otherwise runs share $WARM. Wall time is taken
# around /usr/bin/time (which reports only hundredths) with bash's
# microsecond clock, so a run of tens of milliseconds is told apart.
measure() {
	local times=() rss=0 out tf xdg t0 t1
	tf=$(mktemp)
	for _ in $(seq "$REPEAT"); do
		xdg=$WARM
		if [ "${FRESH:-0}" = 1 ]; then
			xdg=$(mktemp -d -p "$TMP")
			if [ "${COLD:-0}" = 1 ]; then sync; echo 3 > /proc/sys/vm/drop_caches; fi
		fi
		t0=$EPOCHREALTIME
		XDG_CACHE_HOME=$xdg /usr/bin/time -o "$tf" -f "%M" "$@" >/dev/null 2>&1 || true
		t1=$EPOCHREALTIME
		[ "$xdg" != "$WARM" ] && rm -rf "$xdg"
		out=$(tail -n 1 "$tf")
		times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')")
		[ "$out" -gt "$rss" ] && rss=$out
	done
	rm -f "$tf"
	printf '%s %s\n' "$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (REPEAT + 1) / 2 ))p")" "$rss"
}

W=40; [ "${MODULES:-0}" = 1 ] && W=48
echo "vmlinux: $VMLINUX${COMPRESSED:+ (perf reads $PERF_VMLINUX)}; $(date -u +%F), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
printf "%-${W}s %9s %9s %7s   %9s %9s %7s   %9s\n" spec "perf s" "gprobe s" ratio "perf MiB" "gprobe MiB" ratio "repeat s"
worst_t=0 worst_m=0 worst_r=0
for s in "${specs[@]}"; do
	# ONLY=REGEX limits the run to matching specs.
	[[ -n ${ONLY:-} && ! $s =~ $ONLY ]] && continue
	target=(-k "$VMLINUX") ptarget=(-k "$PERF_VMLINUX")
	case "$s" in -m*) target=() ptarget=() ;; esac
	# "OPT SPEC" splits on spaces; "OPT|SPEC WITH ARGS" keeps SPEC whole.
	if [[ $s == *"|"* ]]; then args=("${s%%|*}" "${s#*|}"); else read -ra args <<<"$s"; fi
	read -r pt pm < <(FRESH=1 measure perf probe "${ptarget[@]}" -s "$KSRC" "${args[@]}")
	read -r gt gm < <(FRESH=1 measure "$BIN" "${target[@]}" -s "$KSRC" "${args[@]}")
	XDG_CACHE_HOME=$WARM "$BIN" "${target[@]}" -s "$KSRC" "${args[@]}" >/dev/null 2>&1 || true
	read -r rt _ < <(measure "$BIN" "${target[@]}" -s "$KSRC" "${args[@]}")
	tr=$(awk -v a="$gt" -v b="$pt" 'BEGIN{printf "%.2f", a/b}')
	mr=$(awk -v a="$gm" -v b="$pm" 'BEGIN{printf "%.2f", a/b}')
	printf "%-${W}.${W}s %9s %9s %7s   %9.0f %9.0f %7s   %9s\n" "${s/-m $MODS\//}" "$pt" "$gt" "$tr" "$(awk -v k="$pm" 'BEGIN{print k/1024}')" "$(awk -v k="$gm" 'BEGIN{print k/1024}')" "$mr" "$rt"
	worst_t=$(awk -v a="$tr" -v b="$worst_t" 'BEGIN{print (a>b)?a:b}')
	worst_m=$(awk -v a="$mr" -v b="$worst_m" 'BEGIN{print (a>b)?a:b}')
	worst_r=$(awk -v a="$rt" -v b="$worst_r" 'BEGIN{print (a>b)?a:b}')
done
echo "worst ratio gprobe/perf: time $worst_t, peak memory $worst_m; slowest repeat with the index: $worst_r s"
