package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/record/leftover"
)

// hangupProbe installs a uprobe on the record package's calls program
// (probed(thread, i), called every 100 us with argument -1) in a group of
// the test's own, removed at the end; it returns the group and the
// program.
func hangupProbe(t *testing.T) (*tracefs.FS, string, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("records for real with a gprobe binary built for the tests")
	}
	requireRecording(t)
	root, err := tracefs.Open()
	if err != nil {
		t.Fatal(err)
	}
	prog := testenv.BuildC(t, "gcc", "../../record/testdata/calls.c", "calls", "-O2", "-pthread")
	_, off := testenv.FuncSymbol(t, prog, "probed")
	group := fmt.Sprintf("gprobe_hangup_%d", os.Getpid())
	if err := root.Write(probe.Uprobe, fmt.Sprintf("p:%s/probed %s:0x%x thread=%%di:s32 i=%%si:s64", group, prog, off)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := root.Delete(probe.Uprobe, group, "probed"); err != nil {
			t.Errorf("removing the test's probe: %v", err)
		}
	})
	return root, group, prog
}

// startRecord starts gprobe record on the group's probe around prog, in a
// process group of its own, and waits until it traces the program.
func startRecord(t *testing.T, group, prog, out string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(testenv.Gprobe(t), "record", "-e", group+":probed", "-o", out, "--", prog, "-1")
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !followsChild(cmd.Process.Pid, prog) {
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			t.Fatalf("gprobe %d never started tracing its command\n%s", cmd.Process.Pid, &stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	return cmd, &stderr
}

// TestRecordHangupOnUprobes: SIGHUP (the SSH session closed), SIGQUIT and
// SIGPIPE end gprobe record on real uprobes as Ctrl-C does: the command
// gets SIGTERM, the recording is written, and nothing is left: no tracefs
// instance, no ledger, no temporary file beside the output.
func TestRecordHangupOnUprobes(t *testing.T) {
	root, group, prog := hangupProbe(t)
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "trace.out")
			cmd, stderr := startRecord(t, group, prog, out)
			pid := cmd.Process.Pid
			if _, err := os.Stat(filepath.Join(leftover.Dir, strconv.Itoa(pid))); err != nil {
				t.Errorf("no ledger while recording: %v", err)
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != 143 {
				t.Errorf("exit %d (%v), want 143 (the command's SIGTERM)\n%s", code, err, stderr)
			}
			if !strings.Contains(stderr.String(), "interrupted by "+sig.String()) {
				t.Errorf("the summary does not tell the interruption:\n%s", stderr)
			}
			if left := instancesOf(pid); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
			if _, err := os.Stat(filepath.Join(leftover.Dir, strconv.Itoa(pid))); !os.IsNotExist(err) {
				t.Errorf("ledger left: %v", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("files beside the output: %v", ents)
			}
			rep, err := exec.Command("trace-cmd", "report", "-i", out).CombinedOutput()
			if err != nil {
				t.Fatalf("trace-cmd report: %v\n%s", err, rep)
			}
			if n := len(regexp.MustCompile(`probed:\s+\(\w+\) thread=0 i=\d+`).FindAllIndex(rep, -1)); n == 0 {
				t.Errorf("no uprobe events recorded:\n%.2000s", rep)
			}
			checkInstances(t, root, pid)
		})
	}
}

// checkInstances fails when tracefs has an instance of process pid.
func checkInstances(t *testing.T, root *tracefs.FS, pid int) {
	t.Helper()
	names, _ := root.Instances()
	for _, n := range names {
		if n == leftover.RecordInstance(pid) || strings.HasPrefix(n, leftover.RecordInstance(pid)+"-") {
			t.Errorf("instance %s left", n)
		}
	}
}

// TestCleanupAfterKill: gprobe record killed with SIGKILL leaves its
// instance (and no file beside its output); the next gprobe reports it and
// gprobe cleanup removes it, leaving what runs alone.
func TestCleanupAfterKill(t *testing.T) {
	root, group, prog := hangupProbe(t)
	dir := t.TempDir()
	cmd, _ := startRecord(t, group, prog, filepath.Join(dir, "trace.out"))
	pid := cmd.Process.Pid
	syscall.Kill(-pid, syscall.SIGKILL) // gprobe and the program it follows
	cmd.Wait()
	if len(instancesOf(pid)) == 0 {
		t.Fatal("SIGKILL left no instance: nothing to clean up")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files beside the output after SIGKILL: %v", ents)
	}
	// The report a session prints first on a terminal.
	var report bytes.Buffer
	leftover.Report(&report, root)
	want := fmt.Sprintf("gprobe: gprobe record (pid %d, no longer running) left instance %s; gprobe cleanup removes them\n", pid, leftover.RecordInstance(pid))
	if !strings.Contains(report.String(), want) {
		t.Errorf("report\n%s\nwant the line\n%s", &report, want)
	}
	r := runGprobe("cleanup", "-n", "--pid", strconv.Itoa(pid))
	if r.Code != 0 || r.Stdout != strings.TrimPrefix(strings.TrimSuffix(want, "; gprobe cleanup removes them\n"), "gprobe: ")+"\n" {
		t.Errorf("cleanup -n: %s", r)
	}
	if len(instancesOf(pid)) == 0 {
		t.Fatal("cleanup -n removed the instance")
	}
	r = runGprobe("cleanup", "--pid", strconv.Itoa(pid))
	if r.Code != 0 || r.Stdout != "removed instance "+leftover.RecordInstance(pid)+"\n" || r.Stderr != "" {
		t.Errorf("cleanup: %s", r)
	}
	checkInstances(t, root, pid)
	if _, err := os.Stat(filepath.Join(leftover.Dir, strconv.Itoa(pid))); !os.IsNotExist(err) {
		t.Errorf("ledger left: %v", err)
	}
	r = runGprobe("cleanup", "--pid", strconv.Itoa(pid))
	if r.Code != 0 || r.Stdout != "" || r.Stderr != "gprobe cleanup: nothing left by gprobe processes that no longer run\n" {
		t.Errorf("cleanup again: %s", r)
	}
}
