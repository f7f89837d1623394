package latency

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/gprobe/gprobe/analyze/trace"
)

func entry(name string, pid int, ts uint64, ip string) *trace.Event {
	return &trace.Event{System: "g", Name: name, PID: pid, TS: ts, Comm: "c", Fields: []trace.KV{{Key: "__probe_ip", Val: ip}}}
}

func ret(name string, pid int, ts uint64, fn string) *trace.Event {
	return &trace.Event{System: "g", Name: name, PID: pid, TS: ts, Comm: "c", Fields: []trace.KV{{Key: "__probe_ret_ip", Val: "0x1"}, {Key: "__probe_func", Val: fn}}}
}

func one(t *testing.T, rs []Result, fn string) Result {
	t.Helper()
	for _, r := range rs {
		if r.Function == fn {
			return r
		}
	}
	t.Fatalf("no row for %s in %+v", fn, rs)
	return Result{}
}

func TestRecursionNestingAndThreads(t *testing.T) {
	a := New(Options{})
	var calls []Call
	a.OnCall = func(c Call) { calls = append(calls, c) }
	evs := []*trace.Event{
		entry("f", 1, 100, "0x10"),
		entry("f", 2, 105, "0x10"), // another thread interleaves
		entry("f", 1, 110, "0x10"), // recursion
		entry("g", 1, 115, "0x20"), // nested other function
		ret("g__return", 1, 120, "0x20"),
		ret("f__return", 1, 130, "0x10"), // inner f: 20
		ret("f__return", 2, 140, "0x10"), // thread 2: 35
		ret("f__return", 1, 200, "0x10"), // outer f: 100
		ret("f__return", 1, 210, "0x10"), // no entry left
		entry("g", 1, 300, "0x20"),       // never returns
		entry("h", 1, 310, "0x30"),       // entry-only probe: not a pair, not reported
	}
	for _, e := range evs {
		a.Event(e)
	}
	rs := a.Results()
	if len(rs) != 2 {
		t.Fatalf("%+v", rs)
	}
	f := one(t, rs, "f")
	if f.Count != 3 || f.MinNs != 20 || f.MaxNs != 100 || f.MeanNs != 51 || f.UnmatchedReturns != 1 || f.UnmatchedEntries != 0 || f.EntryEvent != "g:f" || f.ReturnEvent != "g:f__return" {
		t.Errorf("f %+v", f)
	}
	if f.P50Ns != 35 || f.P99Ns != 100 {
		t.Errorf("f percentiles %d %d", f.P50Ns, f.P99Ns)
	}
	g := one(t, rs, "g")
	if g.Count != 1 || g.MinNs != 5 || g.UnmatchedEntries != 1 {
		t.Errorf("g %+v", g)
	}
	if len(calls) != 4 || calls[0].Depth != 0 || calls[1].Function != "f" || calls[1].Depth != 1 || calls[1].End-calls[1].Start != 20 {
		t.Errorf("calls %+v", calls)
	}
}

func TestPairingByNameAddressAndDefinition(t *testing.T) {
	a := New(Options{Definitions: []string{"p:g/open_in /bin/x:0x40", "r:g/open_out /bin/x:0x40"}})
	for _, e := range []*trace.Event{
		entry("p_do_sys_open_0", 1, 10, "do_sys_open+0x0/0xd6"),
		ret("r_do_sys_open_0", 1, 15, "do_sys_open"),
		entry("myentry", 1, 20, "0x500"),
		ret("myexit", 1, 29, "0x500"), // paired by __probe_func == __probe_ip
		entry("open_in", 1, 30, "0x900"),
		ret("open_out", 1, 37, "0x111"), // paired by the definitions
		ret("lonely__return", 1, 40, "0x777"),
	} {
		a.Event(e)
	}
	rs := a.Results()
	if r := one(t, rs, "p_do_sys_open_0"); r.Count != 1 || r.MinNs != 5 || r.ReturnEvent != "g:r_do_sys_open_0" {
		t.Errorf("%+v", r)
	}
	if r := one(t, rs, "myentry"); r.Count != 1 || r.MinNs != 9 || r.ReturnEvent != "g:myexit" {
		t.Errorf("%+v", r)
	}
	if r := one(t, rs, "open_in"); r.Count != 1 || r.MinNs != 7 {
		t.Errorf("%+v", r)
	}
	if r := one(t, rs, "lonely"); r.Count != 0 || r.UnmatchedReturns != 1 {
		t.Errorf("%+v", r)
	}
}

