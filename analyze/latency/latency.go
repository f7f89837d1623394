// Package latency pairs entry and return probe events into calls, per
// thread, and summarises call durations per function: count, min, mean,
// max, percentiles and a log2 histogram.
//
// Pairing is by function identity, not raw instruction pointer: the
// return event's name ("FUNC__return" for FUNC, perf's convention; "r_X"
// for "p_X", the kernel's automatic names; "FUNC__retinsn" and
// "FUNC__tailcall", gprobe's plain probes on a function's return
// instructions and tail calls, as emit/probe names them; in an SDT
// marker's group sdt_PROVIDER, "X__done", "X__end" and "X__return" for
// "X__start", "X__begin" and "X__entry", the markers' own convention), a
// probe definition naming the same target, or else the return's
// __probe_func equal to an entry's __probe_ip in the same process. Each thread keeps a stack per function,
// so recursion pairs each return with the innermost open call.
//
// User events (systems user_events and user_events_multi, which an
// application defines and writes) pair by name the same way: NAME__return
// ends NAME, and NAME_end ends NAME_begin (the function is then NAME).
//
// Go functions are paired by goroutine instead of thread, when their events
// carry the goroutine's id (probe.GoroutineField, gprobe's $goid): goroutines
// move between threads in the middle of calls. With the stack pointer and the
// top of the goroutine's stack too (probe.GoStackPointerField and
// GoStackTopField, which gprobe records at a Go function's entry and returns),
// each call's depth on its goroutine is known, even after the runtime has moved
// the stack: a return pairs with the open call at its own depth, and open calls
// deeper than it never returned (a panic or runtime.Goexit unwound them, no
// return instruction ran) and count as entries without a return, as does a
// call found open at its own depth by a new one.
package latency

import (
	"sort"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
)

// Options select grouping.
type Options struct {
	// By splits each function's statistics by "comm" or "pid"; "" keeps one
	// row per function.
	By string
	// Definitions are probe definition lines (uprobe_events/kprobe_events/dynamic_events
	// syntax); an entry and a return probe on the same target pair up.
	Definitions []string
}

// Call is one matched entry/return pair.
type Call struct {
	Function  string
	PID, TGID int // the thread of the return, its process
	// Goroutine is the goroutine of a Go call paired by goroutine (0
	// otherwise): its entry and return may be on different threads.
	Goroutine  uint64
	Comm       string
	Start, End uint64
	Depth      int // open calls of the same function below this one
	// Open counts the calls of any function still open on the thread once
	// this one returned: 0 means the thread is back at its outermost
	// level (folded-stack building flushes then).
	Open int
}

// Result summarises one function (and group, with Options.By).
type Result struct {
	Function         string   `json:"function"`
	Group            string   `json:"group,omitempty"`
	EntryEvent       string   `json:"entry_event"`
	ReturnEvent      string   `json:"return_event"`
	Count            uint64   `json:"count"`
	UnmatchedEntries uint64   `json:"unmatched_entries"`
	UnmatchedReturns uint64   `json:"unmatched_returns"`
	MinNs            uint64   `json:"min_ns"`
	MeanNs           uint64   `json:"mean_ns"`
	P50Ns            uint64   `json:"p50_ns"`
	P90Ns            uint64   `json:"p90_ns"`
	P99Ns            uint64   `json:"p99_ns"`
	P999Ns           uint64   `json:"p999_ns"`
	MaxNs            uint64   `json:"max_ns"`
	Histogram        []Bucket `json:"histogram"`
	// Uncertain: events were lost while calls of this function were
	// open, so a return may be missing or paired with the wrong entry.
	Uncertain bool `json:"uncertain,omitempty"`
}

type frame struct {
	ts    uint64
	comm  string
	pid   int    // the thread at the entry
	depth uint64 // a Go call's depth on its goroutine (hasDepth)
	// hasDepth: the call's events carry the stack pointer and stack top.
	hasDepth bool
}

type stats struct {
	res   Result
	sum   uint64
	q     quantiles
	h     log2hist
	first bool
}

type fnInfo struct {
	name       string // function identity
	entryEvent string
	retEvent   string
}

// stream is what a function's calls are paired within: a thread, or a
// goroutine of a process.
type stream struct {
	goroutine bool
	proc      int    // the process of a goroutine
	id        uint64 // the thread's id, or the goroutine's
}

