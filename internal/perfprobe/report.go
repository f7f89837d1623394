package perfprobe

import (
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/record"
	"github.com/gprobe/gprobe/record/khist"
	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/sdt"
)

// perf's last line of a failed -a, -d and -l ("Error:" trailers), to which
// -v adds the reason (pr_err_with_code).
const (
	AddTrailer  = "  Error: Failed to add events."
	DelTrailer  = "  Error: Failed to delete events."
	ListTrailer = "  Error: Failed to show event list."
)

// Status is perf's exit status for -no (negative errno & 0xff).
func Status(no syscall.Errno) int { return 256 - int(no) }

// AddFailure is perf's report of a failed -a (install.Add's error err):
// the text to print, its last line AddTrailer when perf prints one; the
// exit status (256 - install.Errno; ENOENT for a --target-ns process that
// cannot be entered); and whether -v adds the reason to the trailer.
// Failures that say it all in one line (the installed events, a kind's
// events file) have no trailer.
func AddFailure(err error) (text string, status int, reason bool) {
	var ae *install.AddError
	var ee *install.ExistsError
	errors.As(err, &ae)
	noKind := errors.Is(err, tracefs.ErrNoKprobes) || errors.Is(err, tracefs.ErrNoUprobes) || errors.Is(err, tracefs.ErrNoKind)
	status = Status(install.Errno(err))
	switch {
	case ae != nil && ae.Step == install.StepNamespace:
		return fmt.Sprintf("%v\n%s", err, AddTrailer), Status(syscall.ENOENT), false
	case ae != nil && (ae.Step == install.StepList || ae.Step == install.StepKinds || ae.Step == install.StepRaw && noKind):
		return err.Error(), status, false
	case errors.As(err, &ee):
		return fmt.Sprintf("Error: event \"%s\" already exists.\n"+
			" Hint: Remove existing event by 'perf probe -d'\n"+
			"       or force duplicates by 'perf probe -f'\n"+
			"       or set 'force=yes' in BPF source.\n%s", ee.Name, AddTrailer), status, false
	case errors.Is(err, install.ErrTooManyNames):
		return "Too many events are on the same function.\n" + AddTrailer, status, false
	}
	return fmt.Sprintf("%v\n%s", err, AddTrailer), status, true
}

// Added writes perf's report of the events added ("Added new event(s):",
// a line each, and the perf record hint for the last), nothing for an
// empty plan; find names each probe's point (install.Added).
func Added(w io.Writer, plan []install.Event, find install.PointFinder) {
	if len(plan) == 0 {
		return
	}
	s := ":"
	if len(plan) > 1 {
		s = "s:"
	}
	fmt.Fprintf(w, "Added new event%s\n", s)
	for _, ev := range plan {
		fmt.Fprintln(w, install.Added(ev, find))
	}
	last := plan[len(plan)-1].Probe
	fmt.Fprintf(w, "\nYou can now use it in all perf tools, such as:\n\n")
	fmt.Fprintf(w, "\tperf record -e %s:%s -aR sleep 1\n\n", last.Group, last.Event)
}

// DeleteFailure is perf's report of a -d whose filter (the text of the
// filter given) hit no event (err nil), or whose deletions failed with err
// (install.Remove's): the text to print, its last line DelTrailer, and the
// exit status; -v adds the reason to the trailer.
func DeleteFailure(err error, filter string) (text string, status int) {
	var re *install.RemoveError
	switch {
	case err == nil:
		return fmt.Sprintf("\"%s\" does not hit any event.\n%s", filter, DelTrailer), Status(syscall.ENOENT)
	case errors.As(err, &re):
		// Every other match is deleted; each event left is named, with
		// what keeps it.
		return fmt.Sprintf("%v\n%s", re, DelTrailer), Status(install.Errno(err))
	}
	return fmt.Sprintf("Failed to delete event: %v\n%s", err, DelTrailer), Status(install.Errno(err))
}

// SDTFailure is perf's report of SDT points that failed to resolve (the
// error of sdt.Resolver.Specs): the text to print, ending with trailer,
// and the exit status. A probe the kernel would refuse is EINVAL; a point
// that is not found (ENOENT) or matches too many markers (E2BIG) has only
// the trailer unless verbose; any other error is ENOENT with its message.
func SDTFailure(err error, verbose bool, trailer string) (text string, status int) {
	if text, ok := Refused(err, trailer); ok {
		return text, StatusEINVAL
	}
	switch {
	case verbose || !errors.Is(err, sdt.ErrNotFound) && !errors.Is(err, sdt.ErrTooMany):
		text = fmt.Sprintf("%v\n%s", err, trailer)
	default:
		text = trailer
	}
	if errors.Is(err, sdt.ErrTooMany) {
		return text, Status(syscall.E2BIG)
	}
	return text, Status(syscall.ENOENT)
}

// DynamicFailure is the report of -D's or -a's definitions of the kinds
// perf 6.1 does not write that do not read (resolve.Dynamic.Parse's error
// err; eprobes: they are the arguments of --event's probes): the text,
// ending with trailer, and the exit status, perf's usage status for an
// --event that is not SYSTEM/EVENT, ENOENT for an event whose format
// cannot be read. ok is false for a PROBEDEF that does not parse, which
// perf's option parser reports (Message, then -D's usage).
func DynamicFailure(err error, eprobes bool, trailer string) (text string, status int, ok bool) {
	switch {
	case errors.Is(err, resolve.ErrBadEvent):
		return fmt.Sprintf("%v\n%s", err, trailer), StatusUsage, true
	case err != nil && eprobes:
		return fmt.Sprintf("%v\n%s", err, trailer), Status(syscall.ENOENT), true
	}
	return "", 0, false
}

// The exit statuses of gprobe's sessions, which perf probe does not have,
// in the same convention (256 - errno) where an errno fits.

// RecordStatus is gprobe record's exit status for record.Run's error err:
// EINVAL for settings or events that are wrong as given (record.ErrConfig,
// ErrBadEvent, ErrNoEvents), ENOENT for a tracefs that is not there or
// not writable, else 1.
func RecordStatus(err error) int {
	switch {
	case errors.Is(err, record.ErrConfig), errors.Is(err, record.ErrBadEvent), errors.Is(err, record.ErrNoEvents):
		return Status(syscall.EINVAL)
	case errors.Is(err, tracefs.ErrNoTracefs), errors.Is(err, tracefs.ErrPermission):
		return Status(syscall.ENOENT)
	}
	return 1
}

// LatencyStatus is gprobe latency's exit status for the error err of a
// measurement (khist.Open's, khist.Run's, khist.BootReport's, the
// report's): ENOENT for a boot-time measurement that is not there
// (khist.ErrNoBootReport), EINVAL for settings khist refuses
// (khist.ErrConfig), EOPNOTSUPP for a kernel without hist triggers or
// synthetic events (khist.ErrUnsupported), else 256 - install.Errno.
func LatencyStatus(err error) int {
	switch {
	case errors.Is(err, khist.ErrNoBootReport):
		return Status(syscall.ENOENT)
	case errors.Is(err, khist.ErrConfig):
		return Status(syscall.EINVAL)
	case errors.Is(err, khist.ErrUnsupported):
		return Status(syscall.EOPNOTSUPP)
	}
	return Status(install.Errno(err))
}
