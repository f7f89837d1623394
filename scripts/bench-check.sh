#!/usr/bin/env bash
# bench-check.sh times `gprobe check` on a probe list against Debian's 6.1
# and 6.12 -dbg vmlinux files (one process opens both, resolves every point
# on each) against what perf probe needs for the same answers: one
# `perf probe -k KERNEL -D SPEC` per point and kernel. One run of each,
# page cache warm (the images are read once first); /usr/bin/time gives
# the wall time and peak memory. Prints the ratio gprobe/perf (below 1.00
# means gprobe is faster). A measurement to read, never an assertion.
#
#   scripts/bench-check.sh
#
# Needs scripts/provision.sh to have run (perf and both kernels).
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${GPROBE_CACHE:-/var/cache/gprobe}
KERNELS=("$CACHE/6.1.0-56-cloud-amd64/vmlinux" "$CACHE/6.12.117+deb12-cloud-amd64/vmlinux")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
BIN=$TMP/gprobe
scripts/build.sh "$BIN"

cat > "$TMP/probes" <<'LIST'
vfs_read
vfs_read file->f_pos count
tcp_sendmsg sk->sk_sndbuf size
do_sys_openat2%return $retval
do_sys_openat2:22
vfs_read file->f_version
dev_queue_xmit skb->len
check_conflicting_open
kmem_cache_alloc_noprof s->size
kmem_cache_alloc s->size
tcp_sendmsg_locked:30 size
__alloc_pages_noprof gfp order
getname_flags:20
nosuch_function
LIST
mapfile -t specs < <(grep -v '^#' "$TMP/probes")

# Warm the page cache: the first reader would otherwise pay for the disk.
cat "${KERNELS[@]}" >/dev/null

# measure OUT CMD... runs CMD once and appends "T SECONDS PEAK_KIB" to OUT
# (time also writes a line there when CMD fails, as some points do).
measure() {
	local out=$1
	shift
	/usr/bin/time -a -o "$out" -f "T %e %M" "$@" >/dev/null 2>&1 || true
}

: >"$TMP/gprobe.time"
measure "$TMP/gprobe.time" "$BIN" check --probes "$TMP/probes" "${KERNELS[@]}"
: >"$TMP/perf.time"
for k in "${KERNELS[@]}"; do
	for s in "${specs[@]}"; do
		measure "$TMP/perf.time" perf probe -k "$k" -D "$s"
	done
done
read -r _ g gmem < <(grep '^T ' "$TMP/gprobe.time")
p=$(awk '$1 == "T" { s += $2 } END { printf "%.2f", s }' "$TMP/perf.time")
pmem=$(awk '$1 == "T" && $3 > m { m = $3 } END { print m }' "$TMP/perf.time")
n=$(( ${#specs[@]} * ${#KERNELS[@]} ))
printf "%d points x %d kernels = %d cells\n" "${#specs[@]}" "${#KERNELS[@]}" "$n"
printf "perf probe -D, one run per cell  %8.2f s   (peak %d MiB per run)\n" "$p" "$(( pmem / 1024 ))"
printf "gprobe check, one run            %8.2f s   (peak %d MiB)\n" "$g" "$(( gmem / 1024 ))"
awk -v g="$g" -v p="$p" 'BEGIN { printf "ratio gprobe/perf                %8.2f\n", g / p }'
