#!/bin/sh
# without-kvm.sh: run a command on this machine as if it had no /dev/kvm.
#
#   scripts/without-kvm.sh CMD [ARGS...]     # e.g. scripts/without-kvm.sh ./scripts/test.sh
#
# The test suite must pass on machines whose /dev/kvm opens but cannot run
# a guest (the qemu harness then falls back to TCG) and on machines without
# it. This gives the second kind from the first: CMD runs in a private
# mount namespace whose /dev is a copy of this one's without kvm (every
# other entry bind-mounted from the real /dev). Nothing outside changes.
# Needs root (unshare -m).
set -eu
[ $# -gt 0 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }
exec unshare -m --propagation private sh -eu -c '
	new=$(mktemp -d)
	mount -t tmpfs -o mode=755 gprobe-dev "$new"
	for e in /dev/* /dev/.[!.]*; do
		[ -e "$e" ] || [ -L "$e" ] || continue
		name=${e#/dev/}
		[ "$name" = kvm ] && continue
		if [ -L "$e" ]; then
			cp -P "$e" "$new/$name"
		elif [ -d "$e" ]; then
			mkdir "$new/$name" && mount --rbind "$e" "$new/$name"
		else
			: > "$new/$name" && mount --bind "$e" "$new/$name"
		fi
	done
	mount --move "$new" /dev
	[ ! -e /dev/kvm ] || { echo "without-kvm: /dev/kvm still there" >&2; exit 1; }
	exec "$@"
' without-kvm "$@"
