// Package leftover finds and removes what gprobe processes that no longer
// exist left in the kernel: the tracefs instances of `gprobe record` and
// `gprobe latency`, and latency's probes, synthetic event and hist
// triggers. A session removes all it created on every exit it sees (its
// end, an error, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE); SIGKILL, a
// crash or a power cut leave them, and they would stay until the next
// boot.
//
// Two ways tell them:
//
//   - the ledger: a session writes what it created, as it creates it, to
//     /run/gprobe/PID (root's, on tmpfs: it lives exactly as long as the
//     kernel's tracing state), and removes the file once it has removed
//     everything. A ledger whose process is gone (its pid free, or taken by
//     a process started later) names the leftovers exactly.
//   - names: gprobe names what it creates after the creating process
//     (RecordInstance, LatencyInstance, LatencySynthetic), so that an
//     instance or synthetic event whose process is gone is a leftover even
//     without a ledger (gprobe older than the ledger, /run not writable);
//     the hist triggers in such an instance go with it, and the probes of
//     LatencyGroup that no live session has in its ledger or its triggers.
//
// Find lists leftovers (gprobe record and latency report them when they
// start) and Remove removes them (gprobe cleanup).
package leftover

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/safedir"
)

// The names gprobe gives what it creates carry the creating process's
// pid; tracefs.NewUniqueInstance may add "-N", and latency "_N" to the
// synthetic event's, when a name is taken.

// RecordInstance is the tracefs instance of gprobe record process pid.
func RecordInstance(pid int) string { return fmt.Sprintf("gprobe-%d", pid) }

// LatencyInstance is the tracefs instance of gprobe latency process pid.
func LatencyInstance(pid int) string { return fmt.Sprintf("gprobe-latency-%d", pid) }

// LatencySynthetic is the synthetic event of gprobe latency process pid.
func LatencySynthetic(pid int) string { return fmt.Sprintf("gprobe_latency_%d", pid) }

// LatencyGroup is the group of gprobe latency's probes.
const LatencyGroup = "gprobe_latency"

// namedPID is the pid in a name gprobe gives: prefix, the pid, and
// optionally sep and a sequence number ("gprobe-123", "gprobe-123-2");
// 0 when name is not such a name. (Not a regular expression: package
// initialisation runs at every start of gprobe.)
func namedPID(name, prefix string, sep byte) int {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0
	}
	digits := func(s string) bool {
		if s == "" {
			return false
		}
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return true
	}
	pid, seq, hasSeq := strings.Cut(rest, string(sep))
	if !digits(pid) || hasSeq && !digits(seq) {
		return 0
	}
	return atoi(pid)
}

// Dir is where ledgers are kept (a variable for the tests).
var Dir = "/run/gprobe"

// Object is one thing a session created in the kernel.
type Object struct {
	// Kind is "instance", "synthetic", "probe" or "trigger".
	Kind string
	// Name is the instance's or synthetic event's name, a probe's
	// GROUP/EVENT, or a trigger's file in its instance
	// (events/GROUP/EVENT/trigger).
	Name string
	// Probe is a probe's kind.
	Probe probe.Kind
	// Instance and Spec are a trigger's instance and text.
	Instance, Spec string
}

func (o Object) String() string {
	switch o.Kind {
	case "synthetic":
		return "synthetic event " + o.Name
	case "probe":
		return o.Probe.String() + " " + o.Name
	case "trigger":
		return fmt.Sprintf("trigger %q on %s in instance %s", o.Spec, strings.TrimSuffix(strings.TrimPrefix(o.Name, "events/"), "/trigger"), o.Instance)
	}
	return o.Kind + " " + o.Name
}

func (o Object) line() string {
	switch o.Kind {
	case "probe":
		return fmt.Sprintf("probe %s %s", o.Probe, o.Name)
	case "trigger":
		return fmt.Sprintf("trigger %s %s %s", o.Instance, o.Name, o.Spec)
	}
	return o.Kind + " " + o.Name
}

