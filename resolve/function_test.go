package resolve

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/gprobe/gprobe/resolve/target"
)

// TestFunction: a function's entry and return probe; the errors name the
// function in one line, with perf's errno.
func TestFunction(t *testing.T) {
	r, err := Open(Options{Target: target.Options{Vmlinux: "../testdata/vmlinux-fixtures/x86_64-dwarf5-O2.elf", NoCache: true},
		NoInlines: true, MaxProbes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	entry, rets, err := Function(r, "do_sys_openat2")
	if err != nil {
		t.Fatal(err)
	}
	if entry.Return || !strings.Contains(entry.String(), "do_sys_openat2") || len(rets) != 1 || !rets[0].Return {
		t.Errorf("entry %s, returns %v", entry.String(), rets)
	}
	for fn, want := range map[string]syscall.Errno{
		"do_sys_openat2:3": syscall.EINVAL,
		"no_such_function": syscall.ENOENT,
	} {
		_, _, err := Function(r, fn)
		if err == nil || Errno(err) != want {
			t.Errorf("%s: %v (errno %v), want errno %v", fn, err, Errno(err), want)
			continue
		}
		t.Logf("%s: %v", fn, err)
	}
}

// TestOpenIn: a context done by the end of Open gives its error and no
// resolver; otherwise Open's answer.
func TestOpenIn(t *testing.T) {
	o := Options{Target: target.Options{Vmlinux: "../testdata/vmlinux-fixtures/x86_64-dwarf5-O2.elf", NoCache: true}}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := OpenIn(ctx, o)
	if err != nil || r == nil {
		t.Fatalf("%v %v", r, err)
	}
	r.Close()
	cancel()
	if r, err := OpenIn(ctx, o); r != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v %v", r, err)
	}
}
