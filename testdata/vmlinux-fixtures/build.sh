#!/usr/bin/env bash
# build.sh rebuilds the kernel-like "vmlinux" fixtures in this directory from
# src/. The output is deterministic for a given toolchain (see README.md for
# the versions the committed binaries were built with).
#
#   testdata/vmlinux-fixtures/build.sh            # every fixture
#   testdata/vmlinux-fixtures/build.sh x86_64-dwarf5-O2 arm64-dwarf5-O0   # some
#
# Needs gcc, gcc-aarch64-linux-gnu, binutils-aarch64-linux-gnu and dwarves
# (pahole, for .BTF), as installed by scripts/provision.sh.
#
# DWARF paths mimic Debian's vmlinux: every CU is named relative to the
# source root ("fs/open.c"), include dirs are relative ("include/linux"),
# and DW_AT_comp_dir is a relative directory that does not exist
# ("debian/build/build_amd64_none_fixture"), so perf needs -s src/ to find
# the sources. Assembler CUs keep absolute-looking paths under
# /build/reproducible-path/gprobe-fixtures, as in Debian's vmlinux.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$HERE/src

X86_CC=${X86_CC:-gcc}
ARM64_CC=${ARM64_CC:-aarch64-linux-gnu-gcc}
PAHOLE=${PAHOLE:-pahole}

ALL=(
	x86_64-dwarf5-O2
	x86_64-dwarf4-O2
	x86_64-dwarf5-O0
	x86_64-dwarf4-O0
	x86_64-dwarf5-O2-ibt
	x86_64-dwarf5-Os-fp
	arm64-dwarf5-O2
	arm64-dwarf4-O2
	arm64-dwarf5-O0
	arm64-dwarf5-O2-bti
)

# Link order, like the kernel's: head first.
C_FILES=(
	init/main.c
	kernel/sched/core.c
	kernel/fork.c
	kernel/exit.c
	kernel/panic.c
	mm/mmap.c
	fs/open.c
	fs/namei.c
	fs/read_write.c
	fs/exec.c
	lib/string.c
)

# Flags every C file gets, on both architectures.
COMMON_CFLAGS=(
	-std=gnu11 -ffreestanding -fno-builtin -nostdinc
	-fno-pic -fno-pie -fno-common -fno-strict-aliasing
	-fno-asynchronous-unwind-tables -fno-unwind-tables
	-fno-stack-protector -fno-stack-clash-protection -fno-jump-tables
	-fno-delete-null-pointer-checks
	-Wall -Wno-unused-function -Wno-unused-variable -Wno-unused-but-set-variable
)

X86_CFLAGS=(
	-m64 -mcmodel=kernel -mno-red-zone
	-mno-sse -mno-mmx -mno-sse2 -mno-3dnow -mno-avx
	-pg -mfentry -mrecord-mcount
)

ARM64_CFLAGS=(
	-mgeneral-regs-only -mabi=lp64
)

die() { echo "build.sh: $*" >&2; exit 1; }

