package perfetto_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/internal/golden"
	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/perfetto"
	"github.com/gprobe/gprobe/analyze/perfetto/perfettopb"
	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/analyze/report"
	"github.com/gprobe/gprobe/analyze/timeline"
)

// The golden recordings of analyze's tests (refprog through real uprobes:
// 60 calls of work, 10 objects of which 3 leak), in every format.
// slice is a slice as trace_processor builds it from a track's
// begin/end events.
type slice struct {
	track      uint64
	name       string
	start, end uint64
	depth      int64
}

// loaded is what a Perfetto trace holds, read the way trace_processor
// reads it: packets decoded against Perfetto's schema, track events sorted
// by timestamp (ties in file order, as its sorter does), slices built per
// track from a stack of open slices.
type loaded struct {
	slices   []slice
	counters []int64 // live-object values in time order
	threads  map[uint64]*perfettopb.ThreadDescriptor
	lanes    int // tracks of overlapping calls
}

func load(t *testing.T, data []byte) *loaded {
	t.Helper()
	var tr perfettopb.Trace
	if err := proto.Unmarshal(data, &tr); err != nil {
		t.Fatalf("not a perfetto.protos.Trace: %v", err)
	}
	l := &loaded{threads: map[uint64]*perfettopb.ThreadDescriptor{}}
	tracks := map[uint64]*perfettopb.TrackDescriptor{}
	type ev struct {
		ts  uint64
		i   int
		tev *perfettopb.TrackEvent
	}
	var evs []ev
	for i, p := range tr.GetPacket() {
		noUnknown(t, p.ProtoReflect())
		if p.GetTrustedPacketSequenceId() == 0 {
			t.Fatalf("packet %d has no sequence id", i)
		}
		if i == 0 && p.GetSequenceFlags()&uint32(perfettopb.TracePacket_SEQ_INCREMENTAL_STATE_CLEARED) == 0 {
			t.Errorf("first packet does not clear the incremental state")
		}
		switch {
		case p.GetTrackDescriptor() != nil:
			td := p.GetTrackDescriptor()
			if tracks[td.GetUuid()] != nil {
				t.Errorf("track %x described twice", td.GetUuid())
			}
			if td.GetParentUuid() != 0 && tracks[td.GetParentUuid()] == nil {
				t.Errorf("track %x: parent %x not described before", td.GetUuid(), td.GetParentUuid())
			}
			tracks[td.GetUuid()] = td
			if th := td.GetThread(); th != nil {
				if th.Pid == nil || th.Tid == nil {
					t.Errorf("thread track without pid/tid: %v", td)
				}
				l.threads[td.GetUuid()] = th
			}
			if td.GetName() != "" && td.GetCounter() == nil {
				l.lanes++
			}
		case p.GetTrackEvent() != nil:
			if p.Timestamp == nil {
				t.Fatalf("packet %d: track event without timestamp", i)
			}
			if tracks[p.GetTrackEvent().GetTrackUuid()] == nil {
				t.Fatalf("packet %d: track %x not described before", i, p.GetTrackEvent().GetTrackUuid())
			}
			evs = append(evs, ev{p.GetTimestamp(), i, p.GetTrackEvent()})
		default:
			t.Fatalf("packet %d holds neither a track event nor a descriptor", i)
		}
	}
	slices.SortStableFunc(evs, func(a, b ev) int {
		switch {
		case a.ts < b.ts:
			return -1
		case a.ts > b.ts:
			return 1
		}
		return 0
	})
	open := map[uint64][]slice{}
	for _, e := range evs {
		u := e.tev.GetTrackUuid()
		switch e.tev.GetType() {
		case perfettopb.TrackEvent_TYPE_SLICE_BEGIN:
			var depth int64 = -1
			for _, a := range e.tev.GetDebugAnnotations() {
				if a.GetName() == "depth" {
					depth = a.GetIntValue()
				}
			}
			open[u] = append(open[u], slice{track: u, name: e.tev.GetName(), start: e.ts, depth: depth})
		case perfettopb.TrackEvent_TYPE_SLICE_END:
			st := open[u]
			if len(st) == 0 {
				t.Fatalf("packet %d: slice end on track %x with no slice open", e.i, u)
			}
			s := st[len(st)-1]
			open[u] = st[:len(st)-1]
			s.end = e.ts
			l.slices = append(l.slices, s)
		case perfettopb.TrackEvent_TYPE_COUNTER:
			if tracks[u].GetCounter() == nil {
				t.Fatalf("packet %d: counter value on track %x, which is no counter track", e.i, u)
			}
			l.counters = append(l.counters, e.tev.GetCounterValue())
		default:
			t.Fatalf("packet %d: track event type %v", e.i, e.tev.GetType())
		}
	}
	for u, st := range open {
		if len(st) > 0 {
			t.Errorf("track %x: %d slices never end", u, len(st))
		}
	}
	return l
}

