#!/usr/bin/env bash
# provision.sh installs everything gprobe's tests need on a Debian 12 machine
# and caches the real Debian kernel artifacts outside the repository.
#
#   scripts/provision.sh            # packages + kernel artifacts
#   scripts/provision.sh packages   # Debian packages only
#   scripts/provision.sh kernel     # kernel artifacts (and modules, arm64, the built kernel) only
#   scripts/provision.sh modules    # the module (.ko) subset only
#   scripts/provision.sh arm64      # the arm64 kernels and busybox only
#   scripts/provision.sh built      # the kernel built from source only
#   scripts/provision.sh debs       # the -dbg packages debuginfod serves in tests
#
# Cache: $GPROBE_CACHE (default /var/cache/gprobe). For each of the Debian
# kernels (6.1 and 6.12, x86-64 and arm64) it holds the extracted -dbg
# vmlinux (DWARF 5; 590 MB for 6.1), the bootable vmlinuz, its config, a
# source subset (x86-64), and the virtio modules the qemu guests
# (internal/qemu) load to hand files back; busybox-arm64/ holds
# the arm64 guests' busybox; 6.12.117-gprobe is the kernel
# scripts/build-kernel.sh builds from linux-source-6.12 (Extra Boot Config,
# boot-time tracing, user_events).
set -euo pipefail

# The two real kernels: Debian bookworm's 6.1 cloud kernel and its 6.12
# backport (fprobe, tracepoint and event probes, BTF arguments).
KVER=6.1.0-56-cloud-amd64
K612=6.12.117+deb12-cloud-amd64
K612_DEB=6.12.117-1~deb12u1
# The same two for arm64, booted under qemu-system-aarch64 -M virt.
KVER_ARM=6.1.0-56-cloud-arm64
K612_ARM=6.12.117+deb12-cloud-arm64
CACHE=${GPROBE_CACHE:-/var/cache/gprobe}
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