type threadKey struct {
	stream
	fn int
}

// class is what the analyzer learned about one event type, so that the
// per-event work is a map lookup by format pointer.
type class struct {
	ret       bool
	probe     bool // has __probe_ip (entry) or is a return
	full      string
	fn        int // entry: function index; return: partner (-1 unknown)
	ipField   *eventfmt.Field
	funcField *eventfmt.Field
	// goidField, spField and hiField are a Go function's goroutine id,
	// stack pointer and stack top (probe.GoroutineField ...).
	goidField, spField, hiField *eventfmt.Field
	goid, depth                 bool    // the event has them
	info                        *fnInfo // return: the partner's, once known
	lastProc                    int
	lastIP                      uint64
}

type addrKey struct {
	proc int
	addr uint64
}

// Analyzer consumes events in time order.
type Analyzer struct {
	opts Options
	// OnCall, when set, sees every matched call.
	OnCall func(Call)

	stacks map[threadKey]*[]frame
	open   map[stream]int // per thread or goroutine: open calls of all functions (kept for OnCall)
	// lastStack caches, per function, the thread whose stack was used
	// last: entries and returns of different functions interleave, and
	// the same thread mostly goes on.
	lastStack []lastStack
	fns       map[string]*fnInfo // by function identity
	fnIDs     map[string]int
	fnNames   []string
	classes   trace.TypeCache[*class]
	evFn      map[string]string  // entry event full name -> function identity
	retFn     map[string]string  // return event full name -> function identity ("" = not yet known)
	addrFn    map[addrKey]string // (process, entry ip) -> function identity
	defs      map[string]string  // event name -> probe target, from Definitions
	defRet    map[string]bool
	stats     map[[2]string]*stats
	statFn    map[string]*stats
	statID    []*stats             // by function index, when not grouping
	uncertain map[int]bool         // function indexes with calls open at a loss
	unplaced  map[[2]string]uint64 // returns whose function was not known when seen, by (event, group)
	dropped   map[[2]string]uint64 // open calls forgotten by dropUnpaired, by (function, group)
	abandoned map[[2]string]uint64 // Go calls unwound without a return, by (function, group)
	finished  bool
}

// New returns an empty analyzer.
func New(opts Options) *Analyzer {
	a := &Analyzer{opts: opts, stacks: map[threadKey]*[]frame{}, open: map[stream]int{}, fns: map[string]*fnInfo{}, abandoned: map[[2]string]uint64{},
		fnIDs: map[string]int{}, uncertain: map[int]bool{},
		evFn: map[string]string{}, retFn: map[string]string{}, addrFn: map[addrKey]string{},
		defs: map[string]string{}, defRet: map[string]bool{}, stats: map[[2]string]*stats{}, statFn: map[string]*stats{}, unplaced: map[[2]string]uint64{},
		dropped: map[[2]string]uint64{}}
	for _, d := range opts.Definitions {
		a.addDefinition(d)
	}
	return a
}

// addDefinition reads a probe definition line (emit/probedef, the one
// reader of them, with every feature it knows: a kernel accepted the line):
// named events remember their place, so that an entry and a return probe
// on the same place pair up (a kprobe and a kretprobe, an fprobe's entry
// and exit). Lines that are not named probe definitions are ignored.
func (a *Analyzer) addDefinition(line string) {
	p, err := probedef.Parse(line, &probedef.Options{NoStat: true, AnyRegister: true, Features: &probedef.KnownFeatures})
	if err != nil || p.Event == "" {
		return
	}
	p.Target.Place = "" // "vfs_read", "vfs_read+0" and "vfs_read%return" are one place
	a.defs[p.Event] = p.Target.String()
	a.defRet[p.Event] = p.Return
}

func fullName(e *trace.Event) string {
	if e.System == "" {
		return e.Name
	}
	return e.System + ":" + e.Name
}

// isReturn tells a return event: a return probe's, or a plain probe's on
// a return instruction or tail call (which has __probe_ip like an entry).
func isReturn(e *trace.Event) bool {
	if exit, _ := probe.EventExit(e.Name); exit != probe.NoExit {
		return true
	}
	if userEvent(e) && strings.HasSuffix(e.Name, userEnd) {
		return true
	}
	if _, ok := sdtEntry(e.System, e.Name); ok {
		return true
	}
	return strings.HasSuffix(e.Name, "__return") || e.Has("__probe_func")
}