func parseObject(line string) (Object, bool) {
	kind, rest, _ := strings.Cut(line, " ")
	switch kind {
	case "instance", "synthetic":
		return Object{Kind: kind, Name: rest}, rest != ""
	case "probe":
		k, name, ok := strings.Cut(rest, " ")
		for _, pk := range probe.Kinds {
			if pk.String() == k && ok && strings.Count(name, "/") == 1 {
				return Object{Kind: kind, Probe: pk, Name: name}, true
			}
		}
	case "trigger":
		f := strings.SplitN(rest, " ", 3)
		if len(f) == 3 {
			return Object{Kind: kind, Instance: f[0], Name: f[1], Spec: f[2]}, true
		}
	}
	return Object{}, false
}

// Ledger is the record of what one session creates. A nil *Ledger (none
// could be written) records nothing.
type Ledger struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// Start opens the ledger of this process for a session of command
// ("record", "latency") on the tracefs at root. It returns nil when the
// ledger directory cannot be used (not root): the session's leftovers are
// then found by their names only.
func Start(root, command string) *Ledger {
	if err := os.MkdirAll(Dir, 0o700); err != nil {
		return nil
	}
	if err := safedir.Check(Dir); err != nil {
		return nil
	}
	p := filepath.Join(Dir, strconv.Itoa(os.Getpid()))
	f, err := safedir.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil
	}
	start, _ := startTime(os.Getpid())
	if _, err := fmt.Fprintf(f, "gprobe %d %d %s %s\n", os.Getpid(), start, command, root); err != nil {
		f.Close()
		os.Remove(p)
		return nil
	}
	return &Ledger{f: f, path: p}
}

// Add records that o was created.
func (l *Ledger) Add(o Object) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.WriteString(o.line() + "\n")
	}
}

// Done ends the ledger: it is removed when the session removed all it
// created (clean), kept for Find otherwise.
func (l *Ledger) Done(clean bool) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	l.f.Close()
	l.f = nil
	if clean {
		os.Remove(l.path)
	}
}

// startTime is a process's start time (clock ticks after boot, field 22
// of /proc/PID/stat): with the pid, it names one process for good.
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, errors.New("malformed stat")
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// gone reports whether process pid no longer exists; start, when not 0,
// is the start time it had (a pid taken by a process started later is
// gone too).
func gone(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	if start != 0 {
		if now, err := startTime(pid); err == nil && now != start {
			return true
		}
	}
	return false
}

// Leftover is what one gprobe process that no longer exists left.
type Leftover struct {
	PID int
	// Command is "record" or "latency" ("" for the probes no process
	// claims).
	Command string
	// Objects are what is left, in the order they were created.
	Objects []Object
	// ledger is the process's ledger file, removed with its leftovers.
	ledger string
}

// Summary is one line: the process and what it left.
func (l Leftover) Summary() string {
	var b strings.Builder
	if l.PID > 0 {
		fmt.Fprintf(&b, "gprobe %s (pid %d, no longer running) left", cmp(l.Command, "session"), l.PID)
	} else {
		b.WriteString("probes of gprobe latency that no running gprobe uses:")
	}
	counts := map[string]int{}
	var parts []string
	for _, o := range l.Objects {
		if o.Kind == "trigger" {
			counts[o.Kind]++
			continue
		}
		parts = append(parts, o.String())
	}
	if n := counts["trigger"]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d hist trigger%s", n, plural(n)))
	}
	if len(parts) > 8 {
		parts = append(parts[:7], fmt.Sprintf("and %d more", len(parts)-7))
	}
	b.WriteString(" " + strings.Join(parts, ", "))
	return b.String()
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ledgerFile is a ledger read back.
type ledgerFile struct {
	path    string
	pid     int
	start   uint64
	command string
	root    string
	objects []Object
}

