// Package khist measures a function's latency inside the kernel, without
// recording: a session installs probes on the function's entry and return,
// ties them with hist triggers and a synthetic event in a private tracefs
// instance, runs the command it follows, reads the histograms and removes
// everything it created (gprobe latency).
//
// What the kernel is given (Documentation/trace/histogram.rst), for a
// function FUNC, the run's synthetic event S and the probes' group G:
//
//	G/FUNC           entry:  hist:keys=common_pid.execname:ts0=common_timestamp
//	G/FUNC__return   return: hist:keys=common_pid.execname
//	                         hist:keys=common_pid.execname:lat1=common_timestamp-$ts0+1:
//	                           onmatch(G.FUNC).trace(S,$lat1,common_pid,comm)
//	synthetic/S      u64 ns_plus1; int pid; char comm[]
//	                 hist:keys=[GROUP,]ns_plus1.log2:vals=hitcount,ns_plus1:mx=ns_plus1:onmax($mx).save(pid)
//	                 hist:keys=[GROUP,]ns_plus1.log2:mn=-(ns_plus1):onmax($mn).save(pid)
//
// The entry saves its timestamp in a variable per thread (the key); the
// return subtracts it and fires S with the latency, the thread and its
// comm (the return probe fetches $comm). A Go function's calls are keyed
// by goroutine instead (Config.Key: the goroutine may move to another
// thread in the middle of a call), its returns are plain probes on its
// return instructions (a uretprobe would crash the program when its stack
// moves), and its entries are counted per thread by a trigger of their
// own; S's histograms count the calls
// per log2 bucket of latency, keyed by comm or pid for Config.By, with the
// sum, and the largest and (through its negation) the smallest latency of
// each bucket. common_timestamp is in nanoseconds; using it switches the
// instance to the global clock. The latency is carried plus one: .log2 is
// the kernel's order_base_2, which puts v in bucket k when 2^(k-1) < v <=
// 2^k, so bucket k of v+1 is [2^(k-1), 2^k) of v, analyze's buckets (and
// the minimum's negation never meets zero).
//
// Limits, from kernel/trace/trace_events_hist.c: the variable is one per
// thread, so a call nested in another call of FUNC on the same thread
// (recursion, or an interrupt calling FUNC while the thread is inside it)
// takes over the timestamp: the inner call is measured and the outer one,
// finding the variable consumed (variables are read once), is not: it
// shows as one unmatched entry and one unmatched return. A probe does not
// fire inside another probe's handler (kprobes count such misses), and a
// kretprobe out of instances misses returns: both show as unmatched
// entries. A table holds a bounded number of entries; hits beyond are
// dropped and reported lost. Hist triggers that have variables cannot be
// paused or continued (the kernel refuses to define their variables
// twice), so the session gates counting with the instance's pid filters.
//
// Following: like gprobe record, the command and its children (through
// set_event_pid and the event-fork option, from the command's execve on,
// record/follow), or every process (Config.All). The pid filters gate the
// hist triggers (a kprobe, uprobe or synthetic event that set_event_pid
// rejects never reaches them), but tracing_on does not (the kernel feeds
// triggers through a scratch buffer when tracing is off), and rewriting
// set_event_pid lifts the filter for a moment: so the session only ever
// adds pids to the filters, and closes by adding what is followed to
// set_event_notrace_pid. Closed, both lists hold pid 1: every task is
// either not listed or excluded.
//
// Everything a session creates is removed on every exit it sees; while it
// runs, its ledger (record/leftover) names what exists, so that what a
// gprobe killed with SIGKILL left is found and removed by gprobe cleanup.
package khist

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/log2lat"
	"github.com/gprobe/gprobe/record/follow"
	"github.com/gprobe/gprobe/record/leftover"
)

var (
	// ErrUnsupported: the kernel lacks hist triggers or synthetic events.
	ErrUnsupported = errors.New("in-kernel latency histograms need hist triggers (CONFIG_HIST_TRIGGERS) and synthetic events (CONFIG_SYNTH_EVENTS)")
	// ErrConfig reports contradictory or invalid settings.
	ErrConfig = errors.New("invalid latency settings")
)

