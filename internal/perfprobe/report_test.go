package perfprobe

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/mountns"
	"github.com/gprobe/gprobe/record"
	"github.com/gprobe/gprobe/record/khist"
	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/sdt"
)

// TestAddFailure: each of install.Add's failures gets perf's text,
// trailer and status; only the ones perf reports with pr_err_with_code
// take -v's reason.
func TestAddFailure(t *testing.T) {
	add := func(s install.Step, err error) error { return &install.AddError{Step: s, Err: err} }
	for _, c := range []struct {
		err    error
		text   string
		status int
		reason bool
	}{
		{add(install.StepNamespace, fmt.Errorf("--target-ns: process 9: %w", mountns.ErrNoProcess)),
			"--target-ns: process 9: no such process\n" + AddTrailer, 254, false},
		{add(install.StepList, tracefs.ErrPermission), tracefs.ErrPermission.Error(), 243, false},
		{add(install.StepRaw, tracefs.ErrNoUprobes), tracefs.ErrNoUprobes.Error(), 254, false},
		{add(install.StepPlan, &install.ExistsError{Name: "probe:x"}), "Error: event \"probe:x\" already exists.\n" +
			" Hint: Remove existing event by 'perf probe -d'\n" +
			"       or force duplicates by 'perf probe -f'\n" +
			"       or set 'force=yes' in BPF source.\n" + AddTrailer, 256 - int(syscall.EEXIST), false},
		{add(install.StepPlan, install.ErrTooManyNames), "Too many events are on the same function.\n" + AddTrailer, 256 - int(syscall.ERANGE), false},
		{add(install.StepWrite, syscall.EBUSY), "device or resource busy\n" + AddTrailer, 256 - int(syscall.EBUSY), true},
	} {
		text, status, reason := AddFailure(c.err)
		if text != c.text || status != c.status || reason != c.reason {
			t.Errorf("AddFailure(%v) = %q, %d, %v; want %q, %d, %v", c.err, text, status, reason, c.text, c.status, c.reason)
		}
	}
}

