package main

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gprobe/gprobe/internal/qemu"
)

// Return-instruction probes and boot-time probes on Debian's 6.1 and 6.12
// kernels under qemu, one boot each. The host resolves against the -dbg
// vmlinux; the guest installs the definitions with gprobe add.
//
// In each guest, for functions with one return (vfs_read, do_sys_openat2),
// a return and a tail call (getname_flags) and two returns and a tail call
// (rw_verify_area on 6.12; a tail call and two returns on 6.1), a
// kretprobe and the --ret-insn probes of the same function see the same
// workload at once:
// every kretprobe event must follow exactly one return-instruction event
// of the same task (a FUNC__retinsn with the same value, or a
// FUNC__tailcall), so the counts are equal and the values agree.
//
// The 6.1 guest also boots with the parameters gprobe --boot printed,
// defining an entry probe with a string argument, and the kretprobes and
// return-instruction probes of do_sys_openat2 and getname_flags: at the
// first shell the trace already holds init's opens with their file names
// and the boot's calls, paired as above.

// retInsnFuncs are the functions compared in both guests.
var retInsnFuncs = []string{"vfs_read", "getname_flags", "do_sys_openat2", "rw_verify_area"}

func TestQemuRetInsn(t *testing.T) {
	for _, k := range []*qemu.Kernel{qemu.Linux61, qemu.Linux612} {
		t.Run(k.Release, func(t *testing.T) { qemuRetInsn(t, k) })
	}
}

// gprobeD runs gprobe -k vmlinux with args and returns its stdout.
func gprobeD(t *testing.T, args ...string) string {
	t.Helper()
	r := runGprobe(args...)
	if r.Code != 0 || r.Stdout == "" {
		t.Fatalf("%q: %s", args, r)
	}
	return r.Stdout
}