build_one() {
	local name=$1
	local arch dwarf opt variant
	IFS=- read -r arch dwarf opt variant <<<"$name"
	[ -n "$arch" ] && [ -n "$dwarf" ] && [ -n "$opt" ] || die "bad fixture name $name"

	local cc debarch
	local -a cflags asflags
	case $arch in
	x86_64)
		cc=$X86_CC; debarch=amd64
		cflags=("${COMMON_CFLAGS[@]}" "${X86_CFLAGS[@]}")
		;;
	arm64)
		cc=$ARM64_CC; debarch=arm64
		cflags=("${COMMON_CFLAGS[@]}" "${ARM64_CFLAGS[@]}")
		;;
	*) die "unknown arch $arch" ;;
	esac

	case $dwarf in
	dwarf4) cflags+=(-g -gdwarf-4); asflags=(-g -gdwarf-4) ;;
	dwarf5) cflags+=(-g -gdwarf-5); asflags=(-g -gdwarf-5) ;;
	*) die "unknown dwarf version $dwarf" ;;
	esac

	case $opt in
	O0|O2|Os) cflags+=("-$opt") ;;
	*) die "unknown optimization level $opt" ;;
	esac

	case $arch-$variant in
	x86_64-) cflags+=(-fcf-protection=none) ;;
	x86_64-ibt) cflags+=(-fcf-protection=branch) ;;
	x86_64-fp) cflags+=(-fcf-protection=none -fno-omit-frame-pointer -fno-optimize-sibling-calls) ;;
	arm64-) cflags+=(-mbranch-protection=none) ;;
	arm64-bti) cflags+=(-mbranch-protection=standard -fpatchable-function-entry=2) ;;
	*) die "unknown variant $variant for $arch" ;;
	esac

	command -v "$cc" >/dev/null || die "$cc not found (apt-get install gcc-aarch64-linux-gnu?)"

	# Build in a scratch tree whose prefix the debug info never shows:
	# sources at $T/<path>, objects in $T/debian/build/build_<arch>_none_fixture.
	local T objdir compdir
	T=$TMPROOT/$name
	rm -rf "$T" && mkdir -p "$T"
	cp -r "$SRC/." "$T/"
	compdir=debian/build/build_${debarch}_none_fixture
	objdir=$T/$compdir
	mkdir -p "$objdir"

	local -a map=(-ffile-prefix-map="$T/=")
	local -a objs=()
	local f o
	(
		cd "$objdir"
		for f in "${C_FILES[@]}"; do
			o=${f%.c}.o
			mkdir -p "$(dirname "$o")"
			"$cc" "${cflags[@]}" "${map[@]}" -I"$T/include" -c "$T/$f" -o "$o"
		done
		local head
		case $arch in
		x86_64) head=arch/x86/kernel/head_64.S ;;
		arm64) head=arch/arm64/kernel/head.S ;;
		esac
		mkdir -p "$(dirname "$head")"
		"$cc" "${asflags[@]}" -D__ASSEMBLY__ -nostdinc \
			-Wa,--debug-prefix-map="$T=/build/reproducible-path/gprobe-fixtures" \
			-c "$T/$head" -o "${head%.S}.o"
		local lds=arch/${arch/x86_64/x86}/kernel/vmlinux.lds
		"$cc" -E -P -x c -nostdinc -undef -D__ASSEMBLY__ \
			"$T/${lds}.S" -o vmlinux.lds
		objs=("${head%.S}.o")
		for f in "${C_FILES[@]}"; do objs+=("${f%.c}.o"); done
		"$cc" -nostdlib -static -no-pie -Wl,--build-id=sha1 -Wl,-z,max-page-size=0x1000 -Wl,-z,noexecstack -Wl,-T,vmlinux.lds \
			-o vmlinux "${objs[@]}"
		"$PAHOLE" -J vmlinux >/dev/null
	)
	readelf -S "$objdir/vmlinux" | grep -q ' \.BTF ' || die "$name: pahole added no .BTF"
	cp "$objdir/vmlinux" "$HERE/$name.elf.tmp"
	mv "$HERE/$name.elf.tmp" "$HERE/$name.elf"
	rm -rf "$T"
	printf '  %-24s %8d bytes\n' "$name.elf" "$(stat -c %s "$HERE/$name.elf")"
}

TMPROOT=$(mktemp -d /tmp/gprobe-fixtures.XXXXXXXX)
trap 'rm -rf "$TMPROOT"' EXIT

echo "x86_64: $("$X86_CC" --version | head -1)"
if command -v "$ARM64_CC" >/dev/null; then
	echo "arm64:  $("$ARM64_CC" --version | head -1)"
fi
echo "ld:     $(ld --version | head -1)"
echo "pahole: $("$PAHOLE" --version)"
echo "perf:   $(perf version 2>/dev/null || echo none)"

if [ $# -eq 0 ]; then
	set -- "${ALL[@]}"
fi
for name in "$@"; do
	build_one "${name%.elf}"
done
