// Package install puts probes into a kernel and takes them out again, the
// way perf probe 6.1 does: it names events against what is installed, sets
// kretprobe maxactive, checks every line against the kernel's grammar and
// the running kernel's symbols before writing any, writes them all or none,
// deletes events by pattern, and describes installed events for -l.
//
// It works on probe.Probe values (from resolve, or from raw definition lines
// read with emit/probedef) and a tracefs.FS; it never resolves anything.
// Messages for the user and perf's exit statuses are the caller's: failures
// are returned as errors wrapping the sentinels below, tracefs's or
// probedef.ErrSyntax.
package install

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/emit/tracefs"
)

var (
	// ErrTooManyNames: every _N suffix of an event name is taken (perf's
	// "Too many events are on the same function.").
	ErrTooManyNames = errors.New("too many events are on the same function")
	// ErrNoDefinitions: a --from file holds no definition.
	ErrNoDefinitions = errors.New("no definitions")
)

// ExistsError is an event name that is taken, when suffixes are not
// allowed (perf probe without -f). It wraps tracefs.ErrExist.
type ExistsError struct{ Name string }

func (e *ExistsError) Error() string { return fmt.Sprintf("event %q already exists", e.Name) }
func (e *ExistsError) Unwrap() error { return tracefs.ErrExist }

// Request is what one definition asked for (perf's "pev") and the trace
// events it became: a perf PROBEDEF resolved into probes, or raw definition
// lines (consecutive lines naming the same event form one request, like the
// several addresses of one probe that -D prints).
type Request struct {
	// Point is the probe point as perf prints it ("vfs_read:12"); "" for
	// raw lines.
	Point string
	// Args are the arguments as the user wrote them, for the report.
	Args []string
	// Module is what the report says the probe is " in": the uprobe's binary
	// or the kernel module ("" for vmlinux).
	Module string
	// Probes are the trace events, named as resolution named them.
	Probes []probe.Probe

	// checked are the lines of Probes already read by Check (raw lines),
	// which Plan need not read again unless naming changed them.
	checked map[string]bool
}

// Raw reports whether the request came from definition lines.
func (r *Request) Raw() bool { return r.Point == "" }

// Event is one definition about to be written.
type Event struct {
	Req   *Request
	Probe probe.Probe // named against the installed events
	Line  string      // Probe.String(): the line written
}

// Options tune a Plan.
type Options struct {
	// Force gives a taken name the first free _N suffix (perf's -f);
	// without it a taken name is an *ExistsError.
	Force bool
	// MaxActive, when > 0, is written as r<N> on every kernel return probe
	// (--maxactive); it must be 1..probedef.MaxKretprobeActive.
	MaxActive int
	// Features are the target kernel's (tracefs README).
	Features probedef.Features
	// Symbols checks kernel symbols and addresses against the running
	// kernel; nil reads /proc/kallsyms (once per process).
	Symbols *Kallsyms
	// BTF is the target kernel's BTF (probedef.BTF), for checking BTF
	// arguments of raw lines; nil checks their syntax only.
	BTF probedef.BTF
	// EventFields lists the fields of a trace event of the target kernel,
	// for eprobes (tracefs.FS.EventFields); nil checks their syntax only.
	EventFields func(probe.EventID) ([]string, bool)
	// Warn receives a warning for each trace event left out of a request
	// that resolved to several (see Plan); nil drops them.
	Warn func(string)
	// Stat checks a uprobe's path as the kernel will resolve it; nil is
	// os.Stat (a path in another mount namespace is stat'ed there).
	Stat func(path string) (fs.FileInfo, error)
}