// The suffixes of user events that begin and end a span.
const userBegin, userEnd = "_begin", "_end"

// userEvent tells an event an application defined (user_events).
func userEvent(e *trace.Event) bool {
	return e.System == "user_events" || e.System == "user_events_multi"
}

// sdtPairs are the names SDT markers open and close an operation with:
// python's gc__start/gc__done, the JVM's method__compile__begin/__end,
// its JNI's GetVersion__entry/__return.
var sdtPairs = [...][2]string{{"__start", "__done"}, {"__begin", "__end"}, {"__entry", "__return"}}

// sdtEntry is the entry marker a marker of group system closes, when the
// group is an SDT group (sdt_PROVIDER) and the name one of sdtPairs'.
func sdtEntry(system, name string) (string, bool) {
	if !strings.HasPrefix(system, "sdt_") {
		return "", false
	}
	for _, p := range sdtPairs {
		if base, ok := strings.CutSuffix(name, p[1]); ok && base != "" {
			return base + p[0], true
		}
	}
	return "", false
}

func (a *Analyzer) classOf(e *trace.Event) *class { return a.classes.Get(e, a.derive) }

func (a *Analyzer) derive(e *trace.Event) *class {
	c := &class{full: fullName(e), fn: -1}
	switch {
	case isReturn(e):
		c.ret, c.probe = true, true
	case e.Has("__probe_ip") || userEvent(e):
		c.probe = true
		fn, known := a.evFn[c.full]
		if !known {
			fn = c.full
			name := e.Name
			if userEvent(e) {
				name = strings.TrimSuffix(name, userBegin)
			}
			a.evFn[c.full] = fn
			a.fns[fn] = &fnInfo{name: name, entryEvent: c.full}
		}
		c.fn = a.fnID(fn)
	}
	if e.Format != nil {
		c.ipField = e.Format.Field("__probe_ip")
		c.funcField = e.Format.Field("__probe_func")
		c.goidField = e.Format.Field(probe.GoroutineField)
		c.spField = e.Format.Field(probe.GoStackPointerField)
		c.hiField = e.Format.Field(probe.GoStackTopField)
	}
	c.goid = e.Has(probe.GoroutineField)
	c.depth = c.goid && e.Has(probe.GoStackPointerField) && e.Has(probe.GoStackTopField)
	return c
}

// streamOf is the stream an event's call belongs to (its goroutine when
// the event names one, else its thread), and the call's depth on a
// goroutine when the event gives it.
func (c *class) streamOf(e *trace.Event) (s stream, depth uint64, hasDepth bool) {
	if c.goid {
		if g, ok := c.uint(e, c.goidField, probe.GoroutineField); ok {
			// A goroutine runs on any thread of its process: without the
			// process (a recording without TGIDs), goroutines of all
			// processes share one space.
			s = stream{goroutine: true, proc: e.TGID, id: g}
			if c.depth {
				sp, ok1 := c.uint(e, c.spField, probe.GoStackPointerField)
				hi, ok2 := c.uint(e, c.hiField, probe.GoStackTopField)
				if ok1 && ok2 && hi >= sp {
					return s, hi - sp, true
				}
			}
			return s, 0, false
		}
	}
	return stream{id: uint64(e.PID)}, 0, false
}

func (a *Analyzer) fnID(fn string) int {
	if id, ok := a.fnIDs[fn]; ok {
		return id
	}
	a.fnIDs[fn] = len(a.fnNames)
	a.fnNames = append(a.fnNames, fn)
	return len(a.fnNames) - 1
}

func (c *class) uint(e *trace.Event, f *eventfmt.Field, name string) (uint64, bool) {
	if f != nil {
		return f.Uint(e.Data, e.Order)
	}
	if e.Format != nil {
		return 0, false
	}
	return e.Uint(name)
}