// Group is the group of the probes a session installs.
const Group = leftover.LatencyGroup

// Config describes one measurement.
type Config struct {
	// Function names the function measured, for the report.
	Function string
	// Entry is the function's entry probe as resolved.
	Entry probe.Probe
	// Returns are its return probes as resolved: one return probe (a
	// kretprobe, a uretprobe), or the plain probes on its return
	// instructions, all of one event (a Go function's: a uretprobe would
	// crash it). The session installs them in Group (probePair).
	Returns []probe.Probe
	// Key is the field of the entry and return probes by which a call's
	// entry time waits for its return: "" for the thread (common_pid), or
	// probe.GoroutineField for a Go function, whose goroutine may move to
	// another thread in the middle of a call.
	Key string
	// By keys the histograms by "comm" or "pid"; "" keeps one.
	By string
	// All follows every process, not only the command and its children.
	All bool
	// Command is run and followed; measuring ends when it exits. Without
	// it (All only), measuring ends at a signal.
	Command []string
	// Signals end the measurement (from the CLI: SIGINT, SIGTERM,
	// SIGHUP, SIGQUIT, SIGPIPE). A still-running command then gets
	// SIGTERM, as gprobe record does.
	Signals <-chan os.Signal
	// Stdin, Stdout, Stderr of the command; gprobe's own when nil.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Tracefs is the tracefs mount point; found when empty.
	Tracefs string
}

// Result is what the kernel counted.
type Result struct {
	// Function is Config.Function (for BootReport, the entry event).
	Function string
	// EntryEvent and ReturnEvent are the probes' GROUP:EVENT names.
	EntryEvent, ReturnEvent string
	// Rows are the groups' histograms (one, Group "", without Config.By),
	// in no particular order.
	Rows []Row
	// Hits counts the probe hits the triggers saw; Lost the hits the
	// kernel could not count (a full table).
	Hits, Lost uint64
	// ExitCode is the command's exit status (128+signal when killed), or
	// 128+signal of the signal that ended a measurement without a command.
	ExitCode int
	// Interrupted names the signal that ended the measurement, if one did.
	Interrupted string
}

// Row is one group's latencies.
type Row struct {
	Group string
	// Buckets[i] holds the calls whose latency in ns has bits.Len64 i.
	Buckets [65]Bucket
	// Entries and Returns count the group's entry and return hits.
	Entries, Returns uint64
}

// Bucket is what the kernel counted of the calls of one bucket.
type Bucket = log2lat.Bucket

// Supported reports (ErrUnsupported) whether root's kernel has what a
// session needs: hist triggers (the README documents them) and synthetic
// events (synthetic_events).
func Supported(root *tracefs.FS) error {
	readme, err := root.README()
	if err != nil {
		return err
	}
	var missing []string
	if !strings.Contains(readme, "hist trigger") {
		missing = append(missing, "hist triggers")
	}
	if !root.Exists("synthetic_events") {
		missing = append(missing, "synthetic events")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: this kernel has no %s", ErrUnsupported, strings.Join(missing, " and no "))
	}
	return nil
}

// KeyOf is the Config.Key for a function whose entry probe is entry: the
// goroutine when the probe reads it (a Go function's, which gprobe gives
// the pairing fields), else the thread.
func KeyOf(entry probe.Probe) string {
	for _, a := range entry.Args {
		if a.Name == probe.GoroutineField {
			return probe.GoroutineField
		}
	}
	return ""
}

