package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gprobe/gprobe/internal/testenv"
)

// container is a process in a mount namespace of its own (unshare -m),
// with a tmpfs over dir holding copies of binaries: their paths exist
// only in that namespace. The process waits for a line on its stdin, then
// runs its command.
type container struct {
	pid   int
	dir   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startContainer copies bins into DIR/app in a new mount namespace and
// waits there; then runs run (a shell command, with $APP the directory)
// when told to (go_).
func startContainer(t *testing.T, bins []string, run string) *container {
	t.Helper()
	unshare := testenv.Tool(t, "unshare")
	if os.Geteuid() != 0 {
		testenv.Missing(t, "root, to make a mount namespace")
	}
	dir := t.TempDir()
	script := "mount -t tmpfs gprobe-targetns-test " + dir + " && mkdir " + dir + "/app"
	for _, b := range bins {
		script += " && cp " + b + " " + dir + "/app/"
	}
	script += " && echo ready && read go && APP=" + dir + "/app && " + run
	cmd := exec.Command(unshare, "-m", "--propagation", "private", "sh", "-c", script)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &container{pid: cmd.Process.Pid, dir: dir, cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(func() { c.cmd.Process.Kill(); c.cmd.Wait() })
	if line, err := c.out.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the namespace did not start: %q %v", line, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "app")); err == nil {
		t.Fatal("the namespace's files are visible outside it")
	}
	return c
}

// go_ lets the container run its command.
func (c *container) go_(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
}

// TestTargetNamespace probes a binary that exists only inside a mount
// namespace made with unshare, from outside, with --target-ns: gprobe's
// answers are perf's, the definition it installs names the path as the
// namespace sees it (as perf's does), and the events of the process in the
// namespace are recorded.
func TestTargetNamespace(t *testing.T) {
	perf := testenv.RequirePerf(t)
	home := ownHome(t)
	fs := testenv.Tracefs(t)
	testenv.Tool(t, "trace-cmd")
	magic := testenv.BuildC(t, "gcc", "testdata/uprobe/magic.c", "magic", "-O2", "-g")
	prog := testenv.BuildC(t, "gcc", "testdata/uprobe/prog.c", "prog-O2", "-O2", "-g")
	c := startContainer(t, []string{magic, prog}, "exec $APP/magic 7")
	app := c.dir + "/app"
	ns := strconv.Itoa(c.pid)
	stats := &diffStats{}
	for _, args := range [][]string{
		{"-D", "magic"}, {"-D", "magic%return"}, {"-D", "magic%return r=$retval:x32"},
		{"-D", "work n"}, {"-D", "work:3"}, {"-D", "prog.c:20"}, {"-D", "add_item%return $retval"},
		{"-L", "work"}, {"-V", "work"}, {"-V", "add_item:4"}, {"-F"}, {"-F", "*item*"},
		{"-D", "nosuch"},
	} {
		bin := app + "/prog-O2"
		if strings.Contains(strings.Join(args, " "), "magic") {
			bin = app + "/magic"
		}
		// perf resolves -x in the namespace only when --target-ns comes
		// first (its options are applied in order).
		full := append([]string{"--target-ns", ns, "-x", bin}, args...)
		p, g := perf.LiveIn(home, full...), runGprobe(full...)
		if !same(p, g) {
			t.Errorf("gprobe %s differs from perf probe:\nperf: %s\ngprobe: %s", strings.Join(full, " "), p, g)
			continue
		}
		stats.add(&stats.same, "")
	}
	// perf applies its options in order: -x before --target-ns is looked
	// up outside the namespace, where it does not exist. gprobe looks it
	// up in the namespace whatever the order.
	swapped := []string{"-x", app + "/magic", "--target-ns", ns, "-D", "magic"}
	p, g := perf.LiveIn(home, swapped...), runGprobe(swapped...)
	if want := runGprobe("--target-ns", ns, "-x", app+"/magic", "-D", "magic"); p.Code != exitUsage ||
		!strings.HasPrefix(p.Stderr, "Failed to get the absolute path of "+app+"/magic: No such file or directory") || g != want {
		t.Errorf("-x before --target-ns: want perf's failure and gprobe's answer for the other order:\nperf: %s\ngprobe: %s\nwant: %s", p, g, want)
	} else {
		stats.add(&stats.midInsn, fmt.Sprintf("perf wrong (-x looked up outside the namespace when given before --target-ns): %q", swapped))
	}
	// Written for real, both name the binary as the namespace sees it.
	for _, tool := range []string{"perf", "gprobe"} {
		args := []string{"--target-ns", ns, "-x", app + "/magic", "-q", "-a", "gprobe_targetns:" + tool + "=magic"}
		var r result
		if tool == "perf" {
			r = perf.LiveIn(home, args...)
		} else {
			r = runGprobe(args...)
		}
		t.Cleanup(func() { runGprobe("-q", "-d", "gprobe_targetns:"+tool) })
		if r.Code != 0 {
			t.Fatalf("%s %s: %s", tool, strings.Join(args, " "), r)
		}
	}
	events, err := os.ReadFile(fs + "/uprobe_events")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(events), "\n") {
		if strings.HasPrefix(l, "p:gprobe_targetns/") {
			lines = append(lines, l)
		}
	}
	_, off := testenv.FuncSymbol(t, magic, "magic")
	place := fmt.Sprintf(" %s/magic:0x%016x", app, off)
	if len(lines) != 2 || !strings.HasSuffix(lines[0], place) || !strings.HasSuffix(lines[1], place) {
		t.Fatalf("installed definitions %q, want perf's and gprobe's ending in %q", lines, place)
	}
	if r := runGprobe("-q", "-d", "gprobe_targetns:perf"); r.Code != 0 {
		t.Fatalf("deleting perf's event: %s", r)
	}
	// The process in the namespace runs magic 7 times: recorded from outside.
	out := filepath.Join(t.TempDir(), "trace.dat")
	rec := exec.Command(testenv.Gprobe(t), "record", "-e", "gprobe_targetns:gprobe", "-p", ns, "-o", out)
	rec.Stderr = os.Stderr
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the session is set up
	c.go_(t)
	if err := waitTimeout(rec, 30*time.Second); err != nil {
		t.Fatalf("gprobe record: %v", err)
	}
	rep, err := exec.Command("trace-cmd", "report", "-i", out).CombinedOutput()
	if err != nil {
		t.Fatalf("trace-cmd report: %v\n%s", err, rep)
	}
	if n := strings.Count(string(rep), " gprobe:"); n != 7 {
		t.Errorf("trace-cmd report shows %d events of the process in the namespace, want 7:\n%s", n, rep)
	}
	stats.report(t)
}