func readLedgers() []ledgerFile {
	ents, err := os.ReadDir(Dir)
	if err != nil {
		return nil
	}
	var out []ledgerFile
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !e.Type().IsRegular() {
			continue
		}
		f, err := safedir.Open(filepath.Join(Dir, e.Name()))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		lf := ledgerFile{path: f.Name()}
		for first := true; sc.Scan(); first = false {
			if first {
				h := strings.SplitN(sc.Text(), " ", 5)
				if len(h) != 5 || h[0] != "gprobe" || h[1] != e.Name() {
					break
				}
				lf.pid = pid
				lf.start, _ = strconv.ParseUint(h[2], 10, 64)
				lf.command, lf.root = h[3], h[4]
				continue
			}
			if o, ok := parseObject(sc.Text()); ok {
				lf.objects = append(lf.objects, o)
			}
		}
		f.Close()
		if lf.pid != 0 {
			out = append(out, lf)
		}
	}
	return out
}

// Find lists the leftovers in the tracefs t of gprobe processes that no
// longer exist, one per process, by pid; the latency probes no process
// claims come last (PID 0), so that removing the list in order removes
// the triggers that use them first.
func Find(t *tracefs.FS) ([]Leftover, error) {
	insts, err := t.Instances()
	if err != nil && !errors.Is(err, tracefs.ErrNotFound) {
		return nil, err
	}
	instSet := map[string]bool{}
	for _, n := range insts {
		instSet[n] = true
	}
	byPID := map[int]*Leftover{}
	add := func(pid int, command string, o Object) {
		l := byPID[pid]
		if l == nil {
			l = &Leftover{PID: pid, Command: command}
			byPID[pid] = l
		}
		for _, x := range l.Objects {
			if x == o {
				return
			}
		}
		l.Objects = append(l.Objects, o)
	}
	// Probes the ledgers of live sessions claim.
	claimed := map[string]bool{}
	inLedger := map[string]bool{} // instances whose triggers a ledger lists
	for _, lf := range readLedgers() {
		if !sameFS(lf.root, t.Root) {
			continue
		}
		dead := gone(lf.pid, lf.start)
		for _, o := range lf.objects {
			if o.Kind == "trigger" {
				inLedger[o.Instance] = true
			}
			if !dead {
				if o.Kind == "probe" {
					claimed[o.Name] = true
				}
				continue
			}
			if exists(t, o, instSet) {
				add(lf.pid, lf.command, o)
			}
		}
		if dead {
			if l := byPID[lf.pid]; l != nil {
				l.ledger = lf.path
			} else {
				os.Remove(lf.path) // all it names is gone
			}
		}
	}
	// By name.
	for _, n := range insts {
		command, pid := "", 0
		if p := namedPID(n, "gprobe-latency-", '-'); p != 0 {
			command, pid = "latency", p
		} else if p := namedPID(n, "gprobe-", '-'); p != 0 {
			command, pid = "record", p
		}
		if pid == 0 {
			continue
		}
		in := t.Path(filepath.Join("instances", n))
		if !gone(pid, 0) {
			// A live session: its triggers claim their probes.
			for _, tr := range triggersIn(in) {
				if g, e, ok := probeOfTrigger(tr.Name); ok && g == LatencyGroup {
					claimed[g+"/"+e] = true
				}
			}
			continue
		}
		if !inLedger[n] {
			for _, tr := range triggersIn(in) {
				tr.Instance = n
				add(pid, command, tr)
			}
		}
		add(pid, command, Object{Kind: "instance", Name: n})
	}
	if b, err := t.ReadFile("synthetic_events"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			// "NAME\tFIELDS" (6.12; a space before)
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			name := f[0]
			pid := namedPID(name, "gprobe_latency_", '_')
			if pid == 0 || !gone(pid, 0) {
				continue
			}
			add(pid, "latency", Object{Kind: "synthetic", Name: name})
		}
	}
	// Latency's probes no live session claims, and no dead one's ledger
	// named (those are listed with their process).
	if events, err := t.List(); err == nil {
		for _, e := range events {
			name := e.Group + "/" + e.Name
			o := Object{Kind: "probe", Probe: e.Kind, Name: name}
			if e.Group != LatencyGroup || claimed[name] || listed(byPID, o) {
				continue
			}
			add(0, "", o)
		}
	}
	var out []Leftover
	for _, l := range byPID {
		out = append(out, *l)
	}
	// By pid, the probes no process claims last: the triggers of the
	// others may use them.
	sort.Slice(out, func(i, j int) bool {
		if (out[i].PID == 0) != (out[j].PID == 0) {
			return out[j].PID == 0
		}
		return out[i].PID < out[j].PID
	})
	return out, nil
}

