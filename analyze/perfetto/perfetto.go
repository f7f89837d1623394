//go:generate sh gen.sh

// Package perfetto writes matched calls in Perfetto's native protobuf
// trace format (the Trace message of google/perfetto's
// protos/perfetto/trace/trace.proto), which the Perfetto UI and
// trace_processor open: a track per process and per thread, one slice per
// call (a TrackEvent TYPE_SLICE_BEGIN and TYPE_SLICE_END pair, its depth
// as a debug annotation), and a counter track of the objects a refcount
// spec sees alive.
//
// The packets are the generated types of perfettopb (from Perfetto's own
// .proto files) streamed as Trace.packet fields, so memory does not grow
// with the trace. Calls arrive as they return, innermost first; each
// thread keeps its calls until it is back at its outermost level and then
// writes them in start order, properly nested: a track's slices must nest.
// A call that overlaps another without nesting in it (a lost return, a
// longjmp) goes to an extra track under its thread, so every call stays
// one slice with its exact duration.
package perfetto

import (
	"bufio"
	"cmp"
	"io"
	"slices"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/perfetto/perfettopb"
	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/analyze/trace"
)

// maxPending bounds the calls a thread keeps waiting for its outermost
// call to return; past it they are written (a thread whose outermost
// return is lost would otherwise keep every call).
const maxPending = 4096

// sequenceID is the one writer sequence every packet belongs to.
const sequenceID = 1

// Track uuids: a kind in the top byte, the process or thread id (and a
// lane for the extra tracks of overlapping calls) below.
const (
	uuidProcess = 1 << 56
	uuidThread  = 2 << 56
	uuidLane    = 3 << 56
	uuidCounter = 4 << 56
)

// Options select what is written besides the calls.
type Options struct {
	// Refcount, when set, adds a counter track of the objects alive
	// (referenced) over time; Source must then see the events.
	Refcount *refcount.Spec
	// RefSpec is the spec as the user wrote it, for the track's name.
	RefSpec string
}

// Writer streams a trace. Call Close to finish it.
type Writer struct {
	w       *bufio.Writer
	err     error
	buf     []byte
	mo      proto.MarshalOptions
	procs   map[int]bool
	threads map[int]*thread
	order   []int // threads in first-seen order, for a deterministic Close
	slices  int
	packets int
	live    *liveCounter
	hot     hotPacket
	counter uint64 // the counter track's uuid once described
	opts    Options
}

type thread struct {
	tid, pid int
	comm     string
	pending  []pendingCall
	lanes    []*lane
	arrivals int
}

// pendingCall is a call waiting for its thread's outermost call; arrival
// is its return order (an inner call returns before the call it nests in).
type pendingCall struct {
	latency.Call
	arrival int
}

// lane is one track of a thread: the calls open on it, outermost first.
type lane struct {
	uuid uint64
	open []pendingCall
}

// New starts a trace on w.
func New(w io.Writer, opts Options) *Writer {
	t := &Writer{w: bufio.NewWriterSize(w, 1<<16), procs: map[int]bool{}, threads: map[int]*thread{}, opts: opts}
	if opts.Refcount != nil {
		t.live = newLiveCounter(*opts.Refcount)
	}
	return t
}

// Source returns src with every event also counted for the live-objects
// counter; without Options.Refcount it returns src.
func (t *Writer) Source(src trace.Source) trace.Source {
	if t.live == nil {
		return src
	}
	return &tap{Source: src, fn: t.event}
}

type tap struct {
	trace.Source
	fn func(*trace.Event)
}

func (s *tap) Run(fn func(*trace.Event) error) error {
	return s.Source.Run(func(e *trace.Event) error {
		s.fn(e)
		return fn(e)
	})
}

func (t *Writer) event(e *trace.Event) {
	n, changed := t.live.event(e)
	if !changed {
		return
	}
	if t.counter == 0 {
		t.counter = uuidCounter
		name := "live objects"
		if t.opts.RefSpec != "" {
			name += " (" + t.opts.RefSpec + ")"
		}
		unit := perfettopb.CounterDescriptor_UNIT_COUNT
		t.packet(&perfettopb.TracePacket{Data: &perfettopb.TracePacket_TrackDescriptor{TrackDescriptor: &perfettopb.TrackDescriptor{
			Uuid:                proto.Uint64(t.counter),
			StaticOrDynamicName: &perfettopb.TrackDescriptor_Name{Name: name},
			Counter:             &perfettopb.CounterDescriptor{Unit: &unit},
		}}})
	}
	h := t.trackEvent(e.TS, perfettopb.TrackEvent_TYPE_COUNTER, t.counter)
	h.counter.CounterValue = n
	h.ev.CounterValueField = &h.counter
	t.packet(&h.pkt)
}