// TestAdded: perf's report of one and of several events.
func TestAdded(t *testing.T) {
	ev := func(name string) install.Event {
		return install.Event{Req: &install.Request{Point: "vfs_read"}, Probe: probe.Probe{Group: "probe", Event: name, Target: probe.Location{Symbol: "vfs_read"}}}
	}
	find := func(*probe.Probe) string { return "vfs_read" }
	var b strings.Builder
	Added(&b, nil, find)
	Added(&b, []install.Event{ev("a")}, find)
	want := "Added new event:\n" + install.Added(ev("a"), find) + "\n\nYou can now use it in all perf tools, such as:\n\n\tperf record -e probe:a -aR sleep 1\n\n"
	if b.String() != want {
		t.Errorf("one event:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	Added(&b, []install.Event{ev("a"), ev("b")}, find)
	if s := b.String(); !strings.HasPrefix(s, "Added new events:\n") || !strings.HasSuffix(s, "-e probe:b -aR sleep 1\n\n") {
		t.Errorf("two events:\n%s", s)
	}
}

// TestDeleteFailure: no match, events the kernel kept, another failure.
func TestDeleteFailure(t *testing.T) {
	kept := &install.RemoveError{Kept: []install.Kept{{Event: tracefs.Event{Group: "probe", Name: "x"}, Err: tracefs.ErrBusy, Reason: "enabled"}}}
	for _, c := range []struct {
		err    error
		text   string
		status int
	}{
		{nil, "\"probe:*\" does not hit any event.\n" + DelTrailer, 254},
		{kept, kept.Error() + "\n" + DelTrailer, 256 - int(syscall.EBUSY)},
		{tracefs.ErrPermission, "Failed to delete event: " + tracefs.ErrPermission.Error() + "\n" + DelTrailer, 243},
	} {
		if text, status := DeleteFailure(c.err, "probe:*"); text != c.text || status != c.status {
			t.Errorf("DeleteFailure(%v) = %q, %d; want %q, %d", c.err, text, status, c.text, c.status)
		}
	}
}

// TestSDTFailure: perf's lines and statuses for SDT points that fail.
func TestSDTFailure(t *testing.T) {
	const tr = AddTrailer
	for _, tc := range []struct {
		err     error
		verbose bool
		text    string
		status  int
	}{
		{fmt.Errorf("x: %w", sdt.ErrNotFound), false, tr, 254},
		{fmt.Errorf("x: %w", sdt.ErrNotFound), true, "x: " + sdt.ErrNotFound.Error() + "\n" + tr, 254},
		{fmt.Errorf("y: %w", sdt.ErrTooMany), false, tr, 249},
		{fmt.Errorf("y: %w", sdt.ErrTooMany), true, "y: " + sdt.ErrTooMany.Error() + "\n" + tr, 249},
		{errors.New("bad cache"), false, "bad cache\n" + tr, 254},
		{&sdt.RefusedError{Err: errors.New("no")}, false, "The kernel would refuse this definition: " + (&sdt.RefusedError{Err: errors.New("no")}).Error() + "\n" + tr, 234},
	} {
		text, status := SDTFailure(tc.err, tc.verbose, tr)
		if text != tc.text || status != tc.status {
			t.Errorf("SDTFailure(%v, %v) = %q, %d; want %q, %d", tc.err, tc.verbose, text, status, tc.text, tc.status)
		}
	}
}

// TestDynamicFailure: an --event that is not SYSTEM/EVENT is a usage
// error, an event whose format cannot be read ENOENT, both with the
// trailer; a PROBEDEF that does not parse is left to the option parser.
func TestDynamicFailure(t *testing.T) {
	const tr = AddTrailer
	_, bad := resolve.Dynamic{Event: "sched"}.Parse([]string{"prev_pid"})
	_, noFormat := resolve.Dynamic{Event: "sched/x", Format: "/nonexistent/format"}.Parse([]string{"prev_pid"})
	_, syntax := resolve.Dynamic{}.Parse([]string{"+3"})
	if bad == nil || noFormat == nil || syntax == nil {
		t.Fatalf("Parse: %v, %v, %v", bad, noFormat, syntax)
	}
	for _, c := range []struct {
		err     error
		eprobes bool
		text    string
		status  int
		ok      bool
	}{
		{bad, true, `--event "sched": want SYSTEM/EVENT (sched/sched_switch).` + "\n" + tr, 129, true},
		{noFormat, true, fmt.Sprint(noFormat) + "\n" + tr, 254, true},
		{syntax, false, "", 0, false},
		{nil, true, "", 0, false},
	} {
		text, status, ok := DynamicFailure(c.err, c.eprobes, tr)
		if text != c.text || status != c.status || ok != c.ok {
			t.Errorf("DynamicFailure(%v, %v) = %q, %d, %v; want %q, %d, %v", c.err, c.eprobes, text, status, ok, c.text, c.status, c.ok)
		}
	}
}

// TestRecordStatus: record's errors as given are EINVAL, a missing or
// unwritable tracefs ENOENT, anything else 1.
func TestRecordStatus(t *testing.T) {
	for err, want := range map[error]int{
		fmt.Errorf("%w: -p and -a", record.ErrConfig):                   234,
		fmt.Errorf("%w \"x\": want GROUP:EVENT", record.ErrBadEvent):    234,
		fmt.Errorf("%w: no probe events installed", record.ErrNoEvents): 234,
		fmt.Errorf("open: %w", tracefs.ErrNoTracefs):                    254,
		fmt.Errorf("write: %w", tracefs.ErrPermission):                  254,
		errors.New("the command failed"):                                1,
	} {
		if got := RecordStatus(err); got != want {
			t.Errorf("RecordStatus(%v) = %d, want %d", err, got, want)
		}
	}
}

// TestLatencyStatus: a boot-time measurement not there is ENOENT
// whatever its cause, khist's refused settings are EINVAL, a kernel
// without hist triggers EOPNOTSUPP, other errors their errno's status.
func TestLatencyStatus(t *testing.T) {
	for err, no := range map[error]syscall.Errno{
		fmt.Errorf("%w: --by x", khist.ErrConfig):                                              syscall.EINVAL,
		errors.Join(fmt.Errorf("%w: tables for comm", khist.ErrConfig), khist.ErrNoBootReport): syscall.ENOENT,
		fmt.Errorf("README: %w", khist.ErrUnsupported):                                         syscall.EOPNOTSUPP,
		fmt.Errorf("open: %w", tracefs.ErrPermission):                                          syscall.EACCES,
		fmt.Errorf("open: %w", tracefs.ErrNoTracefs):                                           syscall.ENOENT,
		fmt.Errorf("write: %w", syscall.EBUSY):                                                 syscall.EBUSY,
		errors.New("something else"):                                                           syscall.EINVAL,
	} {
		if got := LatencyStatus(err); got != 256-int(no) {
			t.Errorf("LatencyStatus(%v) = %d, want %d", err, got, 256-int(no))
		}
	}
}