// noUnknown fails on fields the schema does not name.
func noUnknown(t *testing.T, m protoreflect.Message) {
	t.Helper()
	if len(m.GetUnknown()) > 0 {
		t.Fatalf("%s has fields Perfetto's schema does not know", m.Descriptor().FullName())
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				noUnknown(t, v.List().Get(i).Message())
			}
		case fd.Message() != nil:
			noUnknown(t, v.Message())
		}
		return true
	})
}

type exported struct {
	rep      *report.Report
	perfetto []byte
	timeline []byte
}

// export analyzes path as `gprobe analyze --refcount ... --export-timeline
// --export-perfetto` does.
func export(t *testing.T, path string) exported {
	t.Helper()
	spec, err := refcount.ParseSpec(golden.RefSpec)
	if err != nil {
		t.Fatal(err)
	}
	var pb, tb bytes.Buffer
	pf := perfetto.New(&pb, perfetto.Options{Refcount: &spec, RefSpec: golden.RefSpec})
	tl := timeline.New(&tb)
	cfg := analyze.Config{Refcount: &spec, RefSpec: golden.RefSpec, Exporters: []analyze.Exporter{pf, tl}}
	var rep *report.Report
	err = analyze.File(path, cfg, func(a *analyze.Analysis) error {
		rep = a.Report()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := pf.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tl.Close(); err != nil {
		t.Fatal(err)
	}
	return exported{rep, pb.Bytes(), tb.Bytes()}
}

type jsonSlice struct {
	Name     string
	Ph       string
	Ts, Dur  float64
	Pid, Tid int
	Args     struct{ Depth int64 }
}

// TestGoldenMatchesTimeline: on every golden recording the Perfetto
// trace loads (schema, tracks, nesting) with the JSON timeline's slices:
// the same count, and the same calls (thread, name, start, duration,
// depth). The live-object counter ends at analyze's outstanding objects.
func TestGoldenMatchesTimeline(t *testing.T) {
	for _, name := range golden.Files {
		t.Run(name, func(t *testing.T) {
			x := export(t, golden.Path(t, name))
			l := load(t, x.perfetto)
			var doc struct{ TraceEvents []jsonSlice }
			if err := json.Unmarshal(x.timeline, &doc); err != nil {
				t.Fatal(err)
			}
			var want, got []string
			for _, e := range doc.TraceEvents {
				if e.Ph == "X" {
					ts, dur := int64(math.Round(e.Ts*1000)), int64(math.Round(e.Dur*1000))
					want = append(want, fmt.Sprintf("%d/%d %s %d+%d depth %d", e.Pid, e.Tid, e.Name, ts, dur, e.Args.Depth))
				}
			}
			for _, s := range l.slices {
				th := l.threads[s.track]
				if th == nil {
					t.Fatalf("slice %+v on a track that is not a thread's", s)
				}
				got = append(got, fmt.Sprintf("%d/%d %s %d+%d depth %d", th.GetPid(), th.GetTid(), s.name, s.start, s.end-s.start, s.depth))
			}
			slices.Sort(want)
			slices.Sort(got)
			if len(got) != len(want) || len(got) != int(x.rep.Latency[0].Count) {
				t.Errorf("%d Perfetto slices, %d JSON timeline slices, %d calls analyzed", len(got), len(want), x.rep.Latency[0].Count)
			}
			if !slices.Equal(got, want) {
				t.Errorf("slices differ from the timeline's:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if l.lanes != 0 {
				t.Errorf("%d tracks of overlapping calls; refprog's calls all nest", l.lanes)
			}
			if len(l.counters) == 0 || l.counters[len(l.counters)-1] != int64(x.rep.Refcount.Outstanding) || slices.Min(l.counters) < 0 ||
				slices.Max(l.counters) > int64(x.rep.Refcount.Objects) {
				t.Errorf("live objects %v: want it to end at %d outstanding, never above %d objects", l.counters, x.rep.Refcount.Outstanding, x.rep.Refcount.Objects)
			}
		})
	}
}

func call(tid int, fn string, start, end uint64, depth, open int) latency.Call {
	return latency.Call{Function: fn, PID: tid, TGID: 100, Comm: "c", Start: start, End: end, Depth: depth, Open: open}
}

// TestNesting: calls come innermost first; equal starts, zero-length
// calls and calls that overlap without nesting still give one slice each,
// with its own bounds, on tracks whose slices nest.
func TestNesting(t *testing.T) {
	calls := []latency.Call{
		// f(10..50) holds g(10..20) (same start) and a zero-length h at 20.
		call(1, "g", 10, 20, 0, 2),
		call(1, "h", 20, 20, 0, 1),
		call(1, "f", 10, 50, 0, 0),
		// Recursion with equal bounds: the inner one returned first.
		call(2, "r", 5, 5, 1, 1),
		call(2, "r", 5, 5, 0, 0),
		// a(100..200) and b(150..250) overlap: b's entry came while a was
		// open, a's return is the later one's... neither nests.
		call(1, "a", 100, 200, 0, 1),
		call(1, "b", 150, 250, 0, 0),
		// A return whose clock is behind its entry's.
		call(3, "z", 70, 60, 0, 0),
	}
	var b bytes.Buffer
	w := perfetto.New(&b, perfetto.Options{})
	for _, c := range calls {
		w.Call(c)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	l := load(t, b.Bytes())
	var got []string
	for _, s := range l.slices {
		got = append(got, fmt.Sprintf("%s %d..%d", s.name, s.start, s.end))
	}
	slices.Sort(got)
	want := []string{"a 100..200", "b 150..250", "f 10..50", "g 10..20", "h 20..20", "r 5..5", "r 5..5", "z 70..70"}
	if !slices.Equal(got, want) || w.Slices() != len(want) {
		t.Errorf("slices %q (%d written), want %q", got, w.Slices(), want)
	}
	if l.lanes != 1 {
		t.Errorf("%d tracks of overlapping calls, want 1 (b)", l.lanes)
	}
}

// TestOuterNeverReturns: a thread whose outermost call never returns
// (its return lost) is written in bounded batches, still properly nested.
func TestOuterNeverReturns(t *testing.T) {
	var b bytes.Buffer
	w := perfetto.New(&b, perfetto.Options{})
	const n = 10000
	for i := 0; i < n; i++ {
		// Each call nests a shorter one: inner returns first.
		s := uint64(i) * 100
		w.Call(call(1, "in", s+10, s+20, 0, 2))
		w.Call(call(1, "out", s, s+50, 0, 1))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	l := load(t, b.Bytes())
	if len(l.slices) != 2*n || l.lanes != 0 {
		t.Errorf("%d slices on %d extra tracks, want %d on none", len(l.slices), l.lanes, 2*n)
	}
}

// BenchmarkCalls writes nested pairs of calls (two slices per op).
func BenchmarkCalls(b *testing.B) {
	w := perfetto.New(io.Discard, perfetto.Options{})
	for i := 0; i < b.N; i++ {
		s := uint64(i) * 100
		w.Call(call(1, "in", s+10, s+20, 1, 1))
		w.Call(call(1, "out", s, s+50, 0, 0))
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}