// --target PID probes that process's executable, named as its namespace
// names it.
func TestTargetProcess(t *testing.T) {
	testenv.Heavy(t, "a mount namespace made with unshare")
	magic := testenv.BuildC(t, "gcc", "testdata/uprobe/magic.c", "magic", "-O2", "-g")
	c := startContainer(t, []string{magic}, "exec $APP/magic 100000")
	c.go_(t)
	exe := c.dir + "/app/magic"
	for i := 0; ; i++ {
		if l, _ := os.Readlink("/proc/" + strconv.Itoa(c.pid) + "/exe"); filepath.Base(l) == "magic" {
			break
		}
		if i == 200 {
			t.Fatal("the process did not start magic")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, off := testenv.FuncSymbol(t, magic, "magic")
	g := runGprobe("--target", strconv.Itoa(c.pid), "-D", "magic")
	if want := fmt.Sprintf("p:probe_magic/magic %s:0x%x\n", exe, off); g.Code != 0 || g.Stdout != want {
		t.Errorf("--target %d -D magic: %s\nwant %q", c.pid, g, want)
	}
	if g := runGprobe("--target-ns", "99999999", "-x", exe, "-D", "magic"); g.Code != exitENOENT || !strings.Contains(g.Stderr, "no such process") {
		t.Errorf("--target-ns of no process: %s", g)
	}
	if g := runGprobe("--target-ns", "abc", "-x", exe, "-D", "magic"); g.Code != exitENOENT || !strings.Contains(g.Stderr, "not a process id") {
		t.Errorf("--target-ns abc: %s", g)
	}
	// Outside the namespace the path does not exist.
	if g := runGprobe("-x", exe, "-D", "magic"); g.Code == 0 {
		t.Errorf("-x %s without --target-ns: %s", exe, g)
	}
}

func waitTimeout(cmd *exec.Cmd, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		cmd.Process.Kill()
		return fmt.Errorf("still running after %v", d)
	}
}

// ownHome gives the test a HOME of its own: perf adds every -x binary to
// its build-id cache there (HOME/.debug), and gprobe reads that cache.
func ownHome(t *testing.T) string {
	t.Helper()
	home := testenv.Home(t)
	t.Setenv("HOME", home)
	return home
}