func TestReturnBeforeFirstEntry(t *testing.T) {
	a := New(Options{})
	a.Event(ret("f__return", 1, 5, "0x10")) // the trace started inside f
	a.Event(entry("f", 1, 10, "0x10"))
	a.Event(ret("f__return", 1, 12, "0x10"))
	rs := a.Results()
	if len(rs) != 1 || rs[0].Count != 1 || rs[0].UnmatchedReturns != 1 {
		t.Errorf("%+v", rs)
	}
}

func TestByCommAndPid(t *testing.T) {
	for _, by := range []string{"comm", "pid"} {
		a := New(Options{By: by})
		for pid := 1; pid <= 3; pid++ {
			e := entry("f", pid, 10, "0x10")
			e.Comm = map[int]string{1: "a", 2: "a", 3: "b"}[pid]
			a.Event(e)
			r := ret("f__return", pid, 10+uint64(pid), "0x10")
			a.Event(r)
		}
		rs := a.Results()
		want := map[string]int{"comm": 2, "pid": 3}[by]
		if len(rs) != want {
			t.Errorf("--by %s: %+v", by, rs)
		}
		if by == "comm" && (rs[0].Group != "a" || rs[0].Count != 2 || rs[1].Group != "b") {
			t.Errorf("--by comm: %+v", rs)
		}
	}
}

