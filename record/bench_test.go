package record

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/testenv"
)

// BenchmarkDrain measures the time to empty the ring buffers holding one
// million events into a trace file: gprobe (drain, metadata, trace.dat v6)
// beside trace-cmd extract on the same workload. (trace-cmd record cannot
// run here: it fails with "Can't enable ftrace", as writing
// /proc/sys/kernel/ftrace_enabled is not permitted.) The events
// (syscalls:sys_enter_getppid) all wait in a large buffer, so both tools
// read the same full buffers. Run: scripts/bench-record.sh.
func BenchmarkDrain(b *testing.B) {
	root := requireTracing(b)
	const ev = "syscalls/sys_enter_getppid"
	if !root.Exists("events/" + ev + "/format") {
		testenv.Missing(b, "%s", ev)
	}
	flood := buildC(b, "flood")
	const n = 1_000_000
	const bufKB = 64 << 10
	var gp, tc time.Duration
	for i := 0; i < b.N; i++ {
		out := filepath.Join(b.TempDir(), "trace.out")
		res, err := Run(Config{Events: []string{"syscalls:sys_enter_getppid"}, Output: out, BufferSizeKB: bufKB,
			Command: []string{flood, strconv.Itoa(n)}, lateReaders: true})
		if err != nil {
			b.Fatal(err)
		}
		if res.Events != n || res.Meta.Lost.Total() != 0 {
			b.Fatalf("gprobe: %s", res.Summary())
		}
		gp += res.Drain

		d, got := traceCmdExtract(b, root, flood, n, bufKB)
		if got < n {
			b.Fatalf("trace-cmd extract: %d events, want %d", got, n)
		}
		tc += d
	}
	b.ReportMetric(float64(gp.Milliseconds())/float64(b.N), "gprobe-ms/Mevents")
	b.ReportMetric(float64(tc.Milliseconds())/float64(b.N), "trace-cmd-ms/Mevents")
	b.ReportMetric(float64(gp)/float64(tc), "gprobe/trace-cmd")
}

// traceCmdExtract fills a private instance with n events and times
// trace-cmd extract of it (uncompressed, v7: extract cannot write v6). It
// returns the time and the number of events in the instance's stats.
func traceCmdExtract(b *testing.B, root *tracefs.FS, flood string, n, bufKB int) (time.Duration, uint64) {
	inst, err := root.NewInstance(fmt.Sprintf("gprobe-bench-%d", os.Getpid()))
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		// trace-cmd extract removes the instance; otherwise do it here.
		if inst.Exists("tracing_on") {
			_ = inst.Enable("syscalls", "sys_enter_getppid", false)
			if err := inst.Remove(); err != nil {
				b.Error(err)
			}
		}
	}()
	for _, w := range [][2]string{{"tracing_on", "0"}, {"buffer_size_kb", strconv.Itoa(bufKB)}, {"trace_clock", "mono"},
		{"events/syscalls/sys_enter_getppid/enable", "1"}} {
		if err := inst.WriteFile(w[0], w[1]); err != nil {
			b.Fatal(err)
		}
	}
	// Only the workload: follow its pid as gprobe does.
	cmd := exec.Command(flood, strconv.Itoa(n))
	if err := inst.WriteFile("tracing_on", "1"); err != nil {
		b.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	if err := inst.WriteFile("tracing_on", "0"); err != nil {
		b.Fatal(err)
	}
	var entries uint64
	for cpu := 0; ; cpu++ {
		st, err := inst.ReadFile(fmt.Sprintf("per_cpu/cpu%d/stats", cpu))
		if err != nil {
			break
		}
		entries += statValue(string(st), "entries")
	}
	out := filepath.Join(b.TempDir(), "tc.dat")
	start := time.Now()
	if o, err := exec.Command("trace-cmd", "extract", "--compression", "none", "-B", inst.Name, "-o", out).CombinedOutput(); err != nil {
		b.Fatalf("trace-cmd extract: %v\n%s", err, o)
	}
	return time.Since(start), entries
}

// BenchmarkLive records the same million events while they are produced,
// with the default buffer: the CPU time gprobe's readers spend per million
// events (the workload's own time is not counted), the wall time of the
// whole recording and the events lost.
func BenchmarkLive(b *testing.B) {
	root := requireTracing(b)
	if !root.Exists("events/syscalls/sys_enter_getppid/format") {
		testenv.Missing(b, "syscalls:sys_enter_getppid")
	}
	flood := buildC(b, "flood")
	const n = 1_000_000
	var cpu, wall time.Duration
	var lost, events uint64
	for i := 0; i < b.N; i++ {
		out := filepath.Join(b.TempDir(), "trace.out")
		before := selfCPU(b)
		start := time.Now()
		res, err := Run(Config{Events: []string{"syscalls:sys_enter_getppid"}, Output: out, Command: []string{flood, strconv.Itoa(n)}})
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		cpu += selfCPU(b) - before
		lost += res.Meta.Lost.Total()
		events += res.Events
	}
	if events+lost != uint64(b.N)*n {
		b.Errorf("written %d + lost %d != %d", events, lost, b.N*n)
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "gprobe-cpu-ms/Mevents")
	b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms/Mevents")
	b.ReportMetric(float64(lost)/float64(b.N), "lost/Mevents")
}

// selfCPU is the user+system time this process has used (not its children).
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