// Call adds one matched call; a thread's calls must come in return order,
// as latency.Analyzer reports them.
func (t *Writer) Call(c latency.Call) {
	if c.End < c.Start {
		// Entry and return came from CPUs whose clocks disagree.
		c.End = c.Start
	}
	th := t.threads[c.PID]
	if th == nil {
		pid := c.TGID
		if pid == 0 {
			pid = c.PID
		}
		th = &thread{tid: c.PID, pid: pid, comm: c.Comm}
		t.threads[c.PID] = th
		t.order = append(t.order, c.PID)
		t.describe(th)
	}
	th.pending = append(th.pending, pendingCall{c, th.arrivals})
	th.arrivals++
	if c.Open == 0 || len(th.pending) >= maxPending {
		t.flush(th)
	}
}

// describe writes the process's and the thread's track descriptors.
func (t *Writer) describe(th *thread) {
	if !t.procs[th.pid] {
		t.procs[th.pid] = true
		p := &perfettopb.ProcessDescriptor{Pid: proto.Int32(int32(th.pid))}
		if th.pid == th.tid && th.comm != "" {
			p.ProcessName = proto.String(th.comm)
		}
		t.packet(&perfettopb.TracePacket{Data: &perfettopb.TracePacket_TrackDescriptor{TrackDescriptor: &perfettopb.TrackDescriptor{
			Uuid: proto.Uint64(uuidProcess | uint64(uint32(th.pid))), Process: p,
		}}})
	}
	td := &perfettopb.ThreadDescriptor{Pid: proto.Int32(int32(th.pid)), Tid: proto.Int64(int64(th.tid))}
	if th.comm != "" {
		td.ThreadName = proto.String(th.comm)
	}
	uuid := uuidThread | uint64(uint32(th.tid))
	t.packet(&perfettopb.TracePacket{Data: &perfettopb.TracePacket_TrackDescriptor{TrackDescriptor: &perfettopb.TrackDescriptor{
		Uuid: proto.Uint64(uuid), ParentUuid: proto.Uint64(uuidProcess | uint64(uint32(th.pid))), Thread: td,
	}}})
	th.lanes = []*lane{{uuid: uuid}}
}

// contains reports whether c nests in outer: inside its interval, and
// returned before it (for calls with equal bounds).
func contains(outer, c pendingCall) bool {
	return outer.Start <= c.Start && c.End <= outer.End && c.arrival < outer.arrival
}

// flush writes a thread's pending calls in start order (outer calls
// first), each on the first of the thread's tracks where it nests.
func (t *Writer) flush(th *thread) {
	slices.SortFunc(th.pending, func(a, b pendingCall) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return cmp.Compare(b.arrival, a.arrival)
	})
	for _, c := range th.pending {
		// Calls that ended by now end on every track.
		for _, l := range th.lanes {
			for n := len(l.open); n > 0 && l.open[n-1].End <= c.Start && !contains(l.open[n-1], c); n = len(l.open) {
				t.end(l, l.open[n-1])
			}
		}
		placed := false
		for _, l := range th.lanes {
			if n := len(l.open); n == 0 || contains(l.open[n-1], c) {
				t.begin(l, c)
				placed = true
				break
			}
		}
		if !placed {
			l := t.newLane(th)
			t.begin(l, c)
		}
	}
	for _, l := range th.lanes {
		for n := len(l.open); n > 0; n = len(l.open) {
			t.end(l, l.open[n-1])
		}
	}
	clear(th.pending)
	th.pending = th.pending[:0]
	th.arrivals = 0
}