// Plan names every probe of reqs against the installed events, as perf's
// probe_trace_event__set_name does over a whole run, applies MaxActive and
// checks every line the run would write. Nothing is written.
//
// Naming: a name taken in the same events file (in any group) gets _1, _2...
// with Force, or is an *ExistsError; the 2nd+ trace events of one request
// may always take a suffix. On kernels that append probes to an event
// (Features.MultiProbe), the names given in this run are not taken, so the
// addresses of one probe share one event.
func Plan(reqs []*Request, installed []tracefs.Event, opts Options) ([]Event, error) {
	if opts.MaxActive != 0 {
		if err := setMaxActive(reqs, opts.MaxActive, opts.Features); err != nil {
			return nil, err
		}
	}
	if err := leaveOutRefused(reqs, opts); err != nil {
		return nil, err
	}
	taken := map[probe.Kind]map[string]bool{}
	for _, k := range probe.Kinds {
		taken[k] = map[string]bool{}
	}
	// A name taken in kprobe_events (or uprobe_events) is taken there; the
	// kinds of dynamic_events share their names with every event.
	take := func(k probe.Kind, name string) {
		for _, other := range probe.Kinds {
			if other == k || other.Dynamic() || k.Dynamic() {
				taken[other][name] = true
			}
		}
	}
	for _, e := range installed {
		take(e.Kind, e.Name)
	}
	var plan []Event
	for _, r := range reqs {
		// perf re-reads the event list for each probe definition.
		created := map[probe.Kind][]string{}
		allow := opts.Force
		for _, p := range r.Probes {
			names := taken[p.Kind]
			if names[p.Event] {
				if !allow {
					return nil, &ExistsError{Name: p.Event}
				}
				base := p.Event
				if p.Return {
					base = strings.TrimSuffix(base, "__return")
				}
				name, ok := probe.FreeName(base, func(n string) bool { return names[n] })
				if !ok {
					return nil, ErrTooManyNames
				}
				p.Event = name
			}
			if !opts.Features.MultiProbe {
				names[p.Event] = true
			}
			created[p.Kind] = append(created[p.Kind], p.Event)
			plan = append(plan, Event{Req: r, Probe: p, Line: p.String()})
			allow = true
		}
		for k, ns := range created {
			for _, n := range ns {
				take(k, n)
			}
		}
	}
	for _, ev := range plan {
		if ev.Req.checked[ev.Line] {
			continue
		}
		if _, err := Check(ev.Line, opts); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// leaveOutRefused drops from each resolved request of several trace
// events (a function pattern, a line found at several addresses) the
// events the kernel would refuse (Check), with a warning each, so that
// one place the kernel cannot take does not cost every other: perf writes
// the events one by one and stops at the first refusal. A request whose
// events are all refused fails with the first refusal.
func leaveOutRefused(reqs []*Request, opts Options) error {
	for _, r := range reqs {
		if r.Raw() || len(r.Probes) < 2 {
			continue
		}
		var kept []probe.Probe
		var first error
		for _, p := range r.Probes {
			line := p.String()
			if _, err := Check(line, opts); err != nil {
				if first == nil {
					first = err
				}
				if opts.Warn != nil {
					opts.Warn(fmt.Sprintf("%s: the kernel would refuse %q: %v; skip it.", r.Point, line, err))
				}
				continue
			}
			kept = append(kept, p)
			if r.checked == nil {
				r.checked = map[string]bool{}
			}
			r.checked[line] = true
		}
		if len(kept) == 0 {
			return first
		}
		r.Probes = kept
	}
	return nil
}

// setMaxActive gives every return probe of reqs maxactive n (r<N>: or
// f<N>:, how many calls a kretprobe or an fprobe's exit can follow at once;
// the kernel's default is about 2 per CPU, and missed returns only show in
// kprobe_profile). It overrides an r<N> or f<N> written in a raw
// definition. uretprobes have no such setting.
func setMaxActive(reqs []*Request, n int, feat probedef.Features) error {
	if err := ValidMaxActive(n); err != nil {
		return fmt.Errorf("%w: %w", err, probedef.ErrSyntax)
	}
	if !feat.MaxActive {
		return fmt.Errorf("--maxactive: this kernel's tracefs README does not offer r[maxactive]: %w", probedef.ErrSyntax)
	}
	set := 0
	for _, r := range reqs {
		for i := range r.Probes {
			p := &r.Probes[i]
			if !p.Return {
				continue
			}
			if p.Kind == probe.Uprobe {
				return fmt.Errorf("--maxactive is for kernel return probes; %s is a uprobe: %w", p.Place(), probedef.ErrSyntax)
			}
			p.MaxActive = n
			set++
		}
	}
	if set == 0 {
		return fmt.Errorf("--maxactive applies to return probes (FUNC%%return, r:) and none was given: %w", probedef.ErrSyntax)
	}
	return nil
}

var runningKallsyms = sync.OnceValue(RunningKallsyms)

// RunningSymbols is the running kernel's /proc/kallsyms (SharedKallsyms)
// for what maps kernel symbols: resolve.Points' Kernel and
// resolve.Options' KernelText.
type RunningSymbols struct{}

// Symbolize is Kallsyms.Symbolize on SharedKallsyms.
func (RunningSymbols) Symbolize(sym string, off uint64) (string, uint64, bool) {
	return SharedKallsyms().Symbolize(sym, off)
}

// InText is Kallsyms.InText on SharedKallsyms.
func (RunningSymbols) InText(sym string) (in, known bool) { return SharedKallsyms().InText(sym) }

// SharedKallsyms is /proc/kallsyms read once per process (nil when it
// cannot be read), the one Check uses.
func SharedKallsyms() *Kallsyms { return runningKallsyms() }

// Check reads line with the kernel's grammar as the running kernel would:
// its README features (opts.Features), its symbols (/proc/kallsyms: a
// symbol must exist and be unique), and for an absolute kernel address, its
// text range. It returns the probe the line defines.
func Check(line string, opts Options) (*probe.Probe, error) {
	po := &probedef.Options{Features: &opts.Features, BTF: opts.BTF, EventFields: opts.EventFields, Stat: opts.Stat}
	ks := opts.Symbols
	if ks == nil {
		ks = runningKallsyms()
	}
	kind := probedef.KindOf(line)
	kernel := kind == probe.Kprobe
	if ks != nil && (kernel || kind == probe.Fprobe) {
		po.Symbols = ks.Count
	}
	p, err := probedef.Parse(line, po)
	if err != nil {
		return nil, err
	}
	if ks != nil && kernel && p.Target.Symbol == "" {
		if err := ks.CheckAddress(p.Target.Address, kptrRestrict()); err != nil {
			return nil, err
		}
	}
	if ks != nil && kernel && p.Target.Symbol != "" && p.Target.Module == "" {
		if in, known := ks.InText(p.Target.Symbol); known && !in {
			return nil, fmt.Errorf("%w: %s is out of the kernel's text (_stext to _etext; an __init function is freed after boot)", ErrNotKernelText, p.Target.Symbol)
		}
	}
	return p, nil
}

// CheckDefinition checks a definition meant for a kernel elsewhere (-D
// prints it for `add --from` on another machine): the kernel's grammar for
// arch, with the features of the kernel here when known (else every
// feature of Linux 6.1), no symbol or path lookups. It reads exactly the
// line the kernel would read, so its positions are the kernel's.
func CheckDefinition(p probe.Probe, isa arch.Arch, feat probedef.Features, known bool) error {
	opts := &probedef.Options{Arch: isa, NoStat: true}
	if known {
		opts.Features = &feat
	}
	_, err := probedef.Parse(p.String(), opts)
	return err
}

// ValidMaxActive checks a --maxactive count against the kernel's range.
func ValidMaxActive(n int) error {
	if n < 1 || n > probedef.MaxKretprobeActive {
		return fmt.Errorf("--maxactive %d: want 1 to %d (the kernel's KRETPROBE_MAXACTIVE_MAX)", n, probedef.MaxKretprobeActive)
	}
	return nil
}

// RawRequests reads raw definition lines (as -D prints them, or written by
// hand) into requests, checking each as Check does after making sure fs has
// the events file the line is for (tracefs.ErrNoKprobes, ErrNoUprobes).
// Consecutive lines naming the same event are one request. A line must name
// its event (an unnamed line would get a name gprobe cannot report or roll
// back reliably); its group defaults to the kernel's.
func RawRequests(fs *tracefs.FS, lines []string, opts Options) ([]*Request, error) {
	var reqs []*Request
	for _, l := range lines {
		if err := fs.Check(probedef.KindOf(l)); err != nil {
			return nil, err
		}
		p, err := Check(l, opts)
		if err != nil {
			return nil, err
		}
		if p.Event == "" {
			return nil, fmt.Errorf("%q has no event name: write p:GROUP/EVENT or p:EVENT: %w", l, probedef.ErrSyntax)
		}
		if p.Group == "" {
			p.Group = p.GroupOrDefault()
		}
		if n := len(reqs); n > 0 {
			r := reqs[n-1]
			last := &r.Probes[len(r.Probes)-1]
			if last.Kind == p.Kind && last.Group == p.Group && last.Event == p.Event {
				r.Probes = append(r.Probes, *p)
				r.checked[p.String()] = true
				continue
			}
		}
		reqs = append(reqs, &Request{Probes: []probe.Probe{*p}, checked: map[string]bool{p.String(): true}})
	}
	return reqs, nil
}

// ReadDefinitions reads a --from file (path, or "-" for stdin): one
// definition per line; blank lines and lines starting with '#' are skipped.
func ReadDefinitions(path string) ([]string, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--from: %w", err)
		}
		defer f.Close()
		r = f
	}
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--from %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--from %s: %w: %w", path, ErrNoDefinitions, probedef.ErrSyntax)
	}
	return out, nil
}

