#!/usr/bin/env bash
# test.sh runs gprobe's whole test suite: unit tests, fuzz seed corpora,
# the differential tests against perf probe on the fixtures, on
# test-compiled programs and on Debian's real kernels, the real uprobe,
# record and analyze tests on this machine, and the kprobe tests in the
# qemu guests. It first installs what the suite needs (scripts/provision.sh).
#
# perf's answers, test-compiled programs and the gprobe binary are cached
# under $GPROBE_CACHE/test (internal/testenv), keyed by their inputs, so a
# second run only pays for what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/provision.sh

# A fresh machine starts with tracefs unmounted; the tests mount it too
# (internal/testenv), this only makes the state plain from the start.
if [ "$(id -u)" = 0 ] && ! mountpoint -q /sys/kernel/tracing; then
	mount -t tracefs nodev /sys/kernel/tracing
fi

export GPROBE_REQUIRE_PERF=1
export GPROBE_REQUIRE_VMLINUX=1
export GPROBE_VMLINUX=${GPROBE_VMLINUX:-${GPROBE_CACHE:-/var/cache/gprobe}/6.1.0-56-cloud-amd64/vmlinux}
export GPROBE_KSRC=${GPROBE_KSRC:-${GPROBE_CACHE:-/var/cache/gprobe}/6.1.0-56-cloud-amd64/src}

start=$(date +%s)
go vet ./...
go test -count=1 -timeout 45m ./...
echo "test.sh: whole suite in $(( $(date +%s) - start )) s"
