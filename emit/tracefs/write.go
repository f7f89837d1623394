package tracefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/gprobe/gprobe/emit/probe"
)

// WriteError is a definition or deletion the kernel refused. Error() is one
// line: the kernel's reason from error_log and the argument it points at.
type WriteError struct {
	File  string // "uprobe_events"
	Line  string // what was written
	Errno syscall.Errno
	Log   *LogEntry // the matching error_log entry, nil when the kernel logged none
}

func (e *WriteError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s refused %q: ", e.File, e.Line)
	switch {
	case e.Log != nil:
		b.WriteString(e.Log.Message())
	case e.Errno == syscall.EINVAL && e.File == "dynamic_events" && strings.HasPrefix(e.Line, "e"):
		// Linux 6.18 lists e: in README whether or not it was built with
		// CONFIG_EPROBE_EVENTS; without it, every e: line fails so.
		b.WriteString(errnoText(e.Errno) + " without an error_log entry: this kernel may be built without CONFIG_EPROBE_EVENTS")
	default:
		b.WriteString(errnoText(e.Errno))
	}
	return b.String()
}

// Unwrap exposes the sentinel error for the errno and the errno itself.
func (e *WriteError) Unwrap() []error { return []error{sentinel(e.Errno), e.Errno} }

// errnos maps the errors a probe-event write returns to sentinels and
// descriptions.
var errnos = map[syscall.Errno]struct {
	err  error
	text string
}{
	syscall.EILSEQ: {ErrNotBoundary, "the probe point is not an instruction boundary (EILSEQ)"},
	syscall.ENOENT: {ErrNotFound, "no such symbol, file or event (ENOENT)"},
	syscall.EEXIST: {ErrExist, "an event with this name already exists (EEXIST)"},
	syscall.EBUSY:  {ErrBusy, "the event is enabled or in use (EBUSY)"},
	syscall.EACCES: {ErrPermission, "permission denied (run as root)"},
	syscall.EPERM:  {ErrPermission, "permission denied (run as root)"},
	syscall.EINVAL: {ErrInvalid, "invalid argument (EINVAL)"},
	syscall.E2BIG:  {ErrInvalid, "argument list too long (E2BIG)"},
}

func sentinel(no syscall.Errno) error {
	if e, ok := errnos[no]; ok {
		return e.err
	}
	return ErrInvalid
}

func errnoText(no syscall.Errno) string {
	if e, ok := errnos[no]; ok {
		return e.text
	}
	return no.Error() + " (errno " + strconv.Itoa(int(no)) + ")"
}

// Write appends one definition or deletion line to the events file of kind k
// (O_APPEND, as perf does: O_TRUNC would delete every probe of that kind).
// A refused line returns a *WriteError carrying the kernel's error_log entry.
func (t *FS) Write(k probe.Kind, line string) error {
	if err := t.Check(k); err != nil {
		return err
	}
	return t.Append(k.File(), line)
}

// Append appends one command line to the control file name, as the shell's
// ">>" does: a probe definition, a synthetic event (synthetic_events), an
// event trigger or its removal (events/GROUP/EVENT/trigger), pids added to
// set_event_pid. A refused line returns a *WriteError carrying the kernel's
// error_log entry (an instance's own error_log for an instance's files).
func (t *FS) Append(name, line string) error {
	if strings.ContainsAny(line, "\n#") {
		// A newline would write two commands and '#' starts a comment.
		return fmt.Errorf("%w: %q contains a newline or '#'", ErrInvalid, line)
	}
	f, err := os.OpenFile(t.Path(name), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return t.fileErr(err, name)
	}
	write := func() error { _, err := f.Write([]byte(line + "\n")); return err }
	var werr error
	if t.Enter != nil {
		werr = t.Enter(write)
	} else {
		werr = write()
	}
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		return nil
	}
	var no syscall.Errno
	if !errors.As(werr, &no) {
		return fmt.Errorf("writing %s: %w", t.Path(name), werr)
	}
	we := &WriteError{File: name, Line: line, Errno: no}
	if no == syscall.EACCES || no == syscall.EPERM {
		return fmt.Errorf("%w to write %s (run as root)", ErrPermission, t.Path(name))
	}
	if entries, err := t.ErrorLog(); err == nil {
		cmd := strings.Join(strings.Fields(line), " ")
		for i := len(entries) - 1; i >= 0; i-- {
			// error_log is shared by every writer: take the newest entry for
			// this command, or for an eprobe's filter (the filter parser
			// logs the filter alone).
			e := entries[i]
			if e.Command == cmd || (e.Subsystem == filterSubsystem && strings.HasSuffix(cmd, " if "+e.Command)) {
				we.Log = &entries[i]
				break
			}
		}
	}
	return we
}

// Delete removes GROUP/EVENT of kind k ("-:GROUP/EVENT").
func (t *FS) Delete(k probe.Kind, group, event string) error {
	if k == probe.UserEvent {
		return t.deleteUserEvent(event)
	}
	return t.Write(k, "-:"+group+"/"+event)
}

// deleteUserEvent deletes a persistent user event. The kernel matches a
// deletion against the event's fields too (user_event_match): Linux 6.12
// deletes "u:NAME FIELDS" only as "-:NAME FIELDS", so the fields are
// taken from its listing in dynamic_events.
func (t *FS) deleteUserEvent(event string) error {
	b, err := t.ReadFile("dynamic_events")
	if err != nil {
		return err
	}
	for _, l := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), "u:")
		if name, _, _ := strings.Cut(rest, " "); ok && name == event {
			return t.Write(probe.UserEvent, "-:"+rest)
		}
	}
	return fmt.Errorf("user event %s: %w", event, ErrNotFound)
}

// eventDir is events/GROUP/EVENT.
func (t *FS) eventDir(group, event string) string {
	return t.Path(filepath.Join("events", group, event))
}

// Enable writes 1 or 0 to events/GROUP/EVENT/enable.
func (t *FS) Enable(group, event string, on bool) error {
	v := "0"
	if on {
		v = "1"
	}
	p := filepath.Join(t.eventDir(group, event), "enable")
	if err := os.WriteFile(p, []byte(v), 0); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("event %s:%s: %w", group, event, ErrNotFound)
		}
		var no syscall.Errno
		if errors.As(err, &no) {
			return fmt.Errorf("writing %s to %s: %s: %w", v, p, errnoText(no), sentinel(no))
		}
		return t.fileErr(err, filepath.Join("events", group, event, "enable"))
	}
	return nil
}

// Enabled reports whether events/GROUP/EVENT/enable reads 1 (or the
// soft-enabled "1*").
func (t *FS) Enabled(group, event string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(t.eventDir(group, event), "enable"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("event %s:%s: %w", group, event, ErrNotFound)
		}
		return false, t.fileErr(err, "enable")
	}
	s := strings.TrimSpace(string(b))
	return strings.HasPrefix(s, "1"), nil
}

// WriteFile writes val to the control file name (truncating, as the
// shell's ">" does: tracing_on, trace_clock, set_event_pid, options/*). The
// kernel reports a bad value only through the write's errno: a refused
// value is a *WriteError naming the file and the value.
func (t *FS) WriteFile(name, val string) error {
	p := t.Path(name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", p, ErrNotFound)
		}
		return t.fileErr(err, name)
	}
	_, err = f.WriteString(val)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		return nil
	}
	var no syscall.Errno
	if errors.As(err, &no) {
		return &WriteError{File: p, Line: strings.TrimSpace(val), Errno: no}
	}
	return fmt.Errorf("writing %q to %s: %w", strings.TrimSpace(val), p, err)
}