func listed(byPID map[int]*Leftover, o Object) bool {
	for _, l := range byPID {
		for _, x := range l.Objects {
			if x == o {
				return true
			}
		}
	}
	return false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// sameFS reports whether two paths are the root of one tracefs.
func sameFS(a, b string) bool {
	if a == b {
		return true
	}
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// exists reports whether o is still in the kernel.
func exists(t *tracefs.FS, o Object, insts map[string]bool) bool {
	switch o.Kind {
	case "instance":
		return insts[o.Name]
	case "trigger":
		return insts[o.Instance]
	case "synthetic":
		return t.Exists(filepath.Join("events", "synthetic", o.Name))
	case "probe":
		return t.Exists(filepath.Join("events", o.Name))
	}
	return false
}

// triggersIn lists the triggers set in instance directory in on the
// events gprobe puts triggers on (its latency probes and synthetic
// events), as the trigger files show them.
func triggersIn(in string) []Object {
	var out []Object
	for _, g := range []string{LatencyGroup, "synthetic"} {
		files, _ := filepath.Glob(filepath.Join(in, "events", g, "*", "trigger"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			rel, _ := filepath.Rel(in, f)
			for _, line := range strings.Split(string(b), "\n") {
				line = strings.TrimSpace(line)
				if line == "" || line[0] == '#' {
					continue
				}
				// "hist:... [active]" (or [paused]): the spec without its state.
				if i := strings.LastIndex(line, " ["); i > 0 && strings.HasSuffix(line, "]") {
					line = line[:i]
				}
				out = append(out, Object{Kind: "trigger", Name: rel, Spec: line})
			}
		}
	}
	return out
}

// probeOfTrigger is the GROUP and EVENT of a trigger file
// events/GROUP/EVENT/trigger.
func probeOfTrigger(file string) (group, event string, ok bool) {
	f := strings.Split(file, "/")
	if len(f) != 4 || f[0] != "events" || f[3] != "trigger" {
		return "", "", false
	}
	return f[1], f[2], true
}

// Remove removes l's objects in the order the kernel requires: the hist
// triggers (again and again while one still needs another: a trigger
// whose variable another uses goes after it), the instances, the
// synthetic events, the probes; then the process's ledger. It goes on
// after a failure and returns every error, joined; removed lists what it
// removed.
func Remove(t *tracefs.FS, l Leftover) (removed []Object, err error) {
	var errs []error
	// Triggers: first those the ledger recorded, as they were written,
	// last created first; then, pass after pass, whatever the instances
	// still hold, as the trigger files show them, until a pass removes
	// none. A trigger counts as removed when its file lists one fewer.
	instances := map[string]bool{}
	var recorded []Object
	for _, o := range l.Objects {
		switch o.Kind {
		case "instance":
			instances[o.Name] = true
		case "trigger":
			instances[o.Instance] = true
			recorded = append(recorded, o)
		}
	}
	unset := func(tr Object) error {
		before := countIn(t, tr)
		if before == 0 {
			return nil
		}
		err := unsetTrigger(t, filepath.Join("instances", tr.Instance, tr.Name), tr.Spec)
		if err == nil && countIn(t, tr) < before {
			removed = append(removed, tr)
		}
		return err
	}
	for i := len(recorded) - 1; i >= 0; i-- {
		unset(recorded[i])
	}
	var names []string
	for name := range instances {
		names = append(names, name)
	}
	sort.Strings(names)
	for {
		var left []Object
		for _, name := range names {
			for _, tr := range triggersIn(t.Path(filepath.Join("instances", name))) {
				tr.Instance = name
				left = append(left, tr)
			}
		}
		n := len(removed)
		failed := map[Object]error{}
		for i := len(left) - 1; i >= 0; i-- {
			if err := unset(left[i]); err != nil {
				failed[left[i]] = err
			}
		}
		if len(removed) == n {
			for _, tr := range left {
				errs = append(errs, fmt.Errorf("removing %s: %w", tr, cmp2(failed[tr], errors.New("still set"))))
			}
			break
		}
	}
	for _, kind := range []string{"instance", "synthetic", "probe"} {
		for i := len(l.Objects) - 1; i >= 0; i-- {
			o := l.Objects[i]
			if o.Kind != kind {
				continue
			}
			var err error
			switch kind {
			case "instance":
				if !instanceExists(t, o.Name) {
					continue
				}
				err = removeInstance(t, o.Name)
			case "synthetic":
				if !t.Exists(filepath.Join("events", "synthetic", o.Name)) {
					continue
				}
				err = t.Append("synthetic_events", "!"+o.Name)
			case "probe":
				group, event, _ := strings.Cut(o.Name, "/")
				if !t.Exists(filepath.Join("events", group, event)) {
					continue
				}
				err = install.Delete(t, o.Probe, group, event)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("removing %s: %w", o, err))
				continue
			}
			removed = append(removed, o)
		}
	}
	if len(errs) == 0 && l.ledger != "" {
		os.Remove(l.ledger)
	}
	return removed, errors.Join(errs...)
}

// removeInstance removes an instance, and unsetTrigger a trigger (file
// is relative to t): variables for the tests, whose directory standing in
// for tracefs does not act as the kernel does.
var (
	removeInstance = func(t *tracefs.FS, name string) error {
		return os.Remove(t.Path(filepath.Join("instances", name)))
	}
	unsetTrigger = func(t *tracefs.FS, file, spec string) error {
		return t.Append(file, "!"+spec)
	}
)

func instanceExists(t *tracefs.FS, name string) bool {
	return t.Exists(filepath.Join("instances", name))
}

// countIn is how many triggers tr's trigger file lists.
func countIn(t *tracefs.FS, tr Object) int {
	b, err := os.ReadFile(t.Path(filepath.Join("instances", tr.Instance, tr.Name)))
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && line[0] != '#' {
			n++
		}
	}
	return n
}

func cmp2(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// CleanOptions select what Clean does.
type CleanOptions struct {
	// PID, if not 0, limits Clean to what process PID left.
	PID int
	// DryRun lists the leftovers (one Summary line each) instead of
	// removing them.
	DryRun bool
}

// Clean finds t's leftovers (Find) and removes them (Remove), writing
// "removed OBJECT" to out for each object removed, or with o.DryRun each
// leftover's Summary. found reports whether any leftover matched; err
// joins every failure (Clean goes on after one).
func Clean(t *tracefs.FS, o CleanOptions, out io.Writer) (found bool, err error) {
	ls, err := Find(t)
	if err != nil {
		return false, err
	}
	var errs []error
	for _, l := range ls {
		if o.PID != 0 && l.PID != o.PID {
			continue
		}
		found = true
		if o.DryRun {
			fmt.Fprintln(out, l.Summary())
			continue
		}
		removed, err := Remove(t, l)
		for _, r := range removed {
			fmt.Fprintf(out, "removed %s\n", r)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return found, errors.Join(errs...)
}

// Report writes one line per leftover of t, naming the command that
// removes them: what a session prints before it starts. A failure to
// look is not reported (a session does not depend on it).
func Report(w io.Writer, t *tracefs.FS) {
	ls, err := Find(t)
	if err != nil {
		return
	}
	for _, l := range ls {
		fmt.Fprintf(w, "gprobe: %s; gprobe cleanup removes them\n", l.Summary())
	}
}