// Percentiles stay within the histogram's precision of the exact ones.
func TestQuantileAccuracy(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var q quantiles
	var vals []uint64
	for i := 0; i < 100000; i++ {
		v := uint64(rng.ExpFloat64() * 50000)
		vals = append(vals, v)
		q.add(v)
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	for _, p := range []float64{0.5, 0.9, 0.99, 0.999} {
		exact := vals[int(p*float64(len(vals))+0.999999)-1]
		got := q.quantile(p, vals[0], vals[len(vals)-1])
		diff := float64(got) - float64(exact)
		if diff < 0 {
			diff = -diff
		}
		if diff > float64(exact)/256+1 {
			t.Errorf("p%v: %d, exact %d", p*100, got, exact)
		}
	}
	for i := 0; i < 40000; i += 7 {
		lo, hi := qBounds(qIndex(uint64(i)))
		if uint64(i) < lo || uint64(i) > hi {
			t.Fatalf("%d not in its bucket [%d,%d]", i, lo, hi)
		}
	}
}

func TestLog2Buckets(t *testing.T) {
	var h log2hist
	for _, v := range []uint64{0, 1, 3, 1000, 1023, 1024} {
		h.add(v)
	}
	b := h.buckets()
	if b[0].LowNs != 0 || b[0].HighNs != 1 || b[0].Count != 1 || b[1].LowNs != 1 || b[2].LowNs != 2 || b[2].Count != 1 {
		t.Errorf("%+v", b)
	}
	last := b[len(b)-1]
	if last.LowNs != 1024 || last.HighNs != 2048 || last.Count != 1 || b[len(b)-2].Count != 2 {
		t.Errorf("%+v", b)
	}
}

func TestLostEventsMakeOpenCallsUncertain(t *testing.T) {
	a := New(Options{})
	a.Event(entry("f", 1, 10, "0x10"))
	a.Event(entry("g", 1, 11, "0x20"))
	a.Event(ret("g__return", 1, 12, "0x20"))
	a.Event(&trace.Event{Kind: trace.Lost, TS: 13, Count: 5})
	a.Event(ret("f__return", 1, 20, "0x10"))
	rs := a.Results()
	if f := one(t, rs, "f"); !f.Uncertain || f.Count != 1 {
		t.Errorf("f %+v", f)
	}
	if g := one(t, rs, "g"); g.Uncertain {
		t.Errorf("g had no open call at the loss: %+v", g)
	}
}

// Plain probes on a function's return instructions and tail calls
// (gprobe --ret-insn) have __probe_ip like entries; their names, as
// emit/probe makes them, say they are returns of the entry they pair with.
func TestReturnInstructionEvents(t *testing.T) {
	a := New(Options{Definitions: []string{
		"p:g/vfs_read vfs_read+0",
		"p:g/vfs_read__retinsn vfs_read+236 %ax",
		"p:g/getname__retinsn getname+58 %ax",
		"p:g/getname__tailcall getname+75",
	}})
	for _, e := range []*trace.Event{
		entry("vfs_read", 1, 10, "vfs_read+0x0/0x120"),
		entry("vfs_read__retinsn", 1, 14, "vfs_read+0xec/0x120"),
		entry("getname", 1, 20, "getname+0x0/0x60"),
		entry("getname", 2, 21, "getname+0x0/0x60"),
		entry("getname__tailcall", 1, 29, "getname+0x4b/0x60"),
		entry("getname__retinsn_1", 2, 33, "getname+0x3a/0x60"),  // a suffixed name (-f)
		entry("vfs_read__retinsn", 3, 40, "vfs_read+0xec/0x120"), // no entry seen
	} {
		a.Event(e)
	}
	rs := a.Results()
	v := one(t, rs, "vfs_read")
	if v.Count != 1 || v.MinNs != 4 || v.UnmatchedReturns != 1 || v.ReturnEvent != "g:vfs_read__retinsn" {
		t.Errorf("vfs_read %+v", v)
	}
	g := one(t, rs, "getname")
	if g.Count != 2 || g.MinNs != 9 || g.MaxNs != 12 || g.UnmatchedEntries != 0 || g.UnmatchedReturns != 0 {
		t.Errorf("getname %+v", g)
	}
	if len(rs) != 2 {
		t.Errorf("rows %+v", rs)
	}
}

// TestFprobePairs: an fprobe's entry and exit pair up like a kprobe and a
// kretprobe, by their definitions (the kernel's default names
// FUNC__entry/FUNC__exit) or by __probe_func == __probe_ip.
func TestFprobePairs(t *testing.T) {
	a := New(Options{Definitions: []string{
		"f:fprobes/vfs_read__entry vfs_read count=count",
		"f4:fprobes/vfs_read__exit vfs_read%return arg1=$retval",
		"t:tracepoints/sched_process_exec sched_process_exec",
		"e:eprobes/sys_enter_openat syscalls.sys_enter_openat arg1=$filename:ustring",
	}})
	for _, e := range []*trace.Event{
		entry("vfs_read__entry", 1, 10, "0x900"),
		ret("vfs_read__exit", 1, 25, "0x123"), // paired by the definitions
		entry("probe_entry", 2, 30, "0x500"),
		ret("probe_exit", 2, 34, "0x500"), // paired by address
	} {
		a.Event(e)
	}
	rs := a.Results()
	if r := one(t, rs, "vfs_read__entry"); r.Count != 1 || r.MinNs != 15 || r.ReturnEvent != "g:vfs_read__exit" {
		t.Errorf("%+v", r)
	}
	if r := one(t, rs, "probe_entry"); r.Count != 1 || r.MinNs != 4 {
		t.Errorf("%+v", r)
	}
}

// TestEntryOnlyProbeStaysBounded: an entry probe without a return probe
// (obj_get) does not keep every event; when a return does show up late,
// the calls forgotten count as entries without return.
func TestEntryOnlyProbeStaysBounded(t *testing.T) {
	a := New(Options{})
	for i := uint64(0); i < 100000; i++ {
		a.Event(entry("h", 1, i, "0x30"))
	}
	if n := len(*a.stacks[threadKey{stream{id: 1}, a.fnIDs["g:h"]}]); n > maxUnpaired {
		t.Errorf("%d open calls kept for an entry-only probe", n)
	}
	if rs := a.Results(); len(rs) != 0 {
		t.Errorf("entry-only probe reported: %+v", rs)
	}
	b := New(Options{})
	for i := uint64(0); i < 5000; i++ {
		b.Event(entry("f", 1, i, "0x10"))
	}
	b.Event(ret("f__return", 1, 6000, "0x10"))
	if f := one(t, b.Results(), "f"); f.Count != 1 || f.UnmatchedEntries != 4999 || f.MinNs != 1001 {
		t.Errorf("f %+v", f)
	}
}

// TestMerge: the total of two analyzers is the analysis of both streams'
// calls: counts, extremes, percentiles and histograms add up, and the
// uncertain mark and unplaced returns carry over.
func TestMerge(t *testing.T) {
	durs := [][]uint64{{10, 20, 30}, {1000, 5, 40000}}
	var all []uint64
	total := New(Options{})
	for i, ds := range durs {
		a := New(Options{})
		ts := uint64(1)
		for _, d := range ds {
			a.Event(entry("f", 1, ts, "0x10"))
			a.Event(ret("f__return", 1, ts+d, "0x10"))
			ts += d + 1
			all = append(all, d)
		}
		if i == 1 {
			a.Event(entry("f", 1, ts, "0x10"))
			a.Event(&trace.Event{Kind: trace.Lost, TS: ts + 1, Count: 1})
			a.Event(ret("k__return", 2, ts+2, "0x99"))
		}
		a.Results() // a per-file report first: merging after it changes nothing
		total.Merge(a)
	}
	one := New(Options{})
	ts := uint64(1)
	for _, d := range all {
		one.Event(entry("f", 1, ts, "0x10"))
		one.Event(ret("f__return", 1, ts+d, "0x10"))
		ts += d + 1
	}
	want := one.Results()[0]
	rs := total.Results()
	got := rs[0]
	if got.Function != "f" || got.Count != want.Count || got.MinNs != want.MinNs || got.MaxNs != want.MaxNs || got.MeanNs != want.MeanNs ||
		got.P50Ns != want.P50Ns || got.P99Ns != want.P99Ns || len(got.Histogram) != len(want.Histogram) {
		t.Errorf("total %+v\nwant  %+v", got, want)
	}
	if got.UnmatchedEntries != 1 || !got.Uncertain {
		t.Errorf("open call at the loss: %+v", got)
	}
	if len(rs) != 2 || rs[1].Function != "k" || rs[1].UnmatchedReturns != 1 {
		t.Errorf("unplaced return: %+v", rs)
	}
}

// TestUserEvents: an application's user events pair by name, NAME_begin
// with NAME_end and NAME with NAME__return; other systems' events without
// __probe_ip are not calls.
func TestUserEvents(t *testing.T) {
	ue := func(sys, name string, pid int, ts uint64) *trace.Event {
		return &trace.Event{System: sys, Name: name, PID: pid, TS: ts, Comm: "app", Fields: []trace.KV{{Key: "id", Val: "1"}}}
	}
	a := New(Options{})
	for _, e := range []*trace.Event{
		ue("user_events", "request_begin", 1, 100),
		ue("user_events", "request_begin", 2, 110),
		ue("user_events", "request_end", 1, 150),
		ue("user_events", "request_end", 2, 190),
		ue("user_events_multi", "flush.1f", 1, 200),
		ue("user_events_multi", "flush.1f__return", 1, 207),
		ue("sched", "wakeup_begin", 1, 300), // not a user event
		ue("sched", "wakeup_end", 1, 310),
	} {
		a.Event(e)
	}
	rs := a.Results()
	if len(rs) != 2 {
		t.Fatalf("%+v", rs)
	}
	r := one(t, rs, "request")
	if r.Count != 2 || r.MinNs != 50 || r.MaxNs != 80 || r.EntryEvent != "user_events:request_begin" || r.ReturnEvent != "user_events:request_end" {
		t.Errorf("request %+v", r)
	}
	f := one(t, rs, "flush.1f")
	if f.Count != 1 || f.MinNs != 7 {
		t.Errorf("flush %+v", f)
	}
}

// TestSDTPairs: SDT markers that open and close an operation pair up in
// their sdt_ group (all are plain probes: each has __probe_ip); outside an
// SDT group the names mean nothing.
func TestSDTPairs(t *testing.T) {
	marker := func(group, name string, ts uint64) *trace.Event {
		return &trace.Event{System: group, Name: name, PID: 1, TS: ts, Comm: "python3.11", Fields: []trace.KV{{Key: "__probe_ip", Val: "0x4287f3"}}}
	}
	a := New(Options{})
	for _, e := range []*trace.Event{
		marker("sdt_python", "gc__start", 100),
		marker("sdt_python", "gc__done", 130),
		marker("sdt_python", "function__entry", 200),
		marker("sdt_python", "function__entry", 210),
		marker("sdt_python", "function__return", 215),
		marker("sdt_python", "function__return", 260),
		marker("sdt_hotspot", "method__compile__begin", 300),
		marker("sdt_hotspot", "method__compile__end", 390),
		marker("probe_x", "a__start", 400),
		marker("probe_x", "a__done", 410),
	} {
		a.Event(e)
	}
	rs := a.Results()
	if r := one(t, rs, "gc__start"); r.Count != 1 || r.MinNs != 30 || r.ReturnEvent != "sdt_python:gc__done" {
		t.Errorf("%+v", r)
	}
	if r := one(t, rs, "function__entry"); r.Count != 2 || r.MinNs != 5 || r.MaxNs != 60 {
		t.Errorf("%+v", r)
	}
	if r := one(t, rs, "method__compile__begin"); r.Count != 1 || r.MinNs != 90 {
		t.Errorf("%+v", r)
	}
	for _, r := range rs {
		if r.Function == "a__start" {
			t.Errorf("paired outside an SDT group: %+v", r)
		}
	}
}

// goEvent is an event of a Go function's probes: its goroutine, and with
// sp and hi (hi-sp being its depth) the stack pointer and stack top.
func goEvent(e *trace.Event, goid, sp, hi uint64) *trace.Event {
	e.Fields = append(e.Fields, trace.KV{Key: "goid", Val: fmt.Sprint(goid)})
	if hi != 0 {
		e.Fields = append(e.Fields, trace.KV{Key: "go_sp", Val: fmt.Sprintf("0x%x", sp)}, trace.KV{Key: "go_hi", Val: fmt.Sprintf("0x%x", hi)})
	}
	return e
}

// Go calls pair by goroutine, not thread; with their depth, a return pairs
// with the call at its own depth after the runtime moved the stack, and
// calls a panic or runtime.Goexit unwound count as entries without return.
func TestGoroutinePairing(t *testing.T) {
	// gentry and gret are the entry and return-instruction events of
	// main.f on thread pid, goroutine g, at depth d on a stack whose top
	// is hi.
	gentry := func(pid int, ts, g, d, hi uint64) *trace.Event {
		return goEvent(entry("main_f", pid, ts, "0x10"), g, hi-d, hi)
	}
	gret := func(pid int, ts, g, d, hi uint64) *trace.Event {
		e := &trace.Event{System: "g", Name: "main_f__retinsn", PID: pid, TS: ts, Comm: "c", Fields: []trace.KV{{Key: "__probe_ip", Val: "0x40"}}}
		return goEvent(e, g, hi-d, hi)
	}
	const hi1, hi2 = 0xc000100000, 0xc000900000 // the stack before and after it moved
	var calls []Call
	a := New(Options{})
	a.OnCall = func(c Call) { calls = append(calls, c) }
	for _, e := range []*trace.Event{
		// goroutine 7: f recurses three deep, its stack moves, the returns
		// come on another thread.
		gentry(1, 100, 7, 0x100, hi1),
		gentry(1, 110, 7, 0x200, hi1),
		gentry(1, 120, 7, 0x300, hi2),
		gret(2, 130, 7, 0x300, hi2), // 10
		gret(2, 150, 7, 0x200, hi2), // 40
		gret(3, 200, 7, 0x100, hi2), // 100
		// goroutine 8 on thread 1 meanwhile: f at 0x100 calls f at 0x200,
		// which panics; a recover at 0x100's level, and f returns from 0x100.
		gentry(1, 300, 8, 0x100, hi1),
		gentry(1, 310, 8, 0x200, hi1), // unwound by the panic
		gret(1, 340, 8, 0x100, hi1),   // 40, not 30
		// goroutine 9: a call unwound, then a new call at the same depth.
		gentry(2, 400, 9, 0x180, hi1),
		gentry(2, 500, 9, 0x180, hi1),
		gret(2, 505, 9, 0x180, hi1), // 5
		// a return at a depth where no call is open
		gret(2, 600, 9, 0x80, hi1),
		// goroutine 10 ends in runtime.Goexit inside f
		gentry(3, 700, 10, 0x100, hi1),
	} {
		a.Event(e)
	}
	f := one(t, a.Results(), "main_f")
	if f.Count != 5 || f.MinNs != 5 || f.MaxNs != 100 || f.UnmatchedEntries != 3 || f.UnmatchedReturns != 1 {
		t.Errorf("main_f %+v", f)
	}
	var durs []uint64
	for _, c := range calls {
		durs = append(durs, c.End-c.Start)
		if c.Goroutine == 0 {
			t.Errorf("call %+v without its goroutine", c)
		}
	}
	if fmt.Sprint(durs) != "[10 40 100 40 5]" {
		t.Errorf("durations %v", durs)
	}
	if calls[2].PID != 3 || calls[2].Goroutine != 7 || calls[2].Open != 0 {
		t.Errorf("the outer call of goroutine 7: %+v", calls[2])
	}

	// With the goroutine only (no depth), calls pair by goroutine, last
	// in first out, across threads.
	b := New(Options{})
	for _, e := range []*trace.Event{
		goEvent(entry("main_f", 1, 100, "0x10"), 7, 0, 0),
		goEvent(entry("main_f", 1, 105, "0x10"), 8, 0, 0),
		goEvent(ret("main_f__return", 2, 130, "0x10"), 7, 0, 0),
		goEvent(ret("main_f__return", 1, 160, "0x10"), 8, 0, 0),
	} {
		b.Event(e)
	}
	g := one(t, b.Results(), "main_f")
	if g.Count != 2 || g.MinNs != 30 || g.MaxNs != 55 || g.UnmatchedEntries != 0 || g.UnmatchedReturns != 0 {
		t.Errorf("by goroutine only: %+v", g)
	}
}
