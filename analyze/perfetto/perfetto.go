//go:generate sh gen.sh

// Package perfetto writes matched calls in Perfetto's native protobuf
// trace format (the Trace message of google/perfetto's
// protos/perfetto/trace/trace.proto), which the Perfetto UI and
// trace_processor open: a track per process and per thread, one slice per
// call (a TrackEvent TYPE_SLICE_BEGIN and TYPE_SLICE_END pair, its depth
// as a debug annotation), and a counter track of the objects a refcount
// spec sees alive.
//
// The packets are encoded with protowire, field by field, from the field
// numbers of Perfetto's own .proto files (under protos/), and streamed as
// Trace.packet fields, so memory does not grow with the trace. The tests
// decode every trace with the types generated from those files
// (perfettopb), which the program itself does not link: their package
// initialisation would cost every start of gprobe. Calls arrive as they return, innermost first; each
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

	"github.com/gprobe/gprobe/analyze/latency"
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
	pkt     []byte // the packet being built
	msg     []byte // a nested message being built
	sub     []byte // a message nested in msg
	procs   map[int]bool
	threads map[int]*thread
	order   []int // threads in first-seen order, for a deterministic Close
	slices  int
	packets int
	live    *liveCounter
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

// Source returns the recording src (read from path) with every event also
// counted for the live-objects counter; without Options.Refcount it
// returns src. Writer is an analyze.Exporter of one recording.
func (t *Writer) Source(_ string, src trace.Source) trace.Source {
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
		d := t.trackDescriptor(t.counter)
		d = appendString(d, tdName, name)
		d = appendMessage(d, tdCounter, appendUint(nil, cdUnit, unitCount))
		t.descriptorPacket(d)
	}
	t.eventPacket(e.TS, appendInt(t.trackEvent(typeCounter, t.counter), teCounterValue, n))
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
		p := appendInt(nil, pdPID, int64(int32(th.pid)))
		if th.pid == th.tid && th.comm != "" {
			p = appendString(p, pdName, th.comm)
		}
		t.descriptorPacket(appendMessage(t.trackDescriptor(uuidProcess|uint64(uint32(th.pid))), tdProcess, p))
	}
	td := appendInt(nil, thdPID, int64(int32(th.pid)))
	td = appendInt(td, thdTID, int64(th.tid))
	if th.comm != "" {
		td = appendString(td, thdName, th.comm)
	}
	uuid := uuidThread | uint64(uint32(th.tid))
	d := t.trackDescriptor(uuid)
	d = appendMessage(d, tdThread, td)
	d = appendUint(d, tdParentUUID, uuidProcess|uint64(uint32(th.pid)))
	t.descriptorPacket(d)
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
	d := t.trackDescriptor(l.uuid)
	d = appendString(d, tdName, "overlapping calls "+strconv.Itoa(len(th.lanes)-1))
	d = appendUint(d, tdParentUUID, th.lanes[0].uuid)
	t.descriptorPacket(d)
	return l
}

func (t *Writer) begin(l *lane, c pendingCall) {
	l.open = append(l.open, c)
	t.slices++
	ev := t.trackEvent(typeSliceBegin, l.uuid)
	ev = appendString(ev, teCategories, category)
	ev = appendString(ev, teName, c.Function)
	t.sub = appendInt(appendString(t.sub[:0], daName, "depth"), daIntValue, int64(c.Depth))
	ev = appendMessage(ev, teAnnotations, t.sub)
	t.eventPacket(c.Start, ev)
}

func (t *Writer) end(l *lane, c pendingCall) {
	l.open = l.open[:len(l.open)-1]
	t.eventPacket(c.End, t.trackEvent(typeSliceEnd, l.uuid))
}

// category is every slice's category.
const category = "gprobe"

// Field numbers and values of Perfetto's trace protos (protos/perfetto/
// trace/): the messages and fields this writer emits.
const (
	traceField = 1 // Trace.packet

	// TracePacket
	pktTimestamp       = 8
	pktSequenceID      = 10 // trusted_packet_sequence_id
	pktTrackEvent      = 11
	pktSequenceFlags   = 13
	pktTrackDescriptor = 60
	seqStateCleared    = 1 // SEQ_INCREMENTAL_STATE_CLEARED

	// TrackDescriptor
	tdUUID       = 1
	tdName       = 2
	tdProcess    = 3
	tdThread     = 4
	tdParentUUID = 5
	tdCounter    = 8

	// ProcessDescriptor, ThreadDescriptor, CounterDescriptor
	pdPID     = 1
	pdName    = 6 // process_name
	thdPID    = 1
	thdTID    = 2
	thdName   = 5 // thread_name
	cdUnit    = 3
	unitCount = 2 // UNIT_COUNT

	// TrackEvent
	teAnnotations  = 4 // debug_annotations
	teType         = 9
	teTrackUUID    = 11
	teCategories   = 22
	teName         = 23
	teCounterValue = 30
	typeSliceBegin = 1
	typeSliceEnd   = 2
	typeCounter    = 4

	// DebugAnnotation
	daIntValue = 4
	daName     = 10
)

func appendUint(b []byte, num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
}

// appendInt appends an int32 or int64 field (negative values take ten
// bytes, as protobuf encodes them).
func appendInt(b []byte, num protowire.Number, v int64) []byte { return appendUint(b, num, uint64(v)) }

func appendString(b []byte, num protowire.Number, s string) []byte {
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
}

func appendMessage(b []byte, num protowire.Number, msg []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), msg)
}

// trackDescriptor starts a TrackDescriptor of track uuid in t.msg.
func (t *Writer) trackDescriptor(uuid uint64) []byte {
	return appendUint(t.msg[:0], tdUUID, uuid)
}

// trackEvent starts a TrackEvent of type typ on track uuid in t.msg.
func (t *Writer) trackEvent(typ uint64, uuid uint64) []byte {
	return appendUint(appendUint(t.msg[:0], teType, typ), teTrackUUID, uuid)
}

func (t *Writer) descriptorPacket(d []byte) {
	t.msg = d
	t.packet(appendMessage(t.pkt[:0], pktTrackDescriptor, d))
}

func (t *Writer) eventPacket(ts uint64, ev []byte) {
	t.msg = ev
	t.packet(appendMessage(appendUint(t.pkt[:0], pktTimestamp, ts), pktTrackEvent, ev))
}

// packet completes the packet p (its sequence) and writes it as one
// Trace.packet field.
func (t *Writer) packet(p []byte) {
	if t.err != nil {
		return
	}
	p = appendUint(p, pktSequenceID, sequenceID)
	if t.packets == 0 {
		// A sequence starts with its (empty) incremental state valid.
		p = appendUint(p, pktSequenceFlags, seqStateCleared)
	}
	t.pkt = p
	t.packets++
	var hdr [16]byte
	h := protowire.AppendTag(hdr[:0], traceField, protowire.BytesType)
	h = protowire.AppendVarint(h, uint64(len(p)))
	t.w.Write(h)
	_, t.err = t.w.Write(p)
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
