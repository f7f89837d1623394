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
# hashing what the result depends on: the source package's bytes, the
# configuration fragment, this script's commands (its comments aside) and
# the versions of the compiler, assembler and linker. $CACHE/RELEASE links
# to the current one. It holds vmlinuz (bzImage), vmlinux (its symbols and
# build-id; no debug information), config, bootconfig (the tool),
# virtio/order (empty: virtio is built in), src (the documents the tests
# cite) and build-seconds (wall and CPU seconds, per step).
#
# The build happens in a temporary directory and is renamed into place
# whole, the link replaced by a rename: a machine never sees a half-built
# kernel, and a failed or interrupted build leaves nothing but its log
# ($CACHE/built/RELEASE-KEY.failed.log). Two runs at once build it once
# (a lock).
set -euo pipefail

CACHE=${GPROBE_CACHE:-/var/cache/gprobe}
HERE=$(cd "$(dirname "$0")" && pwd)
FRAGMENT=$HERE/kernel/gprobe.config
LOCALVERSION=-gprobe
JOBS=${GPROBE_KERNEL_JOBS:-$(nproc)}

fail() {
	echo "build-kernel: $*" >&2
	exit 1
}

srcdeb=$(ls "$CACHE"/debs/linux-source-6.12_*.deb 2>/dev/null | head -n 1) || true
[ -n "$srcdeb" ] || fail "no linux-source-6.12 package in $CACHE/debs (run scripts/provision.sh kernel)"
srcver=$(dpkg-deb -f "$srcdeb" Version) || fail "$srcdeb is not a Debian package"
for tool in make gcc ld flex bison bc; do
	command -v "$tool" >/dev/null || fail "$tool is missing (run scripts/provision.sh packages)"
done
key=$( {
	sha256sum < "$srcdeb"
	cat "$FRAGMENT"
	grep -v '^[[:space:]]*#' "$0"
	gcc --version | head -n 1
	as --version | head -n 1
	ld --version | head -n 1
} | sha256sum | cut -c1-12)
# The upstream version the package carries: 6.12.117-1~deb12u1 -> 6.12.117.
release=${srcver%%-*}$LOCALVERSION
out=$CACHE/built/$release-$key
link=$CACHE/$release

# use points $link at $out, atomically (a rename over the old link).
use() {
	[ "$(readlink "$link" 2>/dev/null)" = "$out" ] && return
	ln -sfn "$out" "$link.tmp.$$"
	mv -T "$link.tmp.$$" "$link"
}

mkdir -p "$CACHE/built"
exec 9> "$CACHE/built/.lock"
flock 9
if [ -e "$out/done" ]; then
	use
	exit 0
fi
SECONDS=0

echo "build-kernel: building $release ($key) from linux-source-6.12 $srcver with $JOBS jobs" >&2
tmp=$(mktemp -d "$CACHE/built/.build-XXXXXX")
log=$tmp/build.log
failed=$CACHE/built/$release-$key.failed.log
trap 'rm -rf "$tmp"' EXIT
rm -f "$failed"

# step NAME CMD... runs one step of the build, its output in the log; a
# failure names the step and shows the log's end, kept in $failed.
secs=()
step() {
	local name=$1 t0=$SECONDS
	shift
	echo "== $name: $*" >> "$log"
	if ! "$@" >> "$log" 2>&1; then
		cp "$log" "$failed"
		echo "build-kernel: $name failed; the end of its log (all of it in $failed):" >&2
		tail -n 40 "$log" >&2
		exit 1
	fi
	secs+=("$name $((SECONDS - t0))")
}

unpack() {
	# dpkg-deb ends with a broken pipe once tar has the one member it wants.
	{ dpkg-deb --fsys-tarfile "$srcdeb" 2>/dev/null || true; } |
		tar -xO --occurrence=1 ./usr/src/linux-source-6.12.tar.xz |
		tar -xJ -C "$tmp/src" --strip-components=1
}

# check_config checks that every option of the fragment survived Kconfig's
# dependencies (an option Kconfig drops would otherwise go unnoticed).
check_config() {
	local bad=0 line opt val
	while IFS= read -r line; do
		case "$line" in '' | '#'*) continue ;; esac
		opt=${line%%=*} val=${line#*=}
		if [ "$val" = n ]; then
			grep -qx "$opt=.*" .config && { echo "$opt is set, want it off"; bad=1; }
		else
			grep -qx "$line" .config || { echo "$line did not survive: $(grep -E "^(# )?$opt[= ]" .config || echo absent)"; bad=1; }
		fi
	done < "$FRAGMENT"
	return $bad
}

configure() {
	"${mk[@]}" tinyconfig &&
		grep -v '^#' "$FRAGMENT" | grep . >> .config &&
		"${mk[@]}" olddefconfig &&
		check_config
}

mkdir "$tmp/src"
step unpack unpack
cd "$tmp/src"
# A fixed build date (the epoch): the same bytes every time.
mk=(make -s ARCH=x86_64 LOCALVERSION="$LOCALVERSION" KBUILD_BUILD_USER=gprobe KBUILD_BUILD_HOST=gprobe
	KBUILD_BUILD_TIMESTAMP=@0)
step configure configure
step kernel "${mk[@]}" -j"$JOBS" bzImage
step bootconfig make -s -C tools/bootconfig bootconfig

o=$tmp/out
mkdir -p "$o/virtio" "$o/src/Documentation/admin-guide"
cp arch/x86/boot/bzImage "$o/vmlinuz"
cp vmlinux "$o/vmlinux"
cp .config "$o/config"
cp tools/bootconfig/bootconfig "$o/bootconfig"
: > "$o/virtio/order"
# The documents the tests and docs cite.
cp -r Documentation/trace "$o/src/Documentation/"
cp Documentation/admin-guide/bootconfig.rst "$o/src/Documentation/admin-guide/"
# times (a builtin, run in this shell): its second line is the children's.
times > "$tmp/times"
read -r cu cs < <(sed -n 2p "$tmp/times")
{
	echo "wall $SECONDS"
	echo "cpu $cu $cs" # user, system (this script's children)
	printf '%s\n' "${secs[@]}"
} > "$o/build-seconds"
touch "$o/done"
cd /
# $out exists only if an older version of this script left it unfinished.
rm -rf "$out"
mv -T "$o" "$out"
use
# Older builds of the same release go.
for d in "$CACHE"/built/"$release"-*; do
	[ "$d" = "$out" ] || [ "$d" = "$failed" ] || rm -rf "$d"
done
echo "build-kernel: $release built in ${SECONDS} s (CPU: user $cu, system $cs): $link" >&2
