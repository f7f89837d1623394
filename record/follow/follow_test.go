package follow

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStart: the hooks run in order, the command is stopped after its
// execve (traced, already the new program) when stopped runs, and runs to
// its end once let go.
func TestStart(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 7")
	var tid, pid int
	var state, exe string
	err := Start(cmd,
		func(t int) error { tid = t; return nil },
		func(p int) error {
			pid = p
			stat, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
			if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 {
				state = f[0]
			}
			exe, _ = os.Readlink("/proc/" + strconv.Itoa(p) + "/exe")
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if tid <= 0 || pid != cmd.Process.Pid {
		t.Errorf("hooks saw thread %d and pid %d (command %d)", tid, pid, cmd.Process.Pid)
	}
	if state != "t" || !strings.HasSuffix(exe, "sh") {
		t.Errorf("when stopped: state %q (want t, traced), executable %q", state, exe)
	}
	if code := ExitCode(cmd); code != 7 {
		t.Errorf("exit code %d, want 7", code)
	}
}

// TestStartFails: a failing hook kills and reaps the command and returns
// the hook's error; a command that cannot start is an error.
func TestStartFails(t *testing.T) {
	boom := errors.New("boom")
	cmd := exec.Command("/bin/sleep", "10")
	if err := Start(cmd, nil, func(int) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Start: %v", err)
	}
	if cmd.ProcessState == nil || ExitCode(cmd) != 128+int(syscall.SIGKILL) {
		t.Errorf("the command was not killed and reaped: %v", cmd.ProcessState)
	}
	if err := Start(exec.Command("/nonexistent/x"), nil, nil); err == nil || !strings.Contains(err.Error(), "start /nonexistent/x") {
		t.Errorf("a missing command: %v", err)
	}
	if err := Start(exec.Command("/bin/true"), func(int) error { return boom }, nil); !errors.Is(err, boom) {
		t.Errorf("a failing beforeFork: %v", err)
	}
}

// TestEnd: an interrupted session asks the command to end with SIGTERM;
// a second signal kills it.
func TestEnd(t *testing.T) {
	ready := t.TempDir() + "/ready"
	for _, c := range []struct {
		script string
		second bool
		want   int
	}{
		{": > " + ready + "; sleep 10", false, 128 + int(syscall.SIGTERM)},
		{"trap '' TERM; : > " + ready + "; sleep 10", true, 128 + int(syscall.SIGKILL)},
	} {
		os.Remove(ready)
		cmd := exec.Command("/bin/sh", "-c", c.script)
		if err := Start(cmd, nil, nil); err != nil {
			t.Fatal(err)
		}
		for _, err := os.Stat(ready); err != nil; _, err = os.Stat(ready) {
			time.Sleep(10 * time.Millisecond)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		sigs := make(chan os.Signal, 1)
		if c.second {
			sigs <- syscall.SIGINT
		}
		if got := End(cmd, done, sigs); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.script, got, c.want)
		}
	}
}

// TestNotify: a stop signal reaches the channel, not the default action
// (SIGHUP would end the test binary), until stop.
func TestNotify(t *testing.T) {
	sigs, stop := Notify()
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-sigs:
		if s != syscall.SIGHUP {
			t.Errorf("got %v, want SIGHUP", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("SIGHUP not relayed")
	}
}
