#!/usr/bin/env bash
# test.sh runs gprobe's whole test suite: unit tests, fuzz seed corpora,
# the differential tests against perf probe on the fixtures and on
# test-compiled programs, and the tests on Debian's real 6.1 vmlinux.
# It first installs what the suite needs (scripts/provision.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/provision.sh

export GPROBE_REQUIRE_PERF=1
export GPROBE_VMLINUX=${GPROBE_VMLINUX:-${GPROBE_CACHE:-/var/cache/gprobe}/6.1.0-56-cloud-amd64/vmlinux}
export GPROBE_KSRC=${GPROBE_KSRC:-${GPROBE_CACHE:-/var/cache/gprobe}/6.1.0-56-cloud-amd64/src}
export GPROBE_REQUIRE_VMLINUX=1

go vet ./...
go test -count=1 -timeout 45m ./...