// Write writes the plan in order. If one line fails, every event this run
// created is deleted again, so nothing is left half-installed; the error is
// the kernel's (a *tracefs.WriteError with its error_log entry).
func Write(fs *tracefs.FS, plan []Event) error {
	_, err := write(fs, plan, nil)
	return err
}

// WriteSome is Write, except that an event of a request that resolved to
// several (a function pattern, a line at several places) which the kernel
// refuses (EINVAL: a notrace function, a place it will not patch; EEXIST:
// arguments that differ from the event's other places) is left
// out, with a warning, when another event of that request is written:
// perf writes the events one by one and stops at the first refusal,
// leaving the ones before it. It returns what was written.
func WriteSome(fs *tracefs.FS, plan []Event, warn func(string)) ([]Event, error) {
	if warn == nil {
		warn = func(string) {}
	}
	return write(fs, plan, warn)
}

// write writes plan, rolling back on a failure; with warn, refusals of
// events of several-event requests are left out instead (WriteSome).
func write(fs *tracefs.FS, plan []Event, warn func(string)) ([]Event, error) {
	type created struct {
		kind         probe.Kind
		group, event string
	}
	var done []created
	seen := map[created]bool{}
	rollback := func() {
		for i := len(done) - 1; i >= 0; i-- {
			_ = fs.Delete(done[i].kind, done[i].group, done[i].event)
		}
	}
	events := map[*Request]int{}
	for _, ev := range plan {
		events[ev.Req]++
	}
	type refusal struct {
		ev  Event
		err error
	}
	var written []Event
	var refused []refusal
	wrote := map[*Request]int{}
	for _, ev := range plan {
		if err := fs.Write(ev.Probe.Kind, ev.Line); err != nil {
			if warn != nil && !ev.Req.Raw() && events[ev.Req] > 1 && (errors.Is(err, tracefs.ErrInvalid) || errors.Is(err, tracefs.ErrExist)) {
				refused = append(refused, refusal{ev, err})
				continue
			}
			rollback()
			return nil, err
		}
		written = append(written, ev)
		wrote[ev.Req]++
		c := created{ev.Probe.Kind, ev.Probe.GroupOrDefault(), ev.Probe.Event}
		if !seen[c] {
			seen[c] = true
			done = append(done, c)
		}
	}
	for _, r := range refused {
		if wrote[r.ev.Req] == 0 {
			rollback()
			return nil, r.err
		}
	}
	for _, r := range refused {
		warn(fmt.Sprintf("%s: %v; skip it.", r.ev.Req.Point, r.err))
	}
	return written, nil
}