// Event feeds one event.
func (a *Analyzer) Event(e *trace.Event) {
	if e.Kind == trace.Lost {
		// Open calls may have lost their return (or a nested entry).
		for k, st := range a.stacks {
			if len(*st) > 0 {
				a.uncertain[k.fn] = true
			}
		}
		return
	}
	if e.Kind != trace.Data {
		return
	}
	c := a.classOf(e)
	if !c.probe {
		return
	}
	if c.ret {
		a.onReturn(e, c)
		return
	}
	if ip, ok := c.uint(e, c.ipField, "__probe_ip"); ok {
		// Remember which function this address is, for returns that only
		// name an address; the same (process, ip) repeats, skip the map then.
		if p := e.Process(); p != c.lastProc || ip != c.lastIP {
			c.lastProc, c.lastIP = p, ip
			k := addrKey{p, ip}
			if _, seen := a.addrFn[k]; !seen {
				a.addrFn[k] = a.fnNames[c.fn]
			}
		}
	}
	sk, depth, hasDepth := c.streamOf(e)
	st := a.stack(threadKey{sk, c.fn})
	if hasDepth {
		// A call still open at this depth or deeper never returned.
		a.abandon(sk, c.fn, st, func(f frame) bool { return f.hasDepth && f.depth >= depth })
	}
	if len(*st) >= maxUnpaired && a.fns[a.fnNames[c.fn]].retEvent == "" {
		a.dropUnpaired(sk, c.fn, st)
	}
	*st = append(*st, frame{ts: e.TS, comm: e.Comm, pid: e.PID, depth: depth, hasDepth: hasDepth})
	if a.OnCall != nil { // a map update per event costs only those who ask
		a.open[sk]++
	}
}

// abandon pops the open calls on top of st that gone says ended without a
// return (a Go panic or runtime.Goexit unwound them): entries without a
// return.
func (a *Analyzer) abandon(sk stream, fn int, st *[]frame, gone func(frame) bool) {
	n := len(*st)
	for n > 0 && gone((*st)[n-1]) {
		n--
		f := (*st)[n]
		a.abandoned[[2]string{a.fnNames[fn], a.group(f.pid, f.comm)}]++
		if a.OnCall != nil {
			a.open[sk]--
		}
	}
	*st = (*st)[:n]
}

// maxUnpaired bounds the open calls kept per thread of a function no
// return event has been seen for: an entry probe without a return probe
// (obj_get, kmalloc) would otherwise keep every event it ever saw.
const maxUnpaired = 1024

// dropUnpaired forgets the older half of a thread's open calls of a
// function without returns so far; they count as entries without return
// if a return shows up later.
func (a *Analyzer) dropUnpaired(sk stream, fn int, st *[]frame) {
	half := len(*st) / 2
	if a.opts.By == "" {
		a.dropped[[2]string{a.fnNames[fn], ""}] += uint64(half)
	} else {
		for _, f := range (*st)[:half] {
			a.dropped[[2]string{a.fnNames[fn], a.group(f.pid, f.comm)}]++
		}
	}
	n := copy(*st, (*st)[half:])
	*st = (*st)[:n]
	if a.OnCall != nil {
		a.open[sk] -= half
	}
}

type lastStack struct {
	sk stream
	st *[]frame
}

// stack returns a thread's open calls of one function. Consecutive events
// of a function mostly come from the same thread, so its last is cached.
func (a *Analyzer) stack(k threadKey) *[]frame {
	for len(a.lastStack) <= k.fn {
		a.lastStack = append(a.lastStack, lastStack{})
	}
	c := &a.lastStack[k.fn]
	if c.st != nil && c.sk == k.stream {
		return c.st
	}
	st, ok := a.stacks[k]
	if !ok {
		st = new([]frame)
		a.stacks[k] = st
	}
	*c = lastStack{k.stream, st}
	return st
}

// partner finds the entry function of a return event.
func (a *Analyzer) partner(e *trace.Event, full string) string {
	if fn, ok := a.retFn[full]; ok && fn != "" {
		return fn
	}
	prefix := ""
	if e.System != "" {
		prefix = e.System + ":"
	}
	var cands []string
	if base, ok := strings.CutSuffix(e.Name, "__return"); ok {
		cands = append(cands, base)
	}
	if rest, ok := strings.CutPrefix(e.Name, "r_"); ok {
		cands = append(cands, "p_"+rest)
	}
	if base, ok := strings.CutSuffix(e.Name, userEnd); ok && userEvent(e) {
		cands = append(cands, base+userBegin)
	}
	if exit, base := probe.EventExit(e.Name); exit != probe.NoExit {
		cands = append(cands, base)
	}
	if entry, ok := sdtEntry(e.System, e.Name); ok {
		cands = append(cands, entry)
	}
	if t, ok := a.defs[e.Name]; ok && a.defRet[e.Name] {
		for ev, t2 := range a.defs {
			if t2 == t && !a.defRet[ev] {
				cands = append(cands, ev)
			}
		}
	}
	for _, c := range cands {
		if fn, ok := a.evFn[prefix+c]; ok {
			a.retFn[full] = fn
			return fn
		}
	}
	if fa, ok := e.Uint("__probe_func"); ok {
		if fn, ok := a.addrFn[addrKey{e.Process(), fa}]; ok {
			a.retFn[full] = fn
			return fn
		}
	}
	return ""
}