packages() {
	# qemu-system-arm: the arm64 guests; flex, bison, libelf-dev: building
	# the kernel (scripts/build-kernel.sh).
	local want=(linux-perf trace-cmd qemu-system-x86 qemu-system-arm busybox-static
		flex bison libelf-dev make
		gcc-aarch64-linux-gnu libc6-dev-arm64-cross binutils-aarch64-linux-gnu
		dwarves cpio xz-utils zstd file kmod time bc
		gcc libc6-dev clang
		debuginfod elfutils libarchive-tools
		# cgo links DuckDB's C++ library (analyze/parquet's tests, github.com/duckdb/duckdb-go);
		# the C++ test program of demangled names (cmd/gprobe/testdata/cxx)
		g++
		# SDT markers: <sys/sdt.h> for the test programs, and the shipped
		# binaries with markers (python3.11, libstdc++, libjvm.so); libjvm.so's
		# 58k C++ symbols are also the -F benchmark (scripts/bench-names.sh)
		systemtap-sdt-dev python3.11-minimal libstdc++6 openjdk-17-jre-headless
		# a shipped library with its detached debug file (weak aliases, PLT entries)
		libc6-dbg)
	# The Rust test program (cmd/gprobe/testdata/rust) needs a rustc: Debian's
	# unless one is on PATH already (rustup's).
	command -v rustc > /dev/null || want+=(rustc)
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

# fetch DEB... downloads the named packages (name[:arch] or
# name[:arch]=version) into $CACHE/debs unless a file of that package (and
# version, and architecture) is there.
fetch() {
	mkdir -p "$CACHE/debs"
	( cd "$CACHE/debs"
	  for spec in "$@"; do
		p=${spec%%=*} v= a='*'
		[ "$p" = "$spec" ] || v=${spec#*=}
		v=${v//:/%3a}
		case "$p" in *:*) a=${p#*:} p=${p%%:*} ;; esac
		# Unquoted: the version and architecture may be globs.
		ls ${p}_${v:-*}_${a}.deb >/dev/null 2>&1 || { $SUDO apt-get update -qq; apt-get download -qq "$spec"; }
	  done )
}

# deb NAME is the cached .deb of package NAME.
deb() { ls "$CACHE"/debs/"$1"_*.deb | head -n 1; }

# unpack DEB TAR-ARGS... runs tar on the files of package DEB with
# --occurrence=1: tar stops reading once it has every member it names (a
# -dbg package's vmlinux comes before its gigabytes of module debug
# information), so dpkg-deb's broken pipe then is no error; a member
# missing is tar's.
unpack() {
	local deb=$1
	shift
	{ dpkg-deb --fsys-tarfile "$deb" 2>/dev/null || true; } | tar --occurrence=1 "$@"
}

# kernel_artifacts REL IMAGE_PKG DBG_PKG SRC_PKG SRC_VER MODULES... extracts,
# under $CACHE/REL: the -dbg vmlinux, the bootable vmlinuz, its config, the
# virtio modules the qemu guest loads (decompressed; the file "virtio/order"
# lists them in load order) and a source subset (none when SRC_PKG is -).
kernel_artifacts() {
	local rel=$1 img=$2 dbg=$3 srcpkg=$4 srcver=$5
	shift 5
	local out="$CACHE/$rel"
	mkdir -p "$out"
	# The -dbg vmlinux must describe the very vmlinuz the qemu guest boots.
	local vi vd
	vi=$(dpkg-deb -f "$(deb "$img")" Version)
	vd=$(dpkg-deb -f "$(deb "$dbg")" Version)
	if [ "$vi" != "$vd" ]; then
		echo "provision: $img is $vi but $dbg is $vd; remove $CACHE/debs and $out and run again" >&2
		exit 1
	fi
	if [ ! -s "$out/vmlinux" ]; then
		echo "provision: extracting the $rel vmlinux" >&2
		unpack "$(deb "$dbg")" -xO "./usr/lib/debug/boot/vmlinux-$rel" > "$out/vmlinux.tmp"
		mv "$out/vmlinux.tmp" "$out/vmlinux"
	fi
	if [ ! -s "$out/vmlinuz" ] || [ ! -s "$out/config" ]; then
		unpack "$(deb "$img")" -xO "./boot/vmlinuz-$rel" > "$out/vmlinuz.tmp"
		unpack "$(deb "$img")" -xO "./boot/config-$rel" > "$out/config"
		mv "$out/vmlinuz.tmp" "$out/vmlinuz"
	fi
	if [ ! -s "$out/virtio/order" ]; then
		rm -rf "$out/virtio.tmp" && mkdir -p "$out/virtio.tmp"
		local m paths=()
		for m in "$@"; do paths+=("./lib/modules/$rel/kernel/$m"); done
		dpkg-deb --fsys-tarfile "$(deb "$img")" | tar -x -C "$out/virtio.tmp" --wildcards "${paths[@]/%/.ko*}"
		: > "$out/virtio.tmp/order"
		for m in "$@"; do
			local f name
			f=$(ls "$out/virtio.tmp/lib/modules/$rel/kernel/$m".ko* | head -n 1)
			name=$(basename "$m")
			case "$f" in
				*.xz) xz -dc "$f" > "$out/virtio.tmp/$name.ko" ;;
				*.zst) zstd -dcq "$f" > "$out/virtio.tmp/$name.ko" ;;
				*) cp "$f" "$out/virtio.tmp/$name.ko" ;;
			esac
			echo "$name" >> "$out/virtio.tmp/order"
		done
		rm -rf "$out/virtio.tmp/lib" "$out/virtio"
		mv "$out/virtio.tmp" "$out/virtio"
	fi
	if [ "$srcpkg" != - ] && [ ! -d "$out/src" ]; then
		echo "provision: extracting the $rel source subset" >&2
		rm -rf "$out/src.tmp" && mkdir -p "$out/src.tmp"
		local top="linux-source-$srcver"
		dpkg-deb --fsys-tarfile "$(deb "$srcpkg")" |
			tar -xO "./usr/src/$top.tar.xz" |
			tar -xJ -C "$out/src.tmp" --strip-components=1 \
				"$top/fs" "$top/include" "$top/kernel" "$top/mm" "$top/net/ipv4" "$top/net/core" \
				"$top/arch/x86/include" "$top/lib" "$top/Documentation/trace"
		mv "$out/src.tmp" "$out/src"
	fi
}

kernel() {
	fetch "linux-image-$KVER-dbg" "linux-image-$KVER" linux-source-6.1 \
		"linux-image-$K612-unsigned=$K612_DEB" "linux-image-$K612-dbg=$K612_DEB" "linux-source-6.12=$K612_DEB"
	kernel_artifacts "$KVER" "linux-image-$KVER" "linux-image-$KVER-dbg" linux-source-6.1 6.1 \
		drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_legacy_dev \
		drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci drivers/block/virtio_blk
	# 6.12 builds virtio and virtio_pci in; only the block driver is a module.
	kernel_artifacts "$K612" "linux-image-$K612-unsigned" "linux-image-$K612-dbg" linux-source-6.12 6.12 \
		drivers/block/virtio_blk
	arm64
	# gprobe's own kernel, built from the linux-source-6.12 fetched above.
	"$(dirname "$0")/build-kernel.sh"
}