// Line is perf's description of one event, as `perf probe -a` reports what
// it added and `perf probe -l` lists:
//
//	probe:vfs_read       (on vfs_read:12 in /path with file count)
func Line(group, event, point, module string, args []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %-20s (on %s", group+":"+event, point)
	if module != "" {
		b.WriteString(" in " + module)
	}
	if len(args) > 0 {
		b.WriteString(" with " + strings.Join(args, " "))
	}
	b.WriteString(")")
	return b.String()
}

// PointFinder maps an installed probe back to the probe point a user would
// write (perf -l's convert_to_perf_probe_point), e.g. through DWARF.
type PointFinder func(p *probe.Probe) string

// Describe is perf -l's line for one installed probe: its point found by
// find (fprobes, tprobes and eprobes name their function, tracepoint or
// event themselves), the module it is in, and its arguments' field names.
func Describe(p *probe.Probe, find PointFinder) string {
	module := p.Target.Module
	if p.Kind == probe.Uprobe {
		module = p.Target.Path
	}
	var args []string
	for i := range p.Args {
		args = append(args, p.ArgName(i))
	}
	for _, f := range p.Fields {
		args = append(args, f.Name)
	}
	return Line(p.GroupOrDefault(), p.Event, Point(p, find), module, args)
}

// Point is the probe point a user would write for p: find's answer for
// kprobes and uprobes; FUNC or FUNC%return for an fprobe, "tracepoint
// NAME" for a tprobe, "event SYSTEM/EVENT" for an eprobe.
func Point(p *probe.Probe, find PointFinder) string {
	switch p.Kind {
	case probe.Fprobe:
		if p.Return {
			return p.Target.Symbol + "%return"
		}
		return p.Target.Symbol
	case probe.Tprobe:
		return "tracepoint " + p.Target.Symbol
	case probe.Eprobe:
		return "event " + p.Target.Event.System + "/" + p.Target.Event.Name
	case probe.UserEvent:
		return "user event"
	}
	return find(p)
}

// Added is perf's line for a just-added event: the user's probe point and
// arguments; events from raw lines are described as -l describes them.
func Added(ev Event, find PointFinder) string {
	if ev.Req.Raw() {
		return Describe(&ev.Probe, find)
	}
	module := ev.Req.Module
	if ev.Probe.Kind == probe.Uprobe && ev.Probe.Target.Path != "" {
		// Each probe's own binary: one SDT point may name markers of
		// several (%gc__* in python3.11 and libjvm.so), as perf reports it.
		module = ev.Probe.Target.Path
	}
	return Line(ev.Probe.Group, ev.Probe.Event, ev.Req.Point, module, ev.Req.Args)
}

// List is perf -l's listing of the installed events that match: a line
// each (Describe), kprobes first, each events file's sorted by its
// definition text, a definition listed once.
func List(installed []tracefs.Event, match func(group, event string) bool, find PointFinder) []string {
	var out []string
	for _, k := range probe.Kinds {
		var evs []tracefs.Event
		seen := map[string]bool{}
		for _, e := range installed {
			if e.Kind == k && e.Probe != nil && !seen[e.Line] && match(e.Group, e.Name) {
				seen[e.Line] = true
				evs = append(evs, e)
			}
		}
		sort.Slice(evs, func(i, j int) bool { return evs[i].Line < evs[j].Line })
		for _, e := range evs {
			out = append(out, Describe(e.Probe, find))
		}
	}
	return out
}

// Running opens the running kernel's tracefs (tracefs.Open) and reads the
// events installed in it, for List and Remove (perf -l and -d).
func Running() (*tracefs.FS, []tracefs.Event, error) {
	fs, err := tracefs.Open()
	if err != nil {
		return nil, nil, err
	}
	events, err := fs.List()
	if err != nil {
		return nil, nil, err
	}
	return fs, events, nil
}

// Remove deletes the installed events that match (perf -d), kprobes first,
// each events file's sorted; removed is called for each event once it is
// deleted (with dryRun, for each event, and nothing is deleted). An event
// the kernel keeps does not stop the others (perf stops at the first):
// the error is then a *RemoveError naming every event left and why. hit
// says whether any event matched.
func Remove(fs *tracefs.FS, installed []tracefs.Event, match func(group, event string) bool, dryRun bool, removed func(tracefs.Event)) (hit bool, err error) {
	var left []Kept
	for _, k := range probe.Kinds {
		evs := Matching(installed, k, match)
		hit = hit || len(evs) > 0
		for _, e := range evs {
			if dryRun {
				removed(e)
				continue
			}
			if err := Delete(fs, k, e.Group, e.Name); err != nil {
				kept := Kept{Event: e, Err: err}
				var noDir *noEventDirError
				if errors.Is(err, tracefs.ErrBusy) && !errors.As(err, &noDir) {
					kept.Reason = fs.BusyReason(e.Group, e.Name)
				}
				left = append(left, kept)
				continue
			}
			removed(e)
		}
	}
	if len(left) > 0 {
		return hit, &RemoveError{Kept: left}
	}
	return hit, nil
}

// Kept is an event the kernel did not delete, its error and, for a busy
// one, what keeps it (tracefs.FS.BusyReason).
type Kept struct {
	Event  tracefs.Event
	Err    error
	Reason string
}

// Errno is the errno perf returns for err, an error of installing or
// deleting events (its exit status is 256 - Errno): err's own errno, the
// one the tracefs and install sentinels stand for, else EINVAL.
func Errno(err error) syscall.Errno {
	var no syscall.Errno
	if errors.As(err, &no) && no > 0 && no < 256 {
		return no
	}
	switch {
	case errors.Is(err, tracefs.ErrPermission), errors.Is(err, ErrHiddenAddresses):
		return syscall.EACCES
	case errors.Is(err, tracefs.ErrNoKprobes), errors.Is(err, tracefs.ErrNoUprobes), errors.Is(err, tracefs.ErrNoKind),
		errors.Is(err, tracefs.ErrNoTracefs), errors.Is(err, tracefs.ErrNotFound):
		return syscall.ENOENT
	case errors.Is(err, tracefs.ErrExist):
		return syscall.EEXIST
	case errors.Is(err, tracefs.ErrBusy):
		return syscall.EBUSY
	case errors.Is(err, ErrTooManyNames):
		return syscall.ERANGE
	}
	return syscall.EINVAL
}

// RemoveError lists the events Remove could not delete; it wraps the first
// one's error.
type RemoveError struct{ Kept []Kept }

func (e *RemoveError) Error() string {
	var b strings.Builder
	for i, k := range e.Kept {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("Failed to delete event " + k.String())
	}
	return b.String()
}

// String is "GROUP:EVENT: ERR", and "; it is REASON" when the reason is
// known.
func (k Kept) String() string {
	s := fmt.Sprintf("%s:%s: %v", k.Event.Group, k.Event.Name, k.Err)
	if k.Reason != "" {
		s += "; it is " + k.Reason
	}
	return s
}

func (e *RemoveError) Unwrap() error { return e.Kept[0].Err }

// Matching lists the installed events (GROUP:EVENT) of kind k that match,
// sorted, once each.
func Matching(installed []tracefs.Event, k probe.Kind, match func(group, event string) bool) []tracefs.Event {
	var out []tracefs.Event
	seen := map[string]bool{}
	for _, e := range installed {
		n := e.Group + ":" + e.Name
		if e.Kind == k && !seen[n] && match(e.Group, e.Name) {
			seen[n] = true
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group+":"+out[i].Name < out[j].Group+":"+out[j].Name })
	return out
}

// Delete removes the event, disabling it first (the kernel refuses to delete
// an enabled event with EBUSY).
func Delete(fs *tracefs.FS, k probe.Kind, group, event string) error {
	on, err := fs.Enabled(group, event)
	if err == nil && on {
		if err := fs.Enable(group, event, false); err != nil {
			return fmt.Errorf("disabling %s:%s: %w", group, event, err)
		}
	}
	derr := fs.Delete(k, group, event)
	if errors.Is(err, tracefs.ErrNotFound) && errors.Is(derr, tracefs.ErrBusy) {
		// Linux 6.1 creates the events of kprobe_event= while a workqueue
		// sets up tracefs: the first may get no directory, yet it is
		// enabled and traces.
		return &noEventDirError{err: derr, group: group, event: event}
	}
	return derr
}

// noEventDirError is an enabled event that has no events/ directory to
// disable it through: the error says what disables it instead, and there
// is nothing more to find out about why it is busy.
type noEventDirError struct {
	err          error
	group, event string
}

func (e *noEventDirError) Error() string {
	return fmt.Sprintf("%v; it has no events/%s/%s directory to disable it through (the first event of a 6.1 kernel's kprobe_event= boot parameter may have none): echo 0 > events/enable disables it", e.err, e.group, e.event)
}

func (e *noEventDirError) Unwrap() error { return e.err }
