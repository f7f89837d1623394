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

	"github.com/gprobe/gprobe/internal/testenv"
)

// The record subcommand end to end, on the real tracefs with static
// tracepoints (the uprobe round trip lives in package record).

// requireRecording needs tracefs (mounted here if it is not), its
// sched:sched_process_exec tracepoint, root and trace-cmd.
func requireRecording(t *testing.T) {
	t.Helper()
	root := testenv.Tracefs(t)
	testenv.Tool(t, "trace-cmd")
	if _, err := os.Stat(filepath.Join(root, "events/sched/sched_process_exec/format")); err != nil {
		testenv.Missing(t, "sched:sched_process_exec: %v", err)
	}
}

// instancesOf lists the tracefs instances a gprobe process pid created.
func instancesOf(pid int) []string {
	m, _ := filepath.Glob(fmt.Sprintf("/sys/kernel/tracing/instances/gprobe-%d*", pid))
	return m
}

// followsChild tells whether gprobe process pid is recording with tracing
// on and its pid filter holding a child of its own that has executed
// command (before the exec, the child is still a copy of gprobe).
func followsChild(pid int, command string) bool {
	in := instancesOf(pid)
	if len(in) == 0 {
		return false
	}
	on, _ := os.ReadFile(filepath.Join(in[0], "tracing_on"))
	pids, _ := os.ReadFile(filepath.Join(in[0], "set_event_pid"))
	if string(on) != "1\n" {
		return false
	}
	for _, p := range strings.Fields(string(pids)) {
		stat, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		argv, _ := os.ReadFile("/proc/" + p + "/cmdline")
		if len(f) > 1 && f[1] == strconv.Itoa(pid) && strings.HasPrefix(string(argv), command+"\x00") {
			return true
		}
	}
	return false
}

func TestRecordSignals(t *testing.T) {
	requireRecording(t)
	bin := testenv.Gprobe(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "trace.out")
			var stderr bytes.Buffer
			cmd := exec.Command(bin, "record", "-e", "sched:sched_process_exec", "-o", out, "--",
				"sh", "-c", "while :; do true; /bin/true; sleep 0.01; done")
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait until the command runs traced, then let some execs
			// happen. tracing_on alone does not tell: a new instance
			// starts with it at 1; the pid filter holding gprobe's child
			// does.
			deadline := time.Now().Add(20 * time.Second)
			for !followsChild(cmd.Process.Pid, "sh") {
				if time.Now().After(deadline) {
					t.Fatalf("gprobe %d never started tracing its command\n%s", cmd.Process.Pid, &stderr)
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			code := cmd.ProcessState.ExitCode()
			// The shell got SIGTERM from gprobe: its status is 128+15.
			if code != 143 {
				t.Errorf("exit %d (%v), want 143 (the command's SIGTERM)\n%s", code, err, &stderr)
			}
			if !strings.Contains(stderr.String(), "interrupted by "+sig.String()) {
				t.Errorf("summary does not tell the interruption:\n%s", &stderr)
			}
			if left := instancesOf(cmd.Process.Pid); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
			rep, err := exec.Command("trace-cmd", "report", "-i", out).CombinedOutput()
			if err != nil {
				t.Fatalf("trace-cmd report: %v\n%s", err, rep)
			}
			if n := len(regexp.MustCompile(`sched_process_exec:\s+filename=/bin/true`).FindAllIndex(rep, -1)); n == 0 {
				t.Errorf("no exec events recorded:\n%s", rep)
			}
		})
	}
}

func TestRecordCLI(t *testing.T) {
	requireRecording(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "t.out")
	// Two execs: the shell itself and /bin/true.
	r := runGprobe("record", "-e", "sched:sched_process_exec", "-o", out, "--", "sh", "-c", "/bin/true; exit 7")
	if r.Code != 7 {
		t.Errorf("exit %d, want the command's 7: %s", r.Code, r)
	}
	if !regexp.MustCompile(`^gprobe record: 2 events, \d+ \w+ written to ` + regexp.QuoteMeta(out) + `, no events lost\n$`).MatchString(r.Stderr) {
		t.Errorf("summary: %q", r.Stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"record", "-e", "nosuch_zz:ev", "--", "true"}, `gprobe record: bad event "nosuch_zz:ev": no such event in`},
		{[]string{"record", "-e", "sched", "--", "true"}, `gprobe record: bad event "sched": want GROUP:EVENT`},
		{[]string{"record", "-a", "-p", "1", "-e", "sched:sched_switch"}, "gprobe record: invalid record settings: -a and -p exclude each other"},
		{[]string{"record", "-e", "sched:sched_switch"}, "gprobe record: invalid record settings: nothing to follow"},
		{[]string{"record", "-e", "sched:sched_switch", "-o", filepath.Join(dir, "no", "t.out"), "--", "true"}, "gprobe record: invalid record settings: output directory"},
		{[]string{"record", "-e", "sched:sched_switch", "--", filepath.Join(dir, "nonexistent")}, "gprobe record: invalid record settings: exec"},
	} {
		r := runGprobe(c.args...)
		if r.Code != exitEINVAL || !strings.HasPrefix(r.Stderr, c.want) || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("%q: %s\nwant exit %d and %q", c.args, r, exitEINVAL, c.want)
		}
	}
}
