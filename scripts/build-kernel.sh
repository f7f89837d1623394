#!/usr/bin/env bash
# build-kernel.sh builds gprobe's own test kernel once and caches it beside
# the Debian kernels: Linux 6.12 from Debian's linux-source-6.12 with
# `make tinyconfig` plus scripts/kernel/gprobe.config (Extra Boot Config,
# boot-time tracing and user_events, which Debian's kernels lack), and the
# bootconfig tool from the same source (Debian has no package for it).
#
#   scripts/build-kernel.sh          # called by scripts/provision.sh kernel
#
# Cache: $GPROBE_CACHE (default /var/cache/gprobe)/built/RELEASE-KEY, KEY
# hashing the source package's version, the configuration fragment, REV
# (raise it when a change here changes what is built) and the compiler and
# pahole versions; $CACHE/RELEASE links to the current one. It holds vmlinuz (bzImage), vmlinux (DWARF 5 and .BTF),
# config, bootconfig (the tool), virtio/order (empty: virtio is built in)
# and build-seconds, the wall time the build took.
set -euo pipefail

CACHE=${GPROBE_CACHE:-/var/cache/gprobe}
HERE=$(cd "$(dirname "$0")" && pwd)
FRAGMENT=$HERE/kernel/gprobe.config
LOCALVERSION=-gprobe
REV=1
JOBS=${GPROBE_KERNEL_JOBS:-$(nproc)}

srcdeb=$(ls "$CACHE"/debs/linux-source-6.12_*.deb 2>/dev/null | head -n 1)
if [ -z "$srcdeb" ]; then
	echo "build-kernel: no linux-source-6.12 package in $CACHE/debs (run scripts/provision.sh kernel)" >&2
	exit 1
fi
srcver=$(dpkg-deb -f "$srcdeb" Version)
key=$( { echo "$srcver $REV"; cat "$FRAGMENT"; gcc --version | head -n 1; pahole --version; } | sha256sum | cut -c1-12)
# SUBLEVEL of the upstream version the package carries: 6.12.117-1~deb12u1 -> 6.12.117
release=${srcver%%-*}$LOCALVERSION
out=$CACHE/built/$release-$key
link=$CACHE/$release

if [ -e "$out/done" ]; then
	[ "$(readlink "$link" 2>/dev/null)" = "$out" ] || ln -sfn "$out" "$link"
	exit 0
fi

echo "build-kernel: building $release ($key) from linux-source-6.12 $srcver with $JOBS jobs" >&2
start=$(date +%s)
mkdir -p "$CACHE/built"
tmp=$(mktemp -d "$CACHE/built/.build-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dpkg-deb --fsys-tarfile "$srcdeb" | tar -xO ./usr/src/linux-source-6.12.tar.xz | tar -xJ -C "$tmp" --strip-components=1
cd "$tmp"
# A fixed build date (the epoch): the same bytes every time.
stamp=@0
mk=(make -s ARCH=x86_64 LOCALVERSION="$LOCALVERSION" KBUILD_BUILD_USER=gprobe KBUILD_BUILD_HOST=gprobe
	KBUILD_BUILD_TIMESTAMP="$stamp")
"${mk[@]}" tinyconfig >/dev/null
grep -v '^#' "$FRAGMENT" | grep . >> .config
"${mk[@]}" olddefconfig >/dev/null
# Every option of the fragment must have survived Kconfig's dependencies.
bad=0
while IFS= read -r line; do
	case "$line" in ''|'#'*) continue ;; esac
	opt=${line%%=*} val=${line#*=}
	if [ "$val" = n ]; then
		grep -qx "$opt=.*" .config && { echo "build-kernel: $opt is set, want it off" >&2; bad=1; }
	else
		grep -qx "$line" .config || { echo "build-kernel: $line did not survive: $(grep -E "^(# )?$opt[= ]" .config || echo absent)" >&2; bad=1; }
	fi
done < "$FRAGMENT"
[ $bad = 0 ] || exit 1
"${mk[@]}" -j"$JOBS" bzImage
kernel_done=$(date +%s)
make -s -C tools/bootconfig bootconfig >/dev/null
mkdir -p "$tmp/out/virtio" "$tmp/out/src/Documentation"
cp arch/x86/boot/bzImage "$tmp/out/vmlinuz"
cp vmlinux "$tmp/out/vmlinux"
cp .config "$tmp/out/config"
cp tools/bootconfig/bootconfig "$tmp/out/bootconfig"
: > "$tmp/out/virtio/order"
# The documents the tests and docs cite.
cp -r Documentation/trace "$tmp/out/src/Documentation/"
mkdir -p "$tmp/out/src/Documentation/admin-guide" && cp Documentation/admin-guide/bootconfig.rst "$tmp/out/src/Documentation/admin-guide/"
end=$(date +%s)
echo "$((end - start)) (kernel $((kernel_done - start)))" > "$tmp/out/build-seconds"
rm -rf "$out"
mv "$tmp/out" "$out"
touch "$out/done"
ln -sfn "$out" "$link"
# Older builds of the same release go.
for d in "$CACHE"/built/"$release"-*; do [ "$d" = "$out" ] || rm -rf "$d"; done
echo "build-kernel: $release built in $((end - start)) s: $link" >&2