// probePair checks and prepares the probes installed at the function's
// entry and returns: a kprobe and a kretprobe for a kernel function (Linux
// 6.1 and 6.12 have both), a uprobe and a uretprobe in a binary, or an
// entry probe and plain probes of one event on the return instructions.
// All go in Group; they keep only the key field, and the returns fetch
// the comm the synthetic event carries.
func probePair(entry probe.Probe, rets []probe.Probe, key string) (probe.Probe, []probe.Probe, error) {
	bad := func(why string) error {
		var texts []string
		for _, r := range rets {
			texts = append(texts, fmt.Sprintf("%q", r.String()))
		}
		return fmt.Errorf("%w: %s, have %q and %s", ErrConfig, why, entry.String(), strings.Join(texts, ", "))
	}
	if entry.Return || len(rets) == 0 {
		return entry, nil, bad("want an entry probe and return probes")
	}
	if rets[0].Return && len(rets) > 1 {
		return entry, nil, bad("want one return probe or plain probes on the return instructions")
	}
	for _, r := range rets {
		if r.Kind != entry.Kind || r.Return != rets[0].Return || r.Event != rets[0].Event || r.Event == entry.Event {
			return entry, nil, bad("want return probes of the entry's kind, all of one event")
		}
	}
	keep := func(args []probe.FetchArg) ([]probe.FetchArg, error) {
		if key == "" {
			return nil, nil
		}
		for _, a := range args {
			if a.Name == key {
				return []probe.FetchArg{a}, nil
			}
		}
		return nil, fmt.Errorf("%w: the key field %s is not fetched by the probes", ErrConfig, key)
	}
	var err error
	entry.Group = Group
	if entry.Args, err = keep(entry.Args); err != nil {
		return entry, nil, err
	}
	out := make([]probe.Probe, len(rets))
	for i, r := range rets {
		r.Group = Group
		if r.Args, err = keep(r.Args); err != nil {
			return entry, nil, err
		}
		r.Args = append(r.Args, probe.FetchArg{Name: "comm", Expr: probe.Comm{}, Type: "string"})
		out[i] = r
	}
	return entry, out, nil
}

func (c *Config) check() error {
	switch {
	case c.By != "" && c.By != "comm" && c.By != "pid":
		return fmt.Errorf("%w: --by %q: want comm or pid", ErrConfig, c.By)
	case !c.All && len(c.Command) == 0:
		return fmt.Errorf("%w: nothing to follow: give a command, or -a", ErrConfig)
	case len(c.Command) == 0 && c.Signals == nil:
		return fmt.Errorf("%w: without a command only a signal ends the measurement, and there are no Signals", ErrConfig)
	case c.Function == "":
		return fmt.Errorf("%w: no function", ErrConfig)
	}
	return nil
}

