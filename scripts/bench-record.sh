#!/usr/bin/env bash
# bench-record.sh: time gprobe record needs to drain one million events
# from the ring buffers into trace.out, beside trace-cmd extract on the
# same workload (trace-cmd record cannot run here: it needs to write
# /proc/sys/kernel/ftrace_enabled). Needs root, tracefs, gcc, trace-cmd.
# Prints gprobe-ms/Mevents, trace-cmd-ms/Mevents and their ratio (Drain), and
# the CPU time gprobe spends per million events recorded live (Live).
set -euo pipefail
cd "$(dirname "$0")/.."
exec go test -count=1 -run '^$' -bench 'Drain|Live' -benchtime "${RUNS:-3}x" ./record/