# arm64 caches the arm64 guests' kernels and busybox. apt-get downloads
# foreign packages once dpkg knows the architecture; busybox-static:arm64
# is unpacked, never installed (that would remove the host's busybox the
# x86-64 guests use).
arm64() {
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		$SUDO dpkg --add-architecture arm64
		$SUDO apt-get update -qq
	fi
	fetch "linux-image-$KVER_ARM-unsigned:arm64" "linux-image-$KVER_ARM-dbg:arm64" busybox-static:arm64 \
		"linux-image-$K612_ARM-unsigned:arm64=$K612_DEB" "linux-image-$K612_ARM-dbg:arm64=$K612_DEB"
	# A -M virt guest has one UART: the script's channel is a virtio
	# console, so its modules are loaded at boot with the disk's.
	kernel_artifacts "$KVER_ARM" "linux-image-$KVER_ARM-unsigned" "linux-image-$KVER_ARM-dbg" - 6.1 \
		drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_legacy_dev \
		drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci drivers/char/virtio_console drivers/block/virtio_blk
	# 6.12 builds virtio, virtio_pci and the console in.
	kernel_artifacts "$K612_ARM" "linux-image-$K612_ARM-unsigned" "linux-image-$K612_ARM-dbg" - 6.12 \
		drivers/block/virtio_blk
	if [ ! -s "$CACHE/busybox-arm64/busybox" ]; then
		mkdir -p "$CACHE/busybox-arm64"
		unpack "$(ls "$CACHE"/debs/busybox-static_*_arm64.deb | head -n 1)" -xO ./bin/busybox > "$CACHE/busybox-arm64/busybox.tmp"
		chmod 755 "$CACHE/busybox-arm64/busybox.tmp"
		mv "$CACHE/busybox-arm64/busybox.tmp" "$CACHE/busybox-arm64/busybox"
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
		unpack "$(deb "linux-image-$KVER-dbg")" -x -C "$out/dbg.tmp" "${want[@]}"
		mkdir -p "$dbg"
		( cd "$out/dbg.tmp/usr/lib/debug/lib/modules/$KVER/kernel" && find . -name '*.ko' | while read -r f; do
			mkdir -p "$dbg/$(dirname "$f")" && mv "$f" "$dbg/$f"; done )
		rm -rf "$out/dbg.tmp"
	fi
	if [ ! -s "$img/modules.order" ]; then
		echo "provision: extracting the image's modules tree" >&2
		rm -rf "$out/img.tmp" && mkdir -p "$out/img.tmp"
		dpkg-deb --fsys-tarfile "$(deb "linux-image-$KVER")" |
			tar -x -C "$out/img.tmp" "./lib/modules/$KVER"
		mkdir -p "$out/lib/modules"
		rm -rf "$img" && mv "$out/img.tmp/lib/modules/$KVER" "$img"
		rm -rf "$out/img.tmp"
	fi
	# Sources of the debug modules outside the kernel source subset, for -L.
	if [ ! -d "$CACHE/$KVER/src/drivers/block" ] || [ ! -d "$CACHE/$KVER/src/net/netfilter" ]; then
		echo "provision: extracting module sources" >&2
		rm -rf "$out/src.tmp" && mkdir -p "$out/src.tmp"
		dpkg-deb --fsys-tarfile "$(deb linux-source-6.1)" |
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

# debs downloads the -dbg packages the debuginfod tests serve besides the
# kernel's: libc6-dbg of the installed libc6 (the same build-id).
debs() {
	fetch "libc6-dbg=$(dpkg-query -W -f='${Version}' libc6)"
}

case "${1:-all}" in
	packages) packages ;;
	kernel) kernel; modules ;;
	modules) modules ;;
	arm64) arm64 ;;
	built) "$(dirname "$0")/build-kernel.sh" ;;
	debs) debs ;;
	all) packages; kernel; modules; debs ;;
	*) echo "usage: $0 [packages|kernel|modules|arm64|built|debs|all]" >&2; exit 2 ;;
esac
