package record

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/internal/tracefmt"
)

// These tests record for real: uprobes on a program compiled here, static
// tracepoints, the real tracefs and trace-cmd as the reader. Everything
// they create carries the test name and pid and is removed in Cleanup.

func requireTracing(t testing.TB) *tracefs.FS {
	t.Helper()
	testenv.Tracefs(t)
	root, err := tracefs.Open()
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOARCH != "amd64" {
		testenv.Missing(t, "x86-64 (the uprobe arguments use x86 registers)")
	}
	testenv.Tool(t, "trace-cmd")
	t.Cleanup(func() { checkNothingLeft(t, root) })
	return root
}

// checkNothingLeft fails when an instance of this process is still there.
func checkNothingLeft(t testing.TB, root *tracefs.FS) {
	names, _ := root.Instances()
	prefix := fmt.Sprintf("gprobe-%d", os.Getpid())
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			t.Errorf("instance %s left behind", n)
		}
	}
}

// buildCalls compiles testdata/calls.c.
func buildCalls(t testing.TB) string { return buildC(t, "calls") }

// buildC compiles testdata/NAME.c.
func buildC(t testing.TB, name string) string {
	t.Helper()
	return testenv.BuildC(t, "gcc", "testdata/"+name+".c", name, "-O2", "-pthread")
}

// addUprobe installs "GROUP/probed" on bin's probed(thread, i) with a
// group unique to the test, and removes it at the end.
func addUprobe(t testing.TB, root *tracefs.FS, bin string) string {
	t.Helper()
	_, off := testenv.FuncSymbol(t, bin, "probed")
	group := strings.ToLower(regexp.MustCompile(`\W`).ReplaceAllString(fmt.Sprintf("gprobe_%s_%d", t.Name(), os.Getpid()), "_"))
	def := fmt.Sprintf("p:%s/probed %s:0x%x thread=%%di:s32 i=%%si:s64", group, bin, off)
	if err := root.Write(probe.Uprobe, def); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := root.Delete(probe.Uprobe, group, "probed"); err != nil {
			t.Errorf("remove probe: %v", err)
		}
	})
	return group
}

func report(t testing.TB, file string) string {
	t.Helper()
	out, err := exec.Command("trace-cmd", "report", "-i", file).CombinedOutput()
	if err != nil {
		t.Fatalf("trace-cmd report: %v\n%s", err, out)
	}
	return string(out)
}

// gprobeOption reads the gprobe metadata option of a trace.dat file.
func gprobeOption(t testing.TB, file string) tracefmt.Metadata {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, err := tracefmt.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if f.Gprobe == nil {
		t.Fatal("no gprobe option in", file)
	}
	return *f.Gprobe
}

var probedLine = regexp.MustCompile(`(?m)^\s*calls-(\d+)\s+\[\d+\]\s+[\d.]+: probed:\s+\((?:0x)?[0-9a-f]+\) thread=(\d+) i=(\d+)$`)