func (a *Analyzer) onReturn(e *trace.Event, c *class) {
	full := c.full
	if c.fn < 0 {
		if fn := a.partner(e, full); fn != "" {
			c.fn = a.fnID(fn)
		}
	}
	if c.fn < 0 {
		// No entry seen yet: the entry probe is missing or the trace
		// started inside the call.
		a.unplaced[[2]string{full, a.group(e.PID, e.Comm)}]++
		return
	}
	fn := a.fnNames[c.fn]
	if c.info == nil {
		c.info = a.fns[fn]
	}
	info := c.info
	if info.retEvent == "" {
		info.retEvent = full
	}
	sk, depth, hasDepth := c.streamOf(e)
	sp := a.stack(threadKey{sk, c.fn})
	if hasDepth {
		// Calls deeper than this return never returned; a return with no
		// call open at its depth has no entry here.
		a.abandon(sk, c.fn, sp, func(f frame) bool { return f.hasDepth && f.depth > depth })
		if n := len(*sp); n > 0 && (*sp)[n-1].hasDepth && (*sp)[n-1].depth != depth {
			a.stat(fn, a.group(e.PID, e.Comm)).res.UnmatchedReturns++
			return
		}
	}
	if len(*sp) == 0 {
		a.stat(fn, a.group(e.PID, e.Comm)).res.UnmatchedReturns++
		return
	}
	// The emptied stack stays in the map: the thread will call again,
	// and reusing its array spares an allocation per call.
	st := (*sp)[:len(*sp)-1]
	f := (*sp)[len(st)]
	*sp = st
	var d uint64
	if e.TS > f.ts {
		d = e.TS - f.ts
	}
	var s *stats
	if a.opts.By == "" {
		for len(a.statID) <= c.fn {
			a.statID = append(a.statID, nil)
		}
		if s = a.statID[c.fn]; s == nil {
			s = a.stat(fn, "")
			a.statID[c.fn] = s
		}
	} else {
		s = a.stat(fn, a.group(f.pid, f.comm))
	}
	r := &s.res
	if r.Count == 0 || d < r.MinNs {
		r.MinNs = d
	}
	if d > r.MaxNs {
		r.MaxNs = d
	}
	r.Count++
	s.sum += d
	s.q.add(d)
	s.h.add(d)
	if a.OnCall != nil {
		open := a.open[sk] - 1
		if open <= 0 {
			open = 0
			delete(a.open, sk)
		} else {
			a.open[sk] = open
		}
		var g uint64
		if sk.goroutine {
			g = sk.id
		}
		a.OnCall(Call{Function: info.name, PID: e.PID, TGID: e.TGID, Goroutine: g, Comm: f.comm, Start: f.ts, End: e.TS, Depth: len(st), Open: open})
	}
}

func (a *Analyzer) group(pid int, comm string) string {
	switch a.opts.By {
	case "comm":
		return comm
	case "pid":
		return strconv.Itoa(pid)
	}
	return ""
}

func (a *Analyzer) stat(fn, group string) *stats {
	if a.opts.By == "" {
		// One row per function: skip the string-keyed map on the hot path.
		if s, ok := a.statFn[fn]; ok {
			return s
		}
	}
	k := [2]string{fn, group}
	s, ok := a.stats[k]
	if !ok {
		s = &stats{}
		s.res.Group = group
		a.stats[k] = s
		if a.opts.By == "" {
			a.statFn[fn] = s
		}
	}
	return s
}