// Run measures: it installs the probes, the synthetic event and the
// triggers, follows the command (or every process), reads the histograms
// and removes all it created whatever happens; a failure to remove comes
// back as the error, with the result when there is one. It refuses
// (ErrUnsupported) before creating anything on a kernel without hist
// triggers or synthetic events.
func Run(cfg Config) (res *Result, err error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	root := tracefs.At(cfg.Tracefs)
	if cfg.Tracefs == "" {
		if root, err = tracefs.Open(); err != nil {
			return nil, err
		}
	}
	if err := Supported(root); err != nil {
		return nil, err
	}
	entry, rets, err := probePair(cfg.Entry, cfg.Returns, cfg.Key)
	if err != nil {
		return nil, err
	}
	if err := root.Check(entry.Kind); err != nil {
		return nil, err
	}
	var cmdPath string
	if len(cfg.Command) > 0 {
		if cmdPath, err = exec.LookPath(cfg.Command[0]); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrConfig, err)
		}
	}
	s := &session{cfg: cfg, root: root}
	defer func() {
		if cerr := s.cleanup(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := s.setup(entry, rets); err != nil {
		return nil, err
	}
	res = &Result{Function: cfg.Function, EntryEvent: Group + ":" + s.entry.Event, ReturnEvent: Group + ":" + s.ret.Event}
	if err := s.run(cmdPath, res); err != nil {
		return nil, err
	}
	if err := s.read(res); err != nil {
		return nil, err
	}
	return res, nil
}

// trigger is a hist trigger the session attached.
type trigger struct {
	file, spec string
	role       role
}

// role is what a trigger's table holds, for reading it back.
type role int

const (
	roleNone       role = iota
	roleSums            // calls, their sum and maximum per bucket
	roleMins            // the minimum per bucket
	roleEntryHits       // entry hits per thread
	roleReturnHits      // return hits per thread
)

type session struct {
	cfg        Config
	root       *tracefs.FS
	inst       *tracefs.Instance
	entry, ret probe.Probe
	probes     []install.Event // installed
	synth      string          // the synthetic event, once defined
	triggers   []trigger       // attached, in order
	closed     bool
	ledger     *leftover.Ledger // what is created, for a later gprobe if this one is killed
}

// setup installs the probes (all or none), defines the synthetic event,
// creates the instance with its filters closed and attaches the triggers.
func (s *session) setup(entry probe.Probe, rets []probe.Probe) error {
	installed, err := s.root.List()
	if err != nil {
		return err
	}
	reqs := []*install.Request{
		{Point: s.cfg.Function, Probes: []probe.Probe{entry}},
		{Point: s.cfg.Function + "%return", Probes: rets},
	}
	plan, err := install.Plan(reqs, installed, install.Options{Force: true, Features: s.root.Features()})
	if err != nil {
		return err
	}
	s.ledger = leftover.Start(s.root.Root, "latency")
	if err := install.Write(s.root, plan); err != nil {
		return err
	}
	s.probes = plan
	for _, p := range plan {
		s.ledger.Add(leftover.Object{Kind: "probe", Probe: p.Probe.Kind, Name: p.Probe.GroupOrDefault() + "/" + p.Probe.Event})
	}
	s.entry, s.ret = plan[0].Probe, plan[len(plan)-1].Probe

	name := leftover.LatencySynthetic(os.Getpid())
	for i := 0; ; i++ {
		n := name
		if i > 0 {
			n += "_" + strconv.Itoa(i)
		}
		err := s.root.Append("synthetic_events", synthDefinition(n))
		if err == nil {
			s.synth = n
			s.ledger.Add(leftover.Object{Kind: "synthetic", Name: n})
			break
		}
		if !errors.Is(err, tracefs.ErrExist) || i == 99 {
			return err
		}
	}

	if s.inst, err = s.root.NewUniqueInstance(leftover.LatencyInstance(os.Getpid())); err != nil {
		return err
	}
	s.ledger.Add(leftover.Object{Kind: "instance", Name: s.inst.Name})
	// Closed before any trigger exists: rewriting a list is harmless yet.
	if !s.cfg.All {
		if err := s.inst.WriteFile("options/event-fork", "1"); err != nil {
			return err
		}
	}
	for _, f := range []string{"set_event_notrace_pid", "set_event_pid"} {
		if err := s.inst.WriteFile(f, "1"); err != nil {
			return err
		}
	}
	for _, t := range s.triggerSpecs() {
		if err := s.inst.Append(t.file, t.spec); err != nil {
			return err
		}
		s.triggers = append(s.triggers, t)
		s.ledger.Add(leftover.Object{Kind: "trigger", Instance: s.inst.Name, Name: t.file, Spec: t.spec})
	}
	return nil
}

// synthFields are the synthetic event's fields.
var synthFields = []string{"u64 ns_plus1", "int pid", "char comm[]"}

// synthDefinition is the synthetic event's line in synthetic_events.
func synthDefinition(name string) string {
	return name + " " + strings.Join(synthFields, "; ")
}

// Table sizes: threads that call the function (entry and return tables),
// and groups times buckets (the synthetic event's).
const (
	threadsSize = 2048
	groupsSize  = 2048
	bucketsSize = 128 // the kernel's least; 65 buckets
)

// triggerSpecs are the triggers, in the order they are attached: the
// synthetic event's (so that nothing fires it unheard), the entry's (which
// defines ts0 and counts the entries), the return's that counts the
// returns, and the one that uses ts0 and fires the synthetic event (it
// counts only the returns that found ts0: a trigger skips an event whose
// variables are not all set). They are removed in the reverse order: the
// kernel refuses to remove a trigger whose variable is referenced, or a
// synthetic event in use. With Config.Key, ts0 is kept per key (a Go
// function's goroutine) by a trigger of its own, and the entries are
// counted per thread by another.
func (s *session) triggerSpecs() []trigger {
	return triggerSpecs(s.cfg.By, s.cfg.Key, Group, s.entry.Event, s.ret.Event, s.synth)
}

// triggerSpecs are the triggers of a measurement grouped by by, its start
// time kept per key ("": per thread), of the probes group/entry and
// group/ret and the synthetic event synth, in the order they are attached
// (see session.triggerSpecs).
func triggerSpecs(by, key, group, entry, ret, synth string) []trigger {
	byKey, size := "", bucketsSize
	if by != "" {
		byKey, size = by+",", groupsSize
	}
	synthFile := eventFile("synthetic", synth)
	entryFile, retFile := eventFile(group, entry), eventFile(group, ret)
	thread := "common_pid.execname"
	call := thread
	if key != "" {
		call = key
	}
	out := []trigger{
		{synthFile, fmt.Sprintf("hist:keys=%sns_plus1.log2:vals=hitcount,ns_plus1:mx=ns_plus1:onmax($mx).save(pid):size=%d", byKey, size), roleSums},
		{synthFile, fmt.Sprintf("hist:keys=%sns_plus1.log2:mn=-(ns_plus1):onmax($mn).save(pid):size=%d", byKey, size), roleMins},
	}
	if key == "" {
		out = append(out, trigger{entryFile, fmt.Sprintf("hist:keys=%s:ts0=common_timestamp:size=%d", thread, threadsSize), roleEntryHits})
	} else {
		out = append(out,
			trigger{entryFile, fmt.Sprintf("hist:keys=%s:ts0=common_timestamp:size=%d", call, threadsSize), roleNone},
			trigger{entryFile, fmt.Sprintf("hist:keys=%s:size=%d", thread, threadsSize), roleEntryHits})
	}
	return append(out,
		trigger{retFile, fmt.Sprintf("hist:keys=%s:size=%d", thread, threadsSize), roleReturnHits},
		trigger{retFile, fmt.Sprintf("hist:keys=%s:lat1=common_timestamp-$ts0+1:onmatch(%s.%s).trace(%s,$lat1,common_pid,comm):size=%d",
			call, group, entry, synth, threadsSize), roleNone})
}

func eventFile(group, event string) string { return "events/" + group + "/" + event + "/trigger" }

// run follows the command (or every process) with the filters open, and
// closes them when it ends or a signal comes.
func (s *session) run(cmdPath string, res *Result) error {
	if len(s.cfg.Command) == 0 {
		if err := s.openAll(); err != nil {
			return err
		}
		sig := <-s.cfg.Signals
		res.Interrupted = sig.String()
		if n, ok := sig.(syscall.Signal); ok {
			res.ExitCode = 128 + int(n)
		}
		return s.close()
	}
	cmd := follow.Command(cmdPath, s.cfg.Command, s.cfg.Stdin, s.cfg.Stdout, s.cfg.Stderr)
	beforeFork := func(tid int) error {
		if s.cfg.All {
			return s.openAll()
		}
		// The forking thread, and so the command from its creation.
		return s.inst.Append("set_event_pid", strconv.Itoa(tid))
	}
	stopped := func(int) error {
		if s.cfg.All {
			return nil
		}
		return s.excludeSelf()
	}
	if err := follow.Start(cmd, beforeFork, stopped); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		res.ExitCode = follow.ExitCode(cmd)
		return s.close()
	case sig := <-s.cfg.Signals:
		res.Interrupted = sig.String()
		err := s.close()
		res.ExitCode = follow.End(cmd, done, s.cfg.Signals)
		return err
	}
}