// newLane adds a track under the thread's for calls that overlap the
// thread's without nesting.
func (t *Writer) newLane(th *thread) *lane {
	l := &lane{uuid: uuidLane | uint64(len(th.lanes))<<32 | uint64(uint32(th.tid))}
	th.lanes = append(th.lanes, l)
	t.packet(&perfettopb.TracePacket{Data: &perfettopb.TracePacket_TrackDescriptor{TrackDescriptor: &perfettopb.TrackDescriptor{
		Uuid:                proto.Uint64(l.uuid),
		ParentUuid:          proto.Uint64(th.lanes[0].uuid),
		StaticOrDynamicName: &perfettopb.TrackDescriptor_Name{Name: "overlapping calls " + strconv.Itoa(len(th.lanes)-1)},
	}}})
	return l
}

func (t *Writer) begin(l *lane, c pendingCall) {
	l.open = append(l.open, c)
	t.slices++
	h := t.trackEvent(c.Start, perfettopb.TrackEvent_TYPE_SLICE_BEGIN, l.uuid)
	h.ev.Categories = categories
	h.name.Name = c.Function
	h.ev.NameField = &h.name
	h.depth.NameField = &depthName
	h.depthValue.IntValue = int64(c.Depth)
	h.depth.Value = &h.depthValue
	h.ev.DebugAnnotations = h.annotations[:]
	t.packet(&h.pkt)
}

func (t *Writer) end(l *lane, c pendingCall) {
	l.open = l.open[:len(l.open)-1]
	t.packet(&t.trackEvent(c.End, perfettopb.TrackEvent_TYPE_SLICE_END, l.uuid).pkt)
}

var (
	categories = []string{"gprobe"}
	depthName  = perfettopb.DebugAnnotation_Name{Name: "depth"}
)

// hotPacket is the track-event packet of slices and counter values, one
// per call or change: its messages are reused, each packet being written
// before the next is built.
type hotPacket struct {
	pkt         perfettopb.TracePacket
	data        perfettopb.TracePacket_TrackEvent
	ev          perfettopb.TrackEvent
	ts, uuid    uint64
	typ         perfettopb.TrackEvent_Type
	name        perfettopb.TrackEvent_Name
	depth       perfettopb.DebugAnnotation
	depthValue  perfettopb.DebugAnnotation_IntValue
	annotations [1]*perfettopb.DebugAnnotation
	counter     perfettopb.TrackEvent_CounterValue
}

// trackEvent readies the hot packet as a bare event of type typ on track
// uuid at ts.
func (t *Writer) trackEvent(ts uint64, typ perfettopb.TrackEvent_Type, uuid uint64) *hotPacket {
	h := &t.hot
	h.ts, h.typ, h.uuid = ts, typ, uuid
	h.annotations[0] = &h.depth
	h.ev.Type, h.ev.TrackUuid = &h.typ, &h.uuid
	h.ev.Categories, h.ev.NameField, h.ev.DebugAnnotations, h.ev.CounterValueField = nil, nil, nil, nil
	h.data.TrackEvent = &h.ev
	h.pkt.Timestamp, h.pkt.Data, h.pkt.SequenceFlags = &h.ts, &h.data, nil
	return h
}

var sequence = perfettopb.TracePacket_TrustedPacketSequenceId{TrustedPacketSequenceId: sequenceID}

// packet writes p as one Trace.packet field.
func (t *Writer) packet(p *perfettopb.TracePacket) {
	if t.err != nil {
		return
	}
	p.OptionalTrustedPacketSequenceId = &sequence
	if t.packets == 0 {
		// A sequence starts with its (empty) incremental state valid.
		p.SequenceFlags = proto.Uint32(uint32(perfettopb.TracePacket_SEQ_INCREMENTAL_STATE_CLEARED))
	}
	t.packets++
	b, err := t.mo.MarshalAppend(t.buf[:0], p)
	if err != nil {
		t.err = err
		return
	}
	t.buf = b
	var hdr [16]byte
	h := protowire.AppendTag(hdr[:0], 1, protowire.BytesType)
	h = protowire.AppendVarint(h, uint64(len(b)))
	t.w.Write(h)
	_, t.err = t.w.Write(b)
}

// Close writes the calls still pending and flushes the trace.
func (t *Writer) Close() error {
	for _, tid := range t.order {
		t.flush(t.threads[tid])
	}
	if t.err != nil {
		return t.err
	}
	return t.w.Flush()
}

// Slices is the number of slices written (one per call).
func (t *Writer) Slices() int { return t.slices }
