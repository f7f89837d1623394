#!/usr/bin/env bash
# bench-user.sh measures gprobe against perf probe on user programs, side
# by side in one run: Debian's python3.11 (SDT markers, symbol table),
# libstdc++.so.6 (C++ names), libjvm.so when a JDK is installed, and a C
# program built here with -g (DWARF: -D, -L, -V). Every command is a fresh
# process, page cache warm; perf and gprobe take turns (each round starts
# with the other tool), and each is reported as the median wall time and
# the largest peak RSS (ru_maxrss) of REPEAT runs. It prints the ratios
# gprobe/perf: below 1.00 gprobe is faster or smaller. The goal is a time
# ratio of at most 0.50 and a memory ratio of at most 1.00 everywhere.
#
#   scripts/bench-user.sh [REPEAT]     (default 11)
#   ONLY=REGEX scripts/bench-user.sh   the specs matching REGEX
#   GPROBE=PATH scripts/bench-user.sh  that binary instead of a fresh
#                                      scripts/build.sh
#
# Both run with the same HOME of their own (perf adds every -x binary to
# HOME/.debug, which gprobe reads too), filled by one run of each first.
# Each run is timed by a small C runner built here, around fork, exec and
# wait4 (GNU time's centiseconds are too coarse for answers of a few
# milliseconds), and its ru_maxrss is the child's own: the runner forks
# rather than vforks (after a vfork, or Python's or Go's spawn, the peak
# the kernel keeps for the child starts at its parent's resident set).
# Needs perf (scripts/provision.sh), gcc and python3.
set -euo pipefail
cd "$(dirname "$0")/.."

REPEAT=${1:-11}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
BIN=${GPROBE:-$TMP/gprobe}
[ -n "${GPROBE:-}" ] || scripts/build.sh "$BIN"
gcc -g -O2 -o "$TMP/vars" cmd/gprobe/testdata/uprobe/vars.c
mkdir -p "$TMP/home"
cat >"$TMP/runner.c" <<'END'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
/* runner CMD...: prints "SECONDS MAXRSS_KB STATUS" of one run of CMD. */
int main(int argc, char **argv) {
	struct timespec a, b;
	struct rusage ru;
	int st;
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);
		dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
		execv(argv[1], argv + 1);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &st, 0, &ru) < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.6f %ld %d\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9, ru.ru_maxrss,
	       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}
END
gcc -O2 -o "$TMP/runner" "$TMP/runner.c"

PY=/usr/bin/python3.11
CXX=/usr/lib/x86_64-linux-gnu/libstdc++.so.6
JVM=$(ls /usr/lib/jvm/*/lib/server/libjvm.so 2>/dev/null | head -n 1 || true)
C=$TMP/vars

# Each spec is TARGET|ARG|ARG...: the arguments after -x TARGET, split on |.
specs=(
	"$PY|-F"
	"$PY|-F|*"
	"$PY|-F|Py*Object*"
	"$PY|-D|sdt_python:function__entry"
	"$PY|-D|sdt_python:*"
	"$PY|-D|%sdt_python:line"
	"$PY|-D|PyObject_GetAttr"
	"$PY|-D|PyObject_GetAttr%return"
	"$PY|-L|PyObject_GetAttr"
	"$PY|-V|PyObject_GetAttr"
	"$CXX|-F"
	"$CXX|-F|*"
	"$CXX|-F|std::*"
	"$CXX|-D|sdt_libstdcxx:*"
	"$CXX|-D|_ZNSt6thread4joinEv"
	"$CXX|-D|_ZNSt6thread4joinEv%return"
	"$C|-F"
	"$C|-D|visit"
	"$C|-D|visit:4"
	"$C|-D|visit%return"
	"$C|-D|visit n->ptr->label depth tag:string"
	"$C|-D|by_value in.id fl.mode c"
	"$C|-L|visit"
	"$C|-V|visit"
	"$C|-V|by_value"
)
if [ -n "$JVM" ]; then
	specs+=(
		"$JVM|-F"
		"$JVM|-F|*"
		"$JVM|-D|sdt_hotspot:*"
		"$JVM|-D|sdt_hotspot:thread__start"
	)
fi

# A spec "@PERF ARGS|GPROBE ARGS" runs perf with PERF ARGS and gprobe with
# GPROBE ARGS, each split on spaces: the listing of the SDT events of every
# binary the specs above added to HOME/.debug.
specs+=("@list sdt|list --sdt")

python3 - "$REPEAT" "$BIN" "$TMP/home" "${ONLY:-}" "$TMP/runner" "${specs[@]}" <<'EOF'
import os, sys, time, re, statistics, subprocess

repeat, gprobe, home, only, runner = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
env = dict(os.environ, HOME=home)


def run(argv):
    """Runs argv; returns (seconds, peak RSS in KiB, exit status)."""
    out = subprocess.run([runner] + argv, env=env, capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1]), int(out[2])


perf = "/usr/bin/perf"
print("%s; %s, %d CPUs, load %s; median of %d runs, largest peak RSS" % (
    gprobe, time.strftime("%F", time.gmtime()), os.cpu_count(),
    open("/proc/loadavg").read().split()[0], repeat))
print("%-52s %8s %8s %6s  %8s %8s %6s" % ("spec", "perf ms", "gprobe ms", "ratio", "perf MiB", "gprobe MiB", "ratio"))
worst_t = worst_m = 0.0
for spec in sys.argv[6:]:
    if only and not re.search(only, spec):
        continue
    if spec.startswith("@"):
        pargs, gargs = spec[1:].split("|")
        p, g = [perf] + pargs.split(), [gprobe] + gargs.split()
        target, args = "", ["perf " + pargs, "/", "gprobe " + gargs]
    else:
        target, *args = spec.split("|")
        p = [perf, "probe", "-x", target] + args
        g = [gprobe, "-x", target] + args
    run(p), run(g)  # fill HOME/.debug, warm the page cache
    pt, gt, pm, gm = [], [], 0, 0
    for i in range(repeat):
        for who in ((p, g) if i % 2 == 0 else (g, p)):
            t, m, _ = run(who)
            if who is p:
                pt.append(t); pm = max(pm, m)
            else:
                gt.append(t); gm = max(gm, m)
    tp, tg = statistics.median(pt), statistics.median(gt)
    rt, rm = tg / tp, gm / pm
    worst_t, worst_m = max(worst_t, rt), max(worst_m, rm)
    name = ("%s %s" % (os.path.basename(target), " ".join(args))).strip()
    print("%-52.52s %8.1f %8.1f %6.2f  %8.1f %8.1f %6.2f" % (name, tp * 1e3, tg * 1e3, rt, pm / 1024, gm / 1024, rm))
print("worst ratio gprobe/perf: time %.2f, peak memory %.2f" % (worst_t, worst_m))
EOF