// TestRoundTrip: a program calls probed() exactly N times on 4 threads;
// the recording holds exactly those N calls with their arguments, read
// back by trace-cmd.
func TestRoundTrip(t *testing.T) {
	root := requireTracing(t)
	bin := buildCalls(t)
	group := addUprobe(t, root, bin)
	const n, threads = 20000, 4
	out := filepath.Join(t.TempDir(), "trace.out")
	res, err := Run(Config{Events: []string{group + ":*"}, Output: out, Command: []string{bin, strconv.Itoa(n), strconv.Itoa(threads)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 {
		t.Errorf("exit code %d, want the command's 3", res.ExitCode)
	}
	if res.Events != n || res.Meta.Lost.Total() != 0 {
		t.Errorf("summary: %s", res.Summary())
	}
	rep := report(t, out)
	seen := map[[2]int]int{}
	tids := map[string]bool{}
	for _, m := range probedLine.FindAllStringSubmatch(rep, -1) {
		th, _ := strconv.Atoi(m[2])
		i, _ := strconv.Atoi(m[3])
		seen[[2]int{th, i}]++
		tids[m[1]] = true
	}
	if got := strings.Count(rep, " probed: "); got != n {
		t.Errorf("trace-cmd report lists %d probed events, want %d", got, n)
	}
	for th := 0; th < threads; th++ {
		for i := 0; i < n/threads; i++ {
			if seen[[2]int{th, i}] != 1 {
				t.Fatalf("call (thread=%d i=%d) seen %d times", th, i, seen[[2]int{th, i}])
			}
		}
	}
	if len(tids) != threads {
		t.Errorf("events from %d threads, want %d", len(tids), threads)
	}
	meta := gprobeOption(t, out)
	if len(meta.Probes) != 1 || !strings.Contains(meta.Probes[0], group+"/probed "+bin) {
		t.Errorf("probe definitions in the file: %q", meta.Probes)
	}
	if meta.Clock != "mono" || meta.ExitCode != 3 || meta.PID == 0 {
		t.Errorf("metadata: %+v", meta)
	}
	if !strings.Contains(meta.SavedTgids, " "+strconv.Itoa(meta.PID)) {
		t.Errorf("saved_tgids lacks the command's tgid %d", meta.PID)
	}
}

// TestOverload: a ring buffer of a few pages and a flood of events, read
// only at the end so that the loss is certain. The loss must be counted
// and add up: every call is either in the file or counted as overrun (the
// uprobe's hit count is the number produced).
func TestOverload(t *testing.T) {
	root := requireTracing(t)
	bin := buildCalls(t)
	group := addUprobe(t, root, bin)
	const n = 50000
	hits := func() uint64 {
		b, _ := root.ReadFile("uprobe_profile")
		for _, l := range strings.Split(string(b), "\n") {
			// "  FILE EVENT HITS"; the event name is shown without group.
			if f := strings.Fields(l); len(f) == 3 && f[0] == bin && f[1] == "probed" {
				v, _ := strconv.ParseUint(f[2], 10, 64)
				return v
			}
		}
		return 0
	}
	before := hits()
	out := filepath.Join(t.TempDir(), "trace.out")
	res, err := Run(Config{Events: []string{group + ":probed"}, Output: out, BufferSizeKB: 8, Command: []string{bin, strconv.Itoa(n), "2"}, lateReaders: true})
	if err != nil {
		t.Fatal(err)
	}
	produced := hits() - before
	l := res.Meta.Lost
	t.Logf("%s; produced %d", res.Summary(), produced)
	if produced != n {
		t.Fatalf("uprobe_profile counted %d hits, want %d", produced, n)
	}
	if l.Overrun == 0 {
		t.Fatalf("no loss with an 8 kB buffer and %d events: %s", n, res.Summary())
	}
	if res.Events+l.Overrun+l.Dropped != produced {
		t.Errorf("written %d + overrun %d + dropped %d != produced %d", res.Events, l.Overrun, l.Dropped, produced)
	}
	if l.PageMissed == 0 || l.PageMissed > l.Overrun {
		t.Errorf("page markers count %d lost, stats %d", l.PageMissed, l.Overrun)
	}
	if !strings.Contains(res.Summary(), "LOST") {
		t.Errorf("summary hides the loss: %s", res.Summary())
	}
	rep := report(t, out)
	if got := strings.Count(rep, " probed: "); uint64(got) != res.Events {
		t.Errorf("trace-cmd report lists %d events, record counted %d", got, res.Events)
	}
	var dropped uint64
	for _, m := range regexp.MustCompile(`CPU:\d+ \[(\d+) EVENTS DROPPED\]`).FindAllStringSubmatch(rep, -1) {
		v, _ := strconv.ParseUint(m[1], 10, 64)
		dropped += v
	}
	if dropped != l.PageMissed {
		t.Errorf("trace-cmd report shows %d dropped, the pages hold %d", dropped, l.PageMissed)
	}
	if meta := gprobeOption(t, out); meta.Lost.Overrun != l.Overrun || meta.Lost.PageMissed != l.PageMissed {
		t.Errorf("file records loss %+v, session %+v", meta.Lost, l)
	}
}

// TestStaticTracepoint records sched:sched_process_exec: the command's
// own exec and its two children's, and only the followed processes'.
func TestStaticTracepoint(t *testing.T) {
	root := requireTracing(t)
	if !root.Exists("events/sched/sched_process_exec/format") {
		testenv.Missing(t, "sched:sched_process_exec")
	}
	out := filepath.Join(t.TempDir(), "trace.out")
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(Config{Events: []string{"sched:sched_process_exec"}, Output: out,
		Command: []string{"sh", "-c", fmt.Sprintf("%s; %s; exit 5", truePath, truePath)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 5 {
		t.Errorf("exit code %d, want 5", res.ExitCode)
	}
	rep := report(t, out)
	got := regexp.MustCompile(`sched_process_exec:\s+filename=(\S+)`).FindAllStringSubmatch(rep, -1)
	shPath, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0][1] != shPath || got[1][1] != truePath || got[2][1] != truePath {
		t.Errorf("exec events %q, want %s then 2 of %s:\n%s", got, shPath, truePath, rep)
	}
	if res.Events != 3 {
		t.Errorf("record counted %d events", res.Events)
	}
}

func TestBadConfig(t *testing.T) {
	root := requireTracing(t)
	for _, c := range []Config{
		{All: true, PID: 1},
		{PID: 1, Command: []string{"true"}},
		{Command: []string{"/does/not/exist"}, Events: []string{"sched:sched_switch"}},
		{Command: []string{"true"}, Events: []string{"nosuchsystem_zz:*"}},
		{Command: []string{"true"}, Events: []string{"sched"}},
		{Command: []string{"true"}, Events: []string{"sched:[x"}},
		{Command: []string{"true"}, Events: []string{"sched:sched_switch"}, Output: "/does/not/exist/trace.out"},
		{Events: []string{"sched:sched_switch"}},
	} {
		c.Tracefs = root.Root
		if c.Output == "" {
			c.Output = filepath.Join(t.TempDir(), "trace.out")
		}
		_, err := Run(c)
		if err == nil {
			t.Errorf("%+v: no error", c)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("multi-line error: %v", err)
		}
		if _, serr := os.Stat(c.Output); serr == nil {
			t.Errorf("%+v: output written despite %v", c, err)
		}
	}
}

// TestFollowPID follows a running shell (-p): the execs of its children
// are recorded until it exits; with All, a command's events and others'.
func TestFollowPID(t *testing.T) {
	root := requireTracing(t)
	if !root.Exists("events/sched/sched_process_exec/format") {
		testenv.Missing(t, "sched:sched_process_exec")
	}
	sh := exec.Command("sh", "-c", "read x; for i in 1 2 3; do /bin/true; done")
	stdin, err := sh.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "trace.out")
	type result struct {
		res *Result
		err error
	}
	done := make(chan result)
	go func() {
		r, err := Run(Config{Events: []string{"sched:sched_process_exec"}, Output: out, PID: sh.Process.Pid})
		done <- result{r, err}
	}()
	// Release the shell once tracing is on with the pid filter set. A new
	// instance starts with tracing_on at 1 until Run turns it off, so
	// tracing_on alone would release the shell too early (seen in CI:
	// the first exec was missed); set_event_pid is written just before
	// tracing is turned on for the recording.
	inst := tracefs.At(root.Path(fmt.Sprintf("instances/gprobe-%d", os.Getpid())))
	want := strconv.Itoa(sh.Process.Pid) + "\n"
	var r result
wait:
	for {
		select {
		case r = <-done:
			t.Fatalf("recording ended early: %v", r.err)
		case <-time.After(5 * time.Millisecond):
			pids, _ := inst.ReadFile("set_event_pid")
			if on, _ := inst.ReadFile("tracing_on"); string(pids) == want && string(on) == "1\n" {
				break wait
			}
		}
	}
	stdin.Close()
	_ = sh.Wait()
	r = <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.Events != 3 || r.res.Meta.PID != sh.Process.Pid {
		t.Errorf("%s; pid %d", r.res.Summary(), r.res.Meta.PID)
	}
	if n := strings.Count(report(t, out), "filename=/bin/true"); n != 3 {
		t.Errorf("%d execs of /bin/true, want 3", n)
	}
}

// TestNoForeignEvents: while another process floods read(2), recording a
// short command must not pick up a single one of its events (rewriting
// set_event_pid used to lift the filter for a moment).
func TestNoForeignEvents(t *testing.T) {
	root := requireTracing(t)
	if !root.Exists("events/syscalls/sys_enter_read/format") {
		testenv.Missing(t, "syscalls:sys_enter_read")
	}
	flood := exec.Command("dd", "if=/dev/zero", "of=/dev/null", "bs=1")
	if err := flood.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { flood.Process.Kill(); flood.Wait() })
	for i := 0; i < 5; i++ {
		out := filepath.Join(t.TempDir(), "trace.out")
		if _, err := Run(Config{Events: []string{"syscalls:sys_enter_read"}, Output: out, Command: []string{"sh", "-c", "cat /proc/version >/dev/null"}}); err != nil {
			t.Fatal(err)
		}
		rep := report(t, out)
		if strings.Contains(rep, fmt.Sprintf("-%d ", flood.Process.Pid)) {
			t.Fatalf("events of the flooding process %d recorded:\n%.2000s", flood.Process.Pid, rep)
		}
		if !strings.Contains(rep, "cat-") {
			t.Fatalf("the command's reads are missing:\n%.2000s", rep)
		}
	}
}

// TestAll records without a pid filter (-a): the command's exec is there,
// and so may be others'; the command still ends the recording.
func TestAll(t *testing.T) {
	root := requireTracing(t)
	if !root.Exists("events/sched/sched_process_exec/format") {
		testenv.Missing(t, "sched:sched_process_exec")
	}
	out := filepath.Join(t.TempDir(), "trace.out")
	res, err := Run(Config{Events: []string{"sched:sched_process_exec"}, Output: out, All: true, Command: []string{"sh", "-c", "/bin/true"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Meta.All || res.Events < 2 {
		t.Errorf("%s (all=%v)", res.Summary(), res.Meta.All)
	}
	if !strings.Contains(report(t, out), "filename=/bin/true") {
		t.Error("the command's child exec is missing")
	}
}
