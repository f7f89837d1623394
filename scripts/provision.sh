#!/usr/bin/env bash
# provision.sh installs everything gprobe's tests need on a Debian 12 machine
# and caches the real Debian kernel artifacts outside the repository.
#
#   scripts/provision.sh            # packages + kernel artifacts
#   scripts/provision.sh packages   # Debian packages only
#   scripts/provision.sh kernel     # kernel artifacts (and modules) only
#   scripts/provision.sh modules    # the module (.ko) subset only
#
# Cache: $GPROBE_CACHE (default /var/cache/gprobe). It holds the extracted
# vmlinux (DWARF 5, ~590 MB), vmlinuz, the config and a source subset, and
# the virtio modules the qemu guest (emit/qemu) loads to hand files back.
set -euo pipefail

KVER=6.1.0-56-cloud-amd64
CACHE=${GPROBE_CACHE:-/var/cache/gprobe}
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

packages() {
	local want=(linux-perf trace-cmd qemu-system-x86 busybox-static
		gcc-aarch64-linux-gnu libc6-dev-arm64-cross binutils-aarch64-linux-gnu
		dwarves cpio xz-utils zstd file kmod time bc
		gcc libc6-dev)
	local missing=()
	for p in "${want[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "provision: installing ${missing[*]}" >&2
		$SUDO apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
}

kernel() {
	mkdir -p "$CACHE/debs" "$CACHE/$KVER"
	local out="$CACHE/$KVER"
	if [ ! -s "$out/vmlinux" ] || [ ! -s "$out/vmlinuz" ] || [ ! -d "$out/src" ] || [ ! -d "$out/virtio" ]; then
		( cd "$CACHE/debs"
		  for p in "linux-image-$KVER-dbg" "linux-image-$KVER" linux-source-6.1; do
			ls "$p"_*.deb >/dev/null 2>&1 || { $SUDO apt-get update -qq; apt-get download -qq "$p"; }
		  done )
	fi
	# The -dbg vmlinux must describe the very vmlinuz the qemu guest boots.
	local vi vd
	vi=$(dpkg-deb -f "$CACHE"/debs/linux-image-"$KVER"_*.deb Version)
	vd=$(dpkg-deb -f "$CACHE"/debs/linux-image-"$KVER"-dbg_*.deb Version)
	if [ "$vi" != "$vd" ]; then
		echo "provision: linux-image-$KVER is $vi but its -dbg is $vd; remove $CACHE/debs and $CACHE/$KVER and run again" >&2
		exit 1
	fi
	if [ ! -s "$out/vmlinux" ]; then
		echo "provision: extracting vmlinux" >&2
		dpkg-deb --fsys-tarfile "$CACHE"/debs/linux-image-"$KVER"-dbg_*.deb |
			tar -xO "./usr/lib/debug/boot/vmlinux-$KVER" > "$out/vmlinux.tmp"
		mv "$out/vmlinux.tmp" "$out/vmlinux"
	fi
	if [ ! -s "$out/vmlinuz" ]; then
		dpkg-deb --fsys-tarfile "$CACHE"/debs/linux-image-"$KVER"_*.deb |
			tar -xO "./boot/vmlinuz-$KVER" > "$out/vmlinuz.tmp"
		mv "$out/vmlinuz.tmp" "$out/vmlinuz"
	fi
	if [ ! -d "$out/virtio" ]; then
		rm -rf "$out/virtio.tmp" && mkdir -p "$out/virtio.tmp"
		local m=./lib/modules/$KVER/kernel/drivers
		dpkg-deb --fsys-tarfile "$CACHE"/debs/linux-image-"$KVER"_*.deb |
			tar -x -C "$out/virtio.tmp" --strip-components=7 \
				$m/virtio/virtio_ring.ko $m/virtio/virtio.ko $m/virtio/virtio_pci_legacy_dev.ko \
				$m/virtio/virtio_pci_modern_dev.ko $m/virtio/virtio_pci.ko $m/block/virtio_blk.ko
		mv "$out/virtio.tmp" "$out/virtio"
	fi
	if [ ! -d "$out/src" ]; then
		echo "provision: extracting kernel source subset" >&2
		rm -rf "$out/src.tmp" && mkdir -p "$out/src.tmp"
		dpkg-deb --fsys-tarfile "$CACHE"/debs/linux-source-6.1_*.deb |
			tar -xO ./usr/src/linux-source-6.1.tar.xz |
			tar -xJ -C "$out/src.tmp" --strip-components=1 \
				linux-source-6.1/fs linux-source-6.1/include linux-source-6.1/kernel \
				linux-source-6.1/mm linux-source-6.1/net/ipv4 linux-source-6.1/net/core \
				linux-source-6.1/arch/x86/include linux-source-6.1/lib
		mv "$out/src.tmp" "$out/src"
	fi
}