// openAll lets every process in: both lists emptied (emptying a list
// opens it wider, never narrower).
func (s *session) openAll() error {
	for _, f := range []string{"set_event_pid", "set_event_notrace_pid"} {
		if err := s.inst.WriteFile(f, ""); err != nil {
			return err
		}
	}
	return nil
}

// excludeSelf takes gprobe out once the command is stopped after its
// execve: this thread first (the threads it clones from then on are
// excluded with it), then every thread of gprobe, among them any the Go
// runtime cloned from this one meanwhile.
func (s *session) excludeSelf() error {
	if err := s.inst.Append("set_event_notrace_pid", strconv.Itoa(syscall.Gettid())); err != nil {
		return err
	}
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	var tids []string
	for _, e := range ents {
		tids = append(tids, e.Name())
	}
	return s.inst.Append("set_event_notrace_pid", strings.Join(tids, " "))
}

// close stops counting. Following every process, both lists are set to pid
// 1 (the notrace list first, so that rewriting set_event_pid only lets
// everyone in for a moment, as they were). Following a command, what
// set_event_pid holds (the command and its children still running) joins
// the notrace list, until no child forked meanwhile is left out.
func (s *session) close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.cfg.All {
		for _, f := range []string{"set_event_notrace_pid", "set_event_pid"} {
			if err := s.inst.WriteFile(f, "1"); err != nil {
				return err
			}
		}
		return nil
	}
	excluded := map[string]bool{}
	for range 100 {
		out, err := s.inst.ReadFile("set_event_notrace_pid")
		if err != nil {
			return err
		}
		for _, p := range strings.Fields(string(out)) {
			excluded[p] = true
		}
		in, err := s.inst.ReadFile("set_event_pid")
		if err != nil {
			return err
		}
		var add []string
		for _, p := range strings.Fields(string(in)) {
			if !excluded[p] {
				add = append(add, p)
			}
		}
		if len(add) == 0 {
			return nil
		}
		if err := s.inst.Append("set_event_notrace_pid", strings.Join(add, " ")); err != nil {
			return err
		}
	}
	return errors.New("the followed processes keep forking: cannot stop counting them")
}

