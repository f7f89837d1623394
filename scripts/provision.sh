#!/usr/bin/env bash
# provision.sh installs everything gprobe's tests need on a Debian 12 machine
# and caches the real Debian kernel artifacts outside the repository.
#
#   scripts/provision.sh            # packages + kernel artifacts
#   scripts/provision.sh packages   # Debian packages only
#   scripts/provision.sh kernel     # kernel artifacts only
#
# Cache: $GPROBE_CACHE (default /var/cache/gprobe). It holds the extracted
# vmlinux (DWARF 5, ~590 MB), vmlinuz, the config and a source subset.
set -euo pipefail

KVER=6.1.0-56-cloud-amd64
CACHE=${GPROBE_CACHE:-/var/cache/gprobe}
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

packages() {
	local want=(linux-perf trace-cmd qemu-system-x86 busybox-static
		gcc-aarch64-linux-gnu libc6-dev-arm64-cross binutils-aarch64-linux-gnu
		dwarves cpio xz-utils zstd file
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
	if [ ! -s "$out/vmlinux" ] || [ ! -s "$out/vmlinuz" ] || [ ! -d "$out/src" ]; then
		( cd "$CACHE/debs"
		  for p in "linux-image-$KVER-dbg" "linux-image-$KVER" linux-source-6.1; do
			ls "$p"_*.deb >/dev/null 2>&1 || { $SUDO apt-get update -qq; apt-get download -qq "$p"; }
		  done )
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

case "${1:-all}" in
	packages) packages ;;
	kernel) kernel ;;
	all) packages; kernel ;;
	*) echo "usage: $0 [packages|kernel|all]" >&2; exit 2 ;;
esac