// finish closes the analysis, once: returns seen before their function
// was known and calls still open find their rows, and rows of functions
// with calls open at a loss are marked uncertain.
func (a *Analyzer) finish() {
	if a.finished {
		return
	}
	a.finished = true
	// A return seen before any entry of its function still belongs to
	// that function when its name says so.
	for k, n := range a.unplaced {
		sys, name, ok := strings.Cut(k[0], ":")
		if !ok {
			sys, name = "", k[0]
		}
		fn := a.partner(&trace.Event{System: sys, Name: name}, k[0])
		if fn == "" {
			continue
		}
		if a.fns[fn].retEvent == "" {
			a.fns[fn].retEvent = k[0]
		}
		a.stat(fn, k[1]).res.UnmatchedReturns += n
		delete(a.unplaced, k)
	}
	paired := map[string]bool{}
	for _, info := range a.fns {
		if info.retEvent != "" {
			paired[a.evFn[info.entryEvent]] = true
		}
	}
	for k, st := range a.stacks {
		fn := a.fnNames[k.fn]
		if !paired[fn] {
			continue
		}
		for _, f := range *st {
			a.stat(fn, a.group(f.pid, f.comm)).res.UnmatchedEntries++
		}
	}
	for k, n := range a.dropped {
		if paired[k[0]] {
			a.stat(k[0], k[1]).res.UnmatchedEntries += n
		}
	}
	for k, n := range a.abandoned {
		if paired[k[0]] {
			a.stat(k[0], k[1]).res.UnmatchedEntries += n
		}
	}
	for k, s := range a.stats {
		if id, ok := a.fnIDs[k[0]]; ok && a.uncertain[id] {
			s.res.Uncertain = true
		}
	}
}

// Merge adds the rows of b, whose events are all fed, to a (an analyzer
// that sees no events itself: the total of several recordings). Rows of
// the same function name and group add up, their percentiles come from
// the merged histograms.
func (a *Analyzer) Merge(b *Analyzer) {
	b.finish()
	for k, s := range b.stats {
		info := b.fns[k[0]]
		mine, ok := a.fns[info.name]
		if !ok {
			mine = &fnInfo{name: info.name, entryEvent: info.entryEvent}
			a.fns[info.name] = mine
		}
		if mine.retEvent == "" {
			mine.retEvent = info.retEvent
		}
		a.stat(info.name, k[1]).merge(s)
	}
	for k, n := range b.unplaced {
		a.unplaced[k] += n
	}
}

func (s *stats) merge(o *stats) {
	r, x := &s.res, &o.res
	if x.Count > 0 {
		if r.Count == 0 || x.MinNs < r.MinNs {
			r.MinNs = x.MinNs
		}
		r.MaxNs = max(r.MaxNs, x.MaxNs)
	}
	r.Count += x.Count
	r.UnmatchedEntries += x.UnmatchedEntries
	r.UnmatchedReturns += x.UnmatchedReturns
	r.Uncertain = r.Uncertain || x.Uncertain
	s.sum += o.sum
	s.q.merge(&o.q)
	for i, c := range o.h {
		s.h[i] += c
	}
}

// Results closes the analysis: open calls become unmatched entries, and
// returns never placed count as unmatched returns of their own row. Rows
// are sorted by function then group. Functions that never had a return
// event are not reported: they are not entry/return pairs.
func (a *Analyzer) Results() []Result {
	a.finish()
	var out []Result
	for k, s := range a.stats {
		info := a.fns[k[0]]
		r := s.res
		r.Function, r.EntryEvent, r.ReturnEvent = info.name, info.entryEvent, info.retEvent
		if r.Count > 0 {
			r.MeanNs = s.sum / r.Count
			r.P50Ns = s.q.quantile(0.50, r.MinNs, r.MaxNs)
			r.P90Ns = s.q.quantile(0.90, r.MinNs, r.MaxNs)
			r.P99Ns = s.q.quantile(0.99, r.MinNs, r.MaxNs)
			r.P999Ns = s.q.quantile(0.999, r.MinNs, r.MaxNs)
		}
		r.Histogram = s.h.buckets()
		out = append(out, r)
	}
	for k, n := range a.unplaced {
		ev := k[0]
		name := ev
		if i := strings.LastIndexByte(name, ':'); i >= 0 {
			name = name[i+1:]
		}
		if exit, base := probe.EventExit(name); exit != probe.NoExit {
			name = base
		}
		name = strings.TrimSuffix(name, "__return")
		out = append(out, Result{Function: name, Group: k[1], ReturnEvent: ev, UnmatchedReturns: n, Histogram: []Bucket{}})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Function != out[j].Function {
			return out[i].Function < out[j].Function
		}
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].ReturnEvent < out[j].ReturnEvent
	})
	return out
}