// cleanup removes what setup created, in the order the kernel requires:
// the triggers (last attached first), the instance, the synthetic event,
// the probes. It goes on after a failure and returns the first error. The
// instance stays when a trigger could not be removed: removing an
// instance whose synthetic event still has triggers leaves the event
// defined and busy for good (Linux 6.1).
func (s *session) cleanup() error {
	var errs []error
	triggersLeft := false
	for i := len(s.triggers) - 1; i >= 0; i-- {
		t := s.triggers[i]
		if err := s.inst.Append(t.file, "!"+t.spec); err != nil {
			errs = append(errs, fmt.Errorf("removing trigger %s: %w", t.spec, err))
			triggersLeft = true
		}
	}
	s.triggers = nil
	if s.inst != nil && !triggersLeft {
		if err := s.inst.Remove(); err != nil {
			errs = append(errs, err)
		}
		s.inst = nil
	}
	if s.synth != "" {
		if err := s.root.Append("synthetic_events", "!"+s.synth); err != nil {
			errs = append(errs, fmt.Errorf("removing synthetic event %s: %w", s.synth, err))
		}
		s.synth = ""
	}
	deleted := map[string]bool{} // an event of several probes goes at once
	for i := len(s.probes) - 1; i >= 0; i-- {
		p := s.probes[i].Probe
		if deleted[p.GroupOrDefault()+"/"+p.Event] {
			continue
		}
		deleted[p.GroupOrDefault()+"/"+p.Event] = true
		if err := install.Delete(s.root, p.Kind, p.GroupOrDefault(), p.Event); err != nil {
			errs = append(errs, err)
		}
	}
	s.probes = nil
	s.ledger.Done(len(errs) == 0)
	if len(errs) > 0 {
		return fmt.Errorf("cleaning up: %w", errors.Join(errs...))
	}
	return nil
}