# modules extracts, for the module (-m) tests, a few debug .ko files of
# varied size (block driver, filesystem, netfilter, a large filesystem) from
# the -dbg deb, and the bootable image's whole modules tree (stripped .ko
# files, symbols only: what a target machine or the qemu guest has).
MODULES_DBG=(drivers/block/loop.ko fs/isofs/isofs.ko net/netfilter/nf_conntrack.ko fs/xfs/xfs.ko)
modules() {
	local out="$CACHE/$KVER/modules"
	local dbg="$out/debug" img="$out/lib/modules/$KVER"
	local want=()
	for m in "${MODULES_DBG[@]}"; do
		[ -s "$dbg/$m" ] || want+=("./usr/lib/debug/lib/modules/$KVER/kernel/$m")
	done
	if [ ${#want[@]} -gt 0 ]; then
		echo "provision: extracting debug modules" >&2
		rm -rf "$out/dbg.tmp" && mkdir -p "$out/dbg.tmp"
		dpkg-deb --fsys-tarfile "$CACHE"/debs/linux-image-"$KVER"-dbg_*.deb |
			tar -x -C "$out/dbg.tmp" "${want[@]}"
		mkdir -p "$dbg"
		( cd "$out/dbg.tmp/usr/lib/debug/lib/modules/$KVER/kernel" && find . -name '*.ko' | while read -r f; do
			mkdir -p "$dbg/$(dirname "$f")" && mv "$f" "$dbg/$f"; done )
		rm -rf "$out/dbg.tmp"
	fi
	if [ ! -s "$img/modules.order" ]; then
		echo "provision: extracting the image's modules tree" >&2
		rm -rf "$out/img.tmp" && mkdir -p "$out/img.tmp"
		dpkg-deb --fsys-tarfile "$CACHE"/debs/linux-image-"$KVER"_*.deb |
			tar -x -C "$out/img.tmp" "./lib/modules/$KVER"
		mkdir -p "$out/lib/modules"
		rm -rf "$img" && mv "$out/img.tmp/lib/modules/$KVER" "$img"
		rm -rf "$out/img.tmp"
	fi
	# Sources of the debug modules outside the kernel source subset, for -L.
	if [ ! -d "$CACHE/$KVER/src/drivers/block" ] || [ ! -d "$CACHE/$KVER/src/net/netfilter" ]; then
		echo "provision: extracting module sources" >&2
		rm -rf "$out/src.tmp" && mkdir -p "$out/src.tmp"
		dpkg-deb --fsys-tarfile "$CACHE"/debs/linux-source-6.1_*.deb |
			tar -xO ./usr/src/linux-source-6.1.tar.xz |
			tar -xJ -C "$out/src.tmp" --strip-components=1 \
				linux-source-6.1/drivers/block linux-source-6.1/net/netfilter linux-source-6.1/fs/xfs \
				linux-source-6.1/fs/isofs
		mkdir -p "$CACHE/$KVER/src/drivers" "$CACHE/$KVER/src/net" "$CACHE/$KVER/src/fs"
		for d in drivers/block net/netfilter fs/xfs fs/isofs; do
			[ -d "$CACHE/$KVER/src/$d" ] || mv "$out/src.tmp/$d" "$CACHE/$KVER/src/$d"
		done
		rm -rf "$out/src.tmp"
	fi
	# modules.dep is made at install time; gprobe -m NAME reads it.
	if [ ! -s "$img/modules.dep" ] && command -v depmod >/dev/null; then
		depmod -b "$out" "$KVER"
	fi
}

case "${1:-all}" in
	packages) packages ;;
	kernel) kernel; modules ;;
	modules) modules ;;
	all) packages; kernel; modules ;;
	*) echo "usage: $0 [packages|kernel|modules|all]" >&2; exit 2 ;;
esac
