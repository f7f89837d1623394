package main

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gprobe/gprobe/internal/qemu"
	"github.com/gprobe/gprobe/internal/testenv"
)

// TestQemuBuiltKernel boots, once, the 6.12 kernel scripts/build-kernel.sh
// builds (Extra Boot Config, boot-time tracing and user_events, which
// Debian's kernels lack) with the configs gprobe printed attached to the
// initramfs by the kernel's own bootconfig tool:
//
//   - gprobe latency vfs_read --bootconfig: a synthetic event and hist
//     triggers with an onmatch handler measuring vfs_read from boot; at the
//     first shell gprobe latency --boot-report reads the histogram;
//   - gprobe --bootconfig -D on do_filp_open's entry (the name opened,
//     fetched through registers: the kernel has no debug information, so
//     its probes are placed from its symbols, as _text+OFFSET) and return:
//     the kernel's own early opens (/dev/console, /init) go through it,
//     before any process runs; the trace at the first shell holds them,
//     and a return for each entry.
//
// perf probe 6.1's --bootconfig output for vfs_write is attached too: the
// kernel reads its keys and defines nothing from them.
//
// In the same boot, user events: gprobe record -e 'user_events:*' records
// the Go example (cmd/userevents-example) and the C example
// (userevents/cexample), each writing a known number of events with known
// payloads once the recording has enabled them; the recordings hold
// exactly those (trace-cmd report, gprobe analyze pairing request_begin
// with request_end). A persistent user event is added, listed and deleted
// with gprobe.
func TestQemuBuiltKernel(t *testing.T) {
	k := qemu.LinuxBuilt
	qemu.Require(t, k)
	testenv.Tool(t, "trace-cmd")
	vmlinux, _ := testenv.RequireVmlinux(t, k)
	bootconfig := k.Bootconfig()
	if _, err := os.Stat(bootconfig); err != nil {
		testenv.MissingKernel(t, "the bootconfig tool (%v)", err)
	}

	// The latency setup first: its synthetic event must be defined before
	// the kprobes group's triggers use it, and bootconfig keeps the order
	// in which a group's keys first appear.
	lat := gprobeD(t, "latency", "vfs_read", "--bootconfig", "-k", vmlinux)
	probes := gprobeD(t, "-k", vmlinux, "--bootconfig", "-D", "do_filp_open dfd=%di:s32 name=+0(+0(%si)):string", "-D", "do_filp_open%return $retval:x64")
	// Placed as perf places them on a kernel without debug information.
	at := map[string]string{}
	for _, fn := range []string{"vfs_read", "do_filp_open", "vfs_write"} {
		at[fn] = textOffset(t, vmlinux, fn)
	}
	if want := "ftrace.event.kprobes.do_filp_open.probes = '" + at["do_filp_open"] + " dfd="; !strings.Contains(probes, want) {
		t.Fatalf("gprobe --bootconfig -D: want %q in\n%s", want, probes)
	}
	// perf probe 6.1's --bootconfig for vfs_write, in the same boot: the
	// kernel reads the keys but defines nothing from them.
	perfCfg := ""
	if perf, err := exec.LookPath("perf"); err == nil {
		out, err := exec.Command(perf, "probe", "-k", vmlinux, "--bootconfig", "-D", "vfs_write", "-D", "vfs_write%return $retval").Output()
		if err != nil || !strings.Contains(string(out), "ftrace.event.kprobes.vfs_write.probe = ") {
			t.Fatalf("perf probe --bootconfig: %v\n%s", err, out)
		}
		perfCfg = string(out)
		// Without --bootconfig, perf's definitions and gprobe's are the
		// same lines (placed at _text+OFFSET).
		defs := []string{"-k", vmlinux, "-D", "do_filp_open", "-D", "vfs_read", "-D", "vfs_read%return"}
		pd, err := exec.Command(perf, append([]string{"probe"}, defs...)...).Output()
		if gd := gprobeD(t, defs...); err != nil || gd != string(pd) {
			t.Errorf("-D on the built kernel: perf (%v)\n%s\ngprobe\n%s", err, pd, gd)
		}
	} else if os.Getenv("GPROBE_REQUIRE_PERF") == "1" {
		t.Fatal(err)
	}
	config := lat + probes + perfCfg
	t.Logf("boot config:\n%s", config)
	cfgFile := filepath.Join(t.TempDir(), "gprobe.bconf")
	if err := os.WriteFile(cfgFile, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	attach := func(initrd string) error {
		out, err := exec.Command(bootconfig, "-a", cfgFile, initrd).CombinedOutput()
		if err != nil {
			return fmt.Errorf("bootconfig -a: %v\n%s", err, out)
		}
		return nil
	}

	goEx := testenv.BuildGoPackage(t, "github.com/gprobe/gprobe/cmd/userevents-example", "amd64")
	cEx := testenv.BuildC(t, "gcc", "../../userevents/cexample/example.c", "uevent-c", "-O2", "-static", "-Wall")
	const goRequests, cEvents = 50, 40

	script := fmt.Sprintf(`T=/sys/kernel/tracing
echo "== clock"
cat /sys/devices/system/clocksource/clocksource0/current_clocksource
echo "== bootconfig"
cat /proc/bootconfig
echo "== kprobes"
cat $T/kprobe_events
grep -E "trace_boot|Failed to (generate|add|find|apply)" /gprobe-qemu/boot.dmesg || true
echo 0 > $T/tracing_on
cat $T/trace > /tmp/trace.boot
echo "== boot-report"
# The triggers go on counting: the report's count lies between the two.
cat $T/events/synthetic/gprobe_latency_vfs_read/hist > /tmp/hist.before
gprobe latency vfs_read --boot-report; echo "status $?"
cat $T/events/synthetic/gprobe_latency_vfs_read/hist > /tmp/hist.after
echo > $T/trace
echo 0 > $T/events/enable
echo 1 > $T/tracing_on
echo "== uevents-go"
gprobe record -e 'user_events:*' -o /tmp/ue-go.dat -- /root/ue-go -n %d; echo "status $?"
echo "== uevents-c"
gprobe record -e 'user_events:*' -o /tmp/ue-c.dat -- /root/ue-c %d; echo "status $?"
echo "== persist"
gprobe add 'u:gprobe_persist u32 a;char[8] b'; echo "status $?"
grep u: $T/dynamic_events
gprobe -l; echo "status $?"
gprobe -d 'user_events:gprobe_persist'; echo "status $?"
echo "left: $(grep -c u: $T/dynamic_events)"
echo "== dmesg"
dmesg | grep -E 'cut here|WARNING:|BUG:|Oops' || true
`, goRequests, cEvents)
	goBin, err := os.ReadFile(goEx)
	if err != nil {
		t.Fatal(err)
	}
	cBin, err := os.ReadFile(cEx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := qemu.Run(context.Background(), qemu.Options{
		Kernel:  k,
		Script:  script,
		Files:   map[string][]byte{"/root/ue-go": goBin, "/root/ue-c": cBin},
		Collect: []string{"/tmp/trace.boot", "/tmp/hist.before", "/tmp/hist.after", "/tmp/ue-go.dat", "/tmp/ue-c.dat"},
		Append:  "bootconfig",
		Initrd:  attach,
		Timeout: 5 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("booted to the script in %v, whole run %v (wall %v); output:\n%s", res.Boot, res.Elapsed, time.Since(start), res.Output)
	if res.Status != 0 {
		t.Fatalf("guest script exit status %d", res.Status)
	}
	steps := guestSteps(res.Output)
	if d := steps["dmesg"]; d != "" {
		t.Errorf("the guest kernel complained:\n%s", d)
	}

	// The trace's clock is finer than a jiffy: the kernel found a
	// reference to calibrate the TSC against (ACPI's PM timer, the HPET).
	if cs := strings.TrimSpace(steps["clock"]); cs == "" || strings.Contains(cs, "jiffies") {
		t.Errorf("the guest's clocksource is %q: every timestamp is a jiffy", cs)
	}

	t.Run("bootconfig", func(t *testing.T) {
		// The kernel read the whole config (it prints it back in its own
		// flat form), defined the probes, and said nothing of failures.
		bc := steps["bootconfig"]
		for _, want := range []string{
			`ftrace.event.synthetic.gprobe_latency_vfs_read.fields = "u64 ns_plus1", "int pid", "char comm[]"`,
			`ftrace.event.kprobes.do_filp_open__return.probes = "do_filp_open%return $retval:x64"`,
			`kernel.ftrace = "nop"`,
		} {
			if !strings.Contains(bc, want+"\n") {
				t.Errorf("/proc/bootconfig lacks %q:\n%s", want, bc)
			}
		}
		kp := steps["kprobes"]
		// A return probe is an r line with the kernel's maxactive.
		for _, want := range []string{
			`p:kprobes/vfs_read ` + regexp.QuoteMeta(at["vfs_read"]) + `$`,
			`r\d+:kprobes/vfs_read__return vfs_read comm=\$comm:string$`,
			`p:kprobes/do_filp_open ` + regexp.QuoteMeta(at["do_filp_open"]) + ` dfd=%di:s32 name=\+0\(\+0\(%si\)\):string$`,
			`r\d+:kprobes/do_filp_open__return do_filp_open arg1=\$retval:x64$`,
		} {
			if !regexp.MustCompile(`(?m)^` + want).MatchString(kp) {
				t.Errorf("kprobe_events at the first shell lacks %q:\n%s", want, kp)
			}
		}
		// perf's keys were read, and defined nothing: the kernel then looks
		// for the events to set up and does not find them.
		perfFailed := "trace_boot: Failed to find event: kprobes:vfs_write\ntrace_boot: Failed to find event: kprobes:vfs_write__return\n"
		if perfCfg != "" {
			if !strings.Contains(bc, "ftrace.event.kprobes.vfs_write.probe = \""+at["vfs_write"]+"\"\n") || !strings.Contains(kp, perfFailed) ||
				regexp.MustCompile(`(?m)^[pr]\d*:kprobes/vfs_write`).MatchString(kp) {
				t.Errorf("perf's --bootconfig output: the kernel did not read it, or defined an event from it:\n%s\n%s", bc, kp)
			}
			kp = strings.Replace(kp, perfFailed, "", 1)
		}
		if strings.Contains(kp, "trace_boot") || strings.Contains(kp, "Failed to") {
			t.Errorf("boot-time tracing failed:\n%s", kp)
		}
		// The kernel's own opens, before init: the console, then /init, at
		// do_filp_open's first instruction (where _text+OFFSET is).
		bt := string(res.Files["/tmp/trace.boot"])
		t.Logf("the trace at the first shell (head):\n%s", head(bt, 16))
		t.Logf("pid 1's opens:\n%s", strings.Join(regexp.MustCompile(`(?m)^\s+\S+-1\s.*$`).FindAllString(bt, 12), "\n"))
		checkBufferComplete(t, bt)
		for _, file := range []string{"/dev/console", "/init"} {
			re := `(?m)^\s+\S+-1\s+\[\d+\] \S+\s+[\d.]+: do_filp_open: \(do_filp_open\+0x0/0x[0-9a-f]+\) dfd=-100 name="` + regexp.QuoteMeta(file) + `"$`
			if !regexp.MustCompile(re).MatchString(bt) {
				t.Errorf("the boot trace lacks the kernel's open of %s:\n%s", file, head(bt, 30))
			}
		}
		entries := strings.Count(bt, ": do_filp_open: ")
		returns := strings.Count(bt, ": do_filp_open__return: ")
		t.Logf("the boot trace: %d opens, %d returns", entries, returns)
		if entries < 3 || returns != entries {
			t.Errorf("%d do_filp_open entries and %d returns in the boot trace", entries, returns)
		}
	})

	t.Run("latency", func(t *testing.T) {
		out := steps["boot-report"]
		m := regexp.MustCompile(`(?m)^\s*vfs_read\s+(\d+)\s+\d+\s+\d+\s+([\d.]+)\s`).FindStringSubmatch(out)
		if m == nil || !strings.HasSuffix(out, "status 0\n") || !strings.Contains(out, "vfs_read  (kprobes:vfs_read -> kprobes:vfs_read__return)") {
			t.Fatalf("gprobe latency --boot-report:\n%s", out)
		}
		calls, _ := strconv.Atoi(m[1])
		// A read takes more than nothing: a minimum of 0 is a clock
		// that counts in jiffies.
		if min, _ := strconv.ParseFloat(m[2], 64); min <= 0 {
			t.Errorf("the shortest vfs_read took %s us:\n%s", m[2], out)
		}
		// The hist file's total: the calls the kernel counted, before and
		// after the report read them.
		hits := func(f string) int {
			h := regexp.MustCompile(`(?m)^\s*Hits: (\d+)$`).FindStringSubmatch(string(res.Files[f]))
			if h == nil {
				t.Fatalf("%s has no total:\n%s", f, res.Files[f])
			}
			n, _ := strconv.Atoi(h[1])
			return n
		}
		before, after := hits("/tmp/hist.before"), hits("/tmp/hist.after")
		t.Logf("the synthetic event's histogram before the report:\n%s", res.Files["/tmp/hist.before"])
		if calls < 5 || calls < before || calls > after {
			t.Errorf("the report counts %d calls, the histogram %d before and %d after", calls, before, after)
		}
	})

	t.Run("user-events-go", func(t *testing.T) {
		rep := recordedReport(t, steps["uevents-go"], res.Files["/tmp/ue-go.dat"], "ue-go.dat")
		begins := regexp.MustCompile(`(?m)^\s*ue-go-\d+\s+\[\d+\]\s+[\d.]+: request_begin:\s+id=(\d+)$`).FindAllStringSubmatch(rep, -1)
		ends := regexp.MustCompile(`(?m)^\s*ue-go-\d+\s+\[\d+\]\s+[\d.]+: request_end:\s+id=(\d+) status=(\d+) tag=(\S+)$`).FindAllStringSubmatch(rep, -1)
		if len(begins) != goRequests || len(ends) != goRequests || strings.Count(rep, ": request_") != 2*goRequests {
			t.Fatalf("the recording holds %d request_begin and %d request_end events (of %d lines), want %d each:\n%s",
				len(begins), len(ends), strings.Count(rep, ": request_"), goRequests, head(rep, 20))
		}
		for i := range goRequests {
			id := strconv.Itoa(i)
			if begins[i][1] != id || ends[i][1] != id || ends[i][2] != strconv.Itoa(3*i) || ends[i][3] != "req-"+id {
				t.Errorf("request %d: begin %q, end %q", i, begins[i][0], ends[i][0])
			}
		}
		out := filepath.Join(t.TempDir(), "ue-go.dat")
		os.WriteFile(out, res.Files["/tmp/ue-go.dat"], 0o644)
		an := runGprobe("analyze", out)
		t.Logf("gprobe analyze ue-go.dat:\n%s%s", an.Stdout, an.Stderr)
		if !regexp.MustCompile(`(?m)^\s*request\s+` + strconv.Itoa(goRequests) + `\s+0\s+0\s`).MatchString(an.Stdout) {
			t.Errorf("gprobe analyze did not pair the %d requests:\n%s%s", goRequests, an.Stdout, an.Stderr)
		}
	})

	t.Run("user-events-c", func(t *testing.T) {
		rep := recordedReport(t, steps["uevents-c"], res.Files["/tmp/ue-c.dat"], "ue-c.dat")
		evs := regexp.MustCompile(`(?m)^\s*ue-c-\d+\s+\[\d+\]\s+[\d.]+: c_request:\s+id=(\d+) tag=(\S+)$`).FindAllStringSubmatch(rep, -1)
		if len(evs) != cEvents || strings.Count(rep, ": c_request:") != cEvents {
			t.Fatalf("the recording holds %d c_request events, want %d:\n%s", len(evs), cEvents, head(rep, 20))
		}
		for i, e := range evs {
			if e[1] != strconv.Itoa(i) || e[2] != "c-"+strconv.Itoa(i) {
				t.Errorf("event %d: %q", i, e[0])
			}
		}
	})

	t.Run("persistent", func(t *testing.T) {
		out := steps["persist"]
		for _, want := range []string{
			"status 0\nu:gprobe_persist u32 a; char[8] b\n",
			"user_events:gprobe_persist (on user event with a b)",
			"Removed event: user_events:gprobe_persist\nstatus 0\nleft: 0\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("lacks %q:\n%s", want, out)
			}
		}
	})
}

// recordedReport checks a record step's summary and returns trace-cmd
// report's text of the file.
func recordedReport(t *testing.T, step string, data []byte, name string) string {
	t.Helper()
	if !strings.Contains(step, "no events lost\n") || !strings.HasSuffix(step, "status 0\n") {
		t.Fatalf("record failed or lost events:\n%s", step)
	}
	out := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := exec.Command("trace-cmd", "report", "-i", out).CombinedOutput()
	if err != nil {
		t.Fatalf("trace-cmd report: %v\n%s", err, rep)
	}
	t.Logf("trace-cmd report -i %s (head):\n%s", name, head(string(rep), 12))
	return string(rep)
}

// textOffset is where perf probe, and gprobe, place a kprobe on the
// function fn of a kernel without debug information: _text+OFFSET, from
// the vmlinux's symbol table (perf's find_probe_trace_events_from_map).
func textOffset(t *testing.T, vmlinux, fn string) string {
	t.Helper()
	syms := testenv.ELFSymbols(t, vmlinux)
	var text, addr uint64
	for _, s := range syms {
		switch {
		case s.Name == "_text":
			text = s.Value
		case s.Name == fn && elf.ST_TYPE(s.Info) == elf.STT_FUNC:
			addr = s.Value
		}
	}
	if text == 0 || addr <= text {
		t.Fatalf("%s: no _text or %s in the symbol table", vmlinux, fn)
	}
	return fmt.Sprintf("_text+%d", addr-text)
}
