package tracefs_test

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gprobe/gprobe/emit/tracefs"
)

// newTestInstance creates an instance named after the test and pid and
// removes it at the end, even when the test fails.
func newTestInstance(t *testing.T, fs *tracefs.FS) *tracefs.Instance {
	t.Helper()
	in, err := fs.NewInstance(group(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if fs.Exists("instances/" + in.Name) {
			if err := in.Remove(); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	return in
}

func TestInstanceLifecycle(t *testing.T) {
	fs := realFS(t)
	in := newTestInstance(t, fs)
	if in.Parent() != fs || !fs.Exists("instances/"+in.Name) || !in.Exists("per_cpu/cpu0/trace_pipe_raw") {
		t.Fatalf("instance %s at %s: no per-CPU buffers", in.Name, in.Root)
	}
	names, err := fs.Instances()
	if err != nil || !slices.Contains(names, in.Name) {
		t.Fatalf("Instances() = %v, %v; want %s in it", names, err, in.Name)
	}

	// A taken name: tracefs.NewInstance refuses, tracefs.NewUniqueInstance numbers.
	if _, err := fs.NewInstance(in.Name); !errors.Is(err, tracefs.ErrExist) {
		t.Errorf("second tracefs.NewInstance(%s): %v, want tracefs.ErrExist", in.Name, err)
	}
	in2, err := fs.NewUniqueInstance(in.Name)
	if err != nil {
		t.Fatal(err)
	}
	if in2.Name != in.Name+"-1" {
		t.Errorf("tracefs.NewUniqueInstance(%s) = %s, want %s-1", in.Name, in2.Name, in.Name)
	}
	if err := in2.Remove(); err != nil {
		t.Error(err)
	}

	// Control files act on the instance only.
	if err := in.WriteFile("trace_clock", "mono"); err != nil {
		t.Fatal(err)
	}
	b, err := in.ReadFile("trace_clock")
	if err != nil || !strings.Contains(string(b), "[mono]") {
		t.Errorf("instance trace_clock = %q, %v; want [mono] selected", b, err)
	}
	err = in.WriteFile("trace_clock", "no-such-clock")
	var we *tracefs.WriteError
	if !errors.Is(err, tracefs.ErrInvalid) || !errors.Is(err, syscall.EINVAL) || !errors.As(err, &we) || strings.Contains(err.Error(), "\n") {
		t.Errorf("bad trace_clock: %v, want a one-line *tracefs.WriteError wrapping tracefs.ErrInvalid and EINVAL", err)
	}
	if err := in.WriteFile("no_such_file", "1"); !errors.Is(err, tracefs.ErrNotFound) {
		t.Errorf("WriteFile(no_such_file): %v, want tracefs.ErrNotFound", err)
	}
	if _, err := in.ReadFile("no_such_file"); !errors.Is(err, tracefs.ErrNotFound) {
		t.Errorf("ReadFile(no_such_file): %v, want tracefs.ErrNotFound", err)
	}

	// tracefs.Event enables are per instance.
	const sys, ev = "sched", "sched_process_exec"
	f, err := fs.EventFormat(sys, ev)
	if err != nil || !strings.Contains(string(f), "name: "+ev) {
		t.Fatalf("EventFormat(%s:%s) = %q, %v", sys, ev, f, err)
	}
	if err := in.Enable(sys, ev, true); err != nil {
		t.Fatal(err)
	}
	if on, err := in.Enabled(sys, ev); !on || err != nil {
		t.Errorf("instance %s:%s enabled = %v, %v; want true", sys, ev, on, err)
	}

	// An open buffer keeps the instance: Remove says busy, and works once
	// it is closed, enabled events and all.
	rd, err := os.Open(in.Path("per_cpu/cpu0/trace_pipe_raw"))
	if err != nil {
		t.Fatal(err)
	}
	err = in.Remove()
	rd.Close()
	if !errors.Is(err, tracefs.ErrBusy) || !errors.Is(err, syscall.EBUSY) {
		t.Errorf("Remove with an open trace_pipe_raw: %v, want tracefs.ErrBusy", err)
	}
	if err := in.Remove(); err != nil {
		t.Fatal(err)
	}
	if fs.Exists("instances/" + in.Name) {
		t.Errorf("instance %s still exists after Remove", in.Name)
	}
}

func TestInstanceBadNames(t *testing.T) {
	fs := tracefs.At(t.TempDir()) // refused before tracefs is touched
	for _, name := range []string{"", ".", "..", "a/b", "a\nb"} {
		if _, err := fs.NewInstance(name); !errors.Is(err, tracefs.ErrInvalid) {
			t.Errorf("tracefs.NewInstance(%q): %v, want tracefs.ErrInvalid", name, err)
		}
	}
}

// TestAppend adds pids to an instance's set_event_pid one command at a time
// (the list grows: ">>" does not truncate it) and gets a refused command
// back as a *WriteError naming the file.
func TestAppend(t *testing.T) {
	fs := realFS(t)
	in := newTestInstance(t, fs)
	pid := strconv.Itoa(os.Getpid())
	for _, p := range []string{"1", pid} {
		if err := in.Append("set_event_pid", p); err != nil {
			t.Fatal(err)
		}
	}
	b, err := in.ReadFile("set_event_pid")
	if got := strings.Fields(string(b)); err != nil || !slices.Contains(got, "1") || !slices.Contains(got, pid) {
		t.Errorf("set_event_pid after appending 1 and %s: %q, %v", pid, got, err)
	}
	err = in.Append("set_event_pid", "not-a-pid")
	var we *tracefs.WriteError
	if !errors.As(err, &we) || we.File != "set_event_pid" || !errors.Is(err, tracefs.ErrInvalid) {
		t.Errorf("appending a bad pid: %v", err)
	}
	if err := in.Append("set_event_pid", "1\n2"); !errors.Is(err, tracefs.ErrInvalid) {
		t.Errorf("appending two lines at once: %v", err)
	}
	if err := in.WriteFile("set_event_pid", ""); err != nil {
		t.Error(err)
	}
}