func qemuRetInsn(t *testing.T, k *qemu.Kernel) {
	qemu.Require(t, k)
	vmlinux := k.Vmlinux()
	var defs strings.Builder
	for _, f := range retInsnFuncs {
		defs.WriteString(gprobeD(t, "-k", vmlinux, "-D", f+"%return $retval:s64"))
		defs.WriteString(gprobeD(t, "-k", vmlinux, "--ret-insn", "-D", f+"%return $retval:s64"))
	}
	t.Logf("%s: definitions resolved on the host:\n%s", k.Release, defs.String())

	boot := k == qemu.Linux61
	var param string
	if boot {
		// One kprobe_event= only (the kernel keeps the last): the two
		// invocations' values are joined with ';', as docs/boot-probes.md
		// says.
		a := strings.Fields(gprobeD(t, "-k", vmlinux, "--boot", "-D", "do_sys_openat2 dfd filename:ustring", "-D", "do_sys_openat2%return $retval:s64", "-D", "getname_flags%return $retval:s64"))
		b := strings.Fields(gprobeD(t, "-k", vmlinux, "--boot", "--ret-insn", "-D", "do_sys_openat2%return $retval:s64", "-D", "getname_flags%return $retval:s64"))
		if len(a) != 2 || len(b) != 2 || a[1] != "ftrace=nop" || b[1] != a[1] {
			t.Fatalf("--boot printed %q and %q", a, b)
		}
		param = a[0] + ";" + strings.TrimPrefix(b[0], "kprobe_event=") + " " + a[1]
		t.Logf("boot parameter (%d bytes):\n%s", len(param), param)
	}

	script := "T=/sys/kernel/tracing\n"
	if boot {
		script += `echo "== boot"
echo 0 > $T/tracing_on
cat $T/kprobe_events
cat $T/trace > /tmp/trace.boot
dmesg | grep -iE "failed to add event" || true
echo "== boot-del"
gprobe -d 'probe:*' 2>/tmp/del.err || { grep -v "^Removed" /tmp/del.err; echo 0 > $T/events/enable; gprobe -d 'probe:*' 2>/dev/null; }
echo "status $?"
echo > $T/trace
echo 1 > $T/tracing_on
echo "left: $(cat $T/kprobe_events)"
`
	}
	script += `echo "== retinsn"
gprobe add -q --from /root/retinsn.defs; echo "status $?"
echo 1 > $T/events/probe/enable
i=0
while [ $i -lt 30 ]; do
	dd if=/etc/hello of=/dev/null bs=7 2>/dev/null
	ls / /proc/self >/dev/null
	cat /etc/hello >/dev/null
	i=$((i+1))
done
echo 0 > $T/events/probe/enable
cat $T/trace > /tmp/trace.retinsn
echo "== profile"
grep -E "__(return|retinsn|tailcall) " $T/kprobe_profile
echo "== del"
gprobe -d 'probe:*' >/dev/null 2>&1; echo "status $?"
echo "left: $(cat $T/kprobe_events)"
echo "== retbleed"
cat /sys/devices/system/cpu/vulnerabilities/retbleed
echo "== dmesg"
dmesg | grep -E 'cut here|WARNING:|BUG:|Oops' || true
`
	res, err := qemu.Run(context.Background(), qemu.Options{
		Kernel:  k,
		Script:  script,
		Files:   map[string][]byte{"/root/retinsn.defs": []byte(defs.String()), "/etc/hello": []byte(strings.Repeat("return instructions\n", 5))},
		Collect: []string{"/tmp/trace.boot", "/tmp/trace.retinsn"},
		Append:  param,
		Timeout: 3 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guest booted to the script in %v, ran in %v; output:\n%s", res.Boot, res.Elapsed, res.Output)
	if res.Status != 0 {
		t.Fatalf("guest script exit status %d", res.Status)
	}
	steps := guestSteps(res.Output)
	if d := steps["dmesg"]; d != "" {
		t.Errorf("the guest kernel complained:\n%s", d)
	}
	if steps["retinsn"] != "status 0\n" || !strings.Contains(steps["del"], "status 0\nleft: \n") {
		t.Errorf("add or delete failed or left probes behind:\n%s%s", steps["retinsn"], steps["del"])
	}
	// A kretprobe that missed calls (maxactive) would not count them all.
	for _, l := range strings.Split(strings.TrimSpace(steps["profile"]), "\n") {
		if f := strings.Fields(l); len(f) != 3 || f[2] != "0" {
			t.Errorf("kprobe_profile: %q", l)
		}
	}

	trace := string(res.Files["/tmp/trace.retinsn"])
	checkBufferComplete(t, trace)
	for _, f := range retInsnFuncs {
		n := checkExitPairs(t, trace, f)
		t.Logf("%s: %s", f, n)
		if n.kret < 20 || n.kret != n.retinsn+n.tailcall {
			t.Errorf("%s: %s; want a kretprobe event for each return-instruction event", f, n)
		}
		// dd reads the 100-byte file 7 bytes at a time: 16 reads a run.
		if f == "vfs_read" && n.values < 30*16 {
			t.Errorf("vfs_read: only %d values compared", n.values)
		}
	}

	if !boot {
		return
	}
	t.Run("boot", func(t *testing.T) {
		out := steps["boot"]
		for _, ev := range []string{"p:probe/do_sys_openat2 ", ":probe/do_sys_openat2__return ", "p:probe/do_sys_openat2__retinsn ",
			":probe/getname_flags__return ", "p:probe/getname_flags__retinsn ", "p:probe/getname_flags__tailcall "} {
			if !strings.Contains(out, ev) {
				t.Errorf("kprobe_events at the first shell lacks %q:\n%s", ev, out)
			}
		}
		if strings.Contains(strings.ToLower(out), "failed to add event") || strings.Contains(strings.ToLower(string(res.Console)), "failed to add event") {
			t.Errorf("the kernel refused a boot definition:\n%s\n%s", out, res.Console)
		}
		// The first event may have no events/ directory (6.1 creates the
		// boot events while a workqueue sets up tracefs): gprobe -d then
		// says how to disable it, and deletes everything after that.
		if del := steps["boot-del"]; del != "status 0\nleft: \n" && !strings.HasSuffix(del, "echo 0 > events/enable disables it\n  Error: Failed to delete events.\nstatus 0\nleft: \n") {
			t.Errorf("deleting the boot events:\n%s", del)
		}
		bt := string(res.Files["/tmp/trace.boot"])
		checkBufferComplete(t, bt)
		// init's own opens, before the script: `stty -F /dev/ttyS1` and
		// `read up idle </proc/uptime`.
		for _, file := range []string{"/dev/ttyS1", "/proc/uptime"} {
			re := `(?m)^\s+\S+-1\s+\[000\] \S+\s+[\d.]+: do_sys_openat2: \(do_sys_openat2\+0x0/0x[0-9a-f]+\) dfd=-100 filename_ustring="` + regexp.QuoteMeta(file) + `"$`
			if !regexp.MustCompile(re).MatchString(bt) {
				t.Errorf("the boot trace lacks init's open of %s (%s):\n%s", file, re, head(bt, 40))
			}
		}
		for _, f := range []string{"do_sys_openat2", "getname_flags"} {
			n := checkExitPairs(t, bt, f)
			t.Logf("%s during boot: %s", f, n)
			if n.kret < 5 || n.kret != n.retinsn+n.tailcall {
				t.Errorf("%s at boot: %s", f, n)
			}
			if f == "do_sys_openat2" && n.values != n.kret {
				t.Errorf("%s at boot: %s; want every value compared", f, n)
			}
		}
	})
}

// guestSteps splits a guest's output at its "== NAME" lines.
func guestSteps(out []byte) map[string]string {
	steps := map[string]string{}
	step := ""
	for _, l := range strings.SplitAfter(string(out), "\n") {
		if name, ok := strings.CutPrefix(l, "== "); ok {
			step = strings.TrimSpace(name)
			continue
		}
		steps[step] += l
	}
	return steps
}

func head(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

var entriesLine = regexp.MustCompile(`(?m)^# entries-in-buffer/entries-written: (\d+)/(\d+)`)

// checkBufferComplete requires a trace file whose buffer lost nothing.
func checkBufferComplete(t *testing.T, trace string) {
	t.Helper()
	m := entriesLine.FindStringSubmatch(trace)
	if m == nil || m[1] != m[2] || m[1] == "0" {
		t.Errorf("trace buffer incomplete or empty: %q", m)
	}
}

// exitCounts are the events of one function in a trace.
type exitCounts struct {
	kret, retinsn, tailcall int
	values                  int // FUNC__retinsn values equal to the kretprobe's
}

func (c exitCounts) String() string {
	return "kretprobe " + strconv.Itoa(c.kret) + ", retinsn " + strconv.Itoa(c.retinsn) + " + tailcall " +
		strconv.Itoa(c.tailcall) + ", values agreeing " + strconv.Itoa(c.values)
}

// kernelTraceLine is one line of a kernel trace file: task, pid, event,
// and arg1 when there is one.
var kernelTraceLine = regexp.MustCompile(`^\s*.+-(\d+)\s+\[\d+\] \S+\s+[\d.]+: (\w+): \(.*?\)(?: arg1=(\S+))?$`)

// checkExitPairs walks the events of fn in trace: per task, every
// fn__return (kretprobe) must come after exactly one fn__retinsn (with the
// same arg1) or fn__tailcall, and before the next of those.
func checkExitPairs(t *testing.T, trace, fn string) exitCounts {
	t.Helper()
	var c exitCounts
	type open struct{ kind, val string }
	pending := map[string]open{}
	for _, l := range strings.Split(trace, "\n") {
		m := kernelTraceLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		pid, ev, val := m[1], m[2], m[3]
		switch ev {
		case fn + "__retinsn", fn + "__tailcall":
			if ev == fn+"__retinsn" {
				c.retinsn++
			} else {
				c.tailcall++
			}
			if p, ok := pending[pid]; ok {
				t.Errorf("%s: task %s left by %s, then again (%s) before its kretprobe fired", fn, pid, p.kind, l)
			}
			pending[pid] = open{ev, val}
		case fn + "__return":
			c.kret++
			p, ok := pending[pid]
			if !ok {
				t.Errorf("%s: a return no return instruction saw: %s", fn, l)
				continue
			}
			delete(pending, pid)
			if p.kind == fn+"__retinsn" {
				if p.val != val {
					t.Errorf("%s: the kretprobe says %s, the return instruction %s: %s", fn, val, p.val, l)
				} else {
					c.values++
				}
			}
		}
	}
	for pid, p := range pending {
		t.Errorf("%s: task %s's %s has no kretprobe event", fn, pid, p.kind)
	}
	return c
}
