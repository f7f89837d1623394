package analyze

import (
	"container/heap"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/gprobe/gprobe/analyze/ftracetext"
	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/internal/tracefmt"
	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
	"github.com/gprobe/gprobe/internal/tracefmt/ringbuf"
)

// batchPages is how many pages the reading goroutine of a compressed
// stream inflates and hands over at once, pageDepth how many such batches
// wait: handing one over (waking a goroutine) is rare.
const (
	batchPages = 16
	pageDepth  = 2
)

// datSource merges every CPU stream of every buffer by timestamp. The
// records are decoded where they are consumed, a page at a time: handing
// decoded records from another goroutine cost more than decoding them
// (their memory moves between the processors' caches, and on a virtual
// machine each wakeup is expensive). Compressed streams are inflated by a
// goroutine each, ahead of the merge, which is worth its hand-overs.
type datSource struct {
	f     *tracefmt.File
	tgids *tracefmt.PIDTable // thread to process, from gprobe record's metadata
	info  trace.Info
}

func newDatSource(f *tracefmt.File) *datSource {
	s := &datSource{f: f}
	comp := f.Compression
	if comp == "" {
		comp = "none"
	}
	s.info.Format = fmt.Sprintf("trace.dat v%d (%s)", f.Version, comp)
	s.info.Truncated = f.Truncated
	s.info.Kallsyms = f.Kallsyms
	s.info.StatsOverrun, s.info.StatsDropped = statsLost(f.CPUStats)
	s.info.LossCounted = len(f.CPUStats) > 0
	if m := f.Gprobe; m != nil {
		s.info.Probes = m.Probes
		s.tgids = m.TGIDs()
		// gprobe record counts from the start of the recording, not of
		// the instance, and knows the probes' misses.
		s.info.StatsOverrun, s.info.StatsDropped = int64(m.Lost.Overrun), int64(m.Lost.Dropped)
		s.info.ProbeMissed = int64(m.Lost.ProbeMissed)
		s.info.LossCounted = true
	}
	s.info.StatsLost = s.info.StatsOverrun + s.info.StatsDropped
	if u := strings.Fields(f.Uname); len(u) > 1 {
		s.info.Host = u[1]
	}
	return s
}

func (s *datSource) Info() trace.Info { return s.info }

// rec is the compact form a CPU decoder hands over, 32 bytes: writing the
// records was a third of the decoder's time when they were twice that.
// The merge loop turns it into the trace.Event the consumer sees; the
// stream knows the CPU, and an event without a format has its id in its
// first bytes.
type rec struct {
	ts   uint64
	data unsafe.Pointer // the record's bytes; nil for a loss marker
	f    *eventfmt.Format
	n    uint32 // bytes at data; a loss marker's count, low half
	pid  int32  // a loss marker's count, high half
}

// lostRec is a marker of count lost events (-1: an unknown number).
func lostRec(ts uint64, count int64) rec {
	return rec{ts: ts, n: uint32(count), pid: int32(count >> 32)}
}

func (r *rec) lostCount() int64 { return int64(r.pid)<<32 | int64(r.n) }

// stream is one CPU's records: the decoded records of its current page.
type stream struct {
	cur   []rec
	i     int
	done  bool
	order int // tie-break for equal timestamps: deterministic output
	cpu   int

	pages     pageSource
	dec       ringbuf.Decoder
	formats   map[int]*eventfmt.Format
	lastID    uint64
	lastFmt   *eventfmt.Format
	pidField  *eventfmt.Field
	pidKnown  bool
	lastTS    uint64
	truncated bool
	err       error
}

// pageSource gives a stream's pages in order: io.EOF at the end.
type pageSource interface {
	next() ([]byte, error)
	// truncated reports whether the data ended early (after io.EOF).
	truncated() bool
	close()
}

// syncPages reads an uncompressed stream's pages when they are needed.
type syncPages struct{ p *tracefmt.Pages }

func (s syncPages) next() ([]byte, error) { return s.p.Next() }
func (s syncPages) truncated() bool       { return s.p.Truncated }
func (s syncPages) close()                {}

// aheadPages inflates a compressed stream's pages in a goroutine, batches
// of them ahead of the merge.
type aheadPages struct {
	p       *tracefmt.Pages
	ch      chan [][]byte
	quit    chan struct{}
	done    sync.WaitGroup
	err     error // the reading goroutine's, final once ch is closed
	pending [][]byte
	closed  bool
}

func newAheadPages(f *tracefmt.File, p *tracefmt.Pages) *aheadPages {
	a := &aheadPages{p: p, ch: make(chan [][]byte, pageDepth), quit: make(chan struct{})}
	a.done.Add(1)
	go func() {
		defer a.done.Done()
		defer close(a.ch)
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer f.Recover(&a.err)
		for {
			b := make([][]byte, 0, batchPages)
			for len(b) < batchPages {
				pg, err := p.Next()
				if err != nil {
					if err != io.EOF {
						a.err = err
					}
					break
				}
				b = append(b, pg)
			}
			if len(b) > 0 {
				select {
				case a.ch <- b:
				case <-a.quit:
					return
				}
			}
			if len(b) < batchPages {
				return
			}
		}
	}()
	return a
}

func (a *aheadPages) next() ([]byte, error) {
	for len(a.pending) == 0 {
		b, ok := <-a.ch
		if !ok {
			if a.err != nil {
				return nil, a.err
			}
			return nil, io.EOF
		}
		a.pending = b
	}
	pg := a.pending[0]
	a.pending = a.pending[1:]
	return pg, nil
}

func (a *aheadPages) truncated() bool { return a.p.Truncated || a.err != nil }

// close stops the reading goroutine and waits for it, so that the page
// iterator is not used after the run.
func (a *aheadPages) close() {
	if !a.closed {
		a.closed = true
		close(a.quit)
	}
	a.done.Wait()
}

// fill decodes the stream's next page into cur; false at the end of the
// stream (err and truncated set).
func (st *stream) fill(f *tracefmt.File) bool {
	order := f.Order
	for !st.done {
		pg, err := st.pages.next()
		if err != nil {
			st.done = true
			if err != io.EOF {
				st.err, st.truncated = err, true
			} else {
				st.truncated = st.pages.truncated()
			}
			return false
		}
		st.cur, st.i = st.cur[:0], 0
		p, derr := st.dec.Decode(pg, func(r ringbuf.Record) {
			if len(r.Data) < 8 {
				return
			}
			id := uint64(order.Uint16(r.Data))
			ef := st.lastFmt
			if id != st.lastID {
				var ok bool
				ef, ok = st.formats[int(id)]
				if !ok {
					ef, _ = f.Format(int(id))
					st.formats[int(id)] = ef
					if ef != nil && !st.pidKnown {
						if pf := ef.Field("common_pid"); pf != nil {
							st.pidField, st.pidKnown = pf, true
						}
					}
				}
				st.lastID, st.lastFmt = id, ef
			}
			pid, _ := st.pidField.Uint(r.Data, order)
			st.lastTS = r.TS
			st.cur = append(st.cur, rec{ts: r.TS, data: unsafe.Pointer(unsafe.SliceData(r.Data)), f: ef, n: uint32(len(r.Data)), pid: int32(pid)})
		})
		if p.Missed != 0 {
			// Lost events sit between the previous page and this one; the
			// marker goes before this page's first event.
			mark := lostRec(max(p.TS, st.lastTS), p.Missed)
			st.cur = append(st.cur, rec{})
			copy(st.cur[1:], st.cur)
			st.cur[0] = mark
		}
		if derr != nil {
			// A damaged page ends the stream, after what it held.
			st.done, st.truncated = true, true
		}
		if len(st.cur) > 0 {
			return true
		}
	}
	return false
}

func (s *datSource) Run(fn func(*trace.Event) error) (err error) {
	// The events' bytes may alias a mapped file (tracefmt.Mapping).
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.f.Recover(&err)
	var streams []*stream
	var texts [][]byte
	defer func() {
		for _, st := range streams {
			st.pages.close()
		}
	}()
	for bi := range s.f.Buffers {
		b := &s.f.Buffers[bi]
		if b.Latency {
			texts = append(texts, b.Text)
			continue
		}
		for ci := range b.CPUs {
			pages := s.f.Pages(b, ci)
			st := &stream{order: len(streams), cpu: b.CPUs[ci].CPU, dec: ringbuf.NewDecoder(s.f.PageLayout, s.f.Order),
				formats: map[int]*eventfmt.Format{}, lastID: ^uint64(0),
				pidField: &eventfmt.Field{Offset: 4, Size: 4, Signed: true}}
			// Records alias their page until the merge loop is done with
			// them: the page being merged, and for a compressed stream
			// the batches inflated ahead. A run of events may span the
			// pages of one read.
			if b.Compressed {
				pages.Keep = batchPages * (pageDepth + 3)
				st.pages = newAheadPages(s.f, pages)
			} else {
				pages.Keep = 2 * tracefmt.PagesPerRead
				st.pages = syncPages{pages}
			}
			streams = append(streams, st)
		}
	}
	h := &mergeHeap{}
	advance := func(st *stream) bool {
		st.i++
		return st.i < len(st.cur) || st.fill(s.f)
	}
	for _, st := range streams {
		if st.fill(s.f) {
			heap.Push(h, st)
		}
	}
	var ev trace.Event
	lastPID, lastComm, lastTGID := -1, "", 0
	for h.Len() > 0 {
		st := (*h)[0]
		// The earliest head among the other streams bounds the run this
		// one delivers without touching the heap: CPUs hand over in runs.
		var other *stream
		if h.Len() > 1 {
			other = (*h)[1]
			if h.Len() > 2 && h.Less(2, 1) {
				other = (*h)[2]
			}
		}
		for {
			r := &st.cur[st.i]
			if r.data == nil {
				ev = trace.Event{TS: r.ts, CPU: st.cpu, Kind: trace.Lost, Count: r.lostCount()}
				if ev.Count < 0 {
					s.info.LostUnknown++
				} else {
					s.info.Lost += ev.Count
				}
			} else {
				s.info.Events++
				// Set field by field: the event is 168 bytes, rebuilding it
				// whole cost a tenth of the merge.
				ev.Kind, ev.TS, ev.CPU, ev.PID, ev.Count = trace.Data, r.ts, st.cpu, int(r.pid), 0
				ev.Data, ev.Order, ev.Format = unsafe.Slice((*byte)(r.data), r.n), s.f.Order, r.f
				if r.f != nil {
					ev.System, ev.Name = r.f.System, r.f.Name
				} else {
					ev.System, ev.Name = "", fmt.Sprintf("event_%d", s.f.Order.Uint16(ev.Data))
				}
				if ev.PID != lastPID {
					lastComm, _ = s.f.Cmdlines.Lookup(ev.PID)
					lastPID, lastTGID = ev.PID, s.tgids.Int(ev.PID)
				}
				ev.Comm, ev.TGID = lastComm, lastTGID
			}
			if err := fn(&ev); err != nil {
				return err
			}
			if !advance(st) {
				heap.Pop(h)
				break
			}
			if other != nil && before(other, st) {
				heap.Fix(h, 0)
				break
			}
		}
	}
	for _, t := range texts {
		tr := ftracetext.NewReader(bytesReader(t))
		if err := tr.Run(fn); err != nil {
			return err
		}
		ti := tr.Info()
		s.info.Events += ti.Events
		s.info.Lost += ti.Lost
		s.info.LostUnknown += ti.LostUnknown
		s.info.TextTimestamps = true
		s.info.Truncated = s.info.Truncated || ti.Truncated
	}
	var firstErr error
	for _, st := range streams {
		st.pages.close()
		s.info.Truncated = s.info.Truncated || st.truncated
		if st.err != nil && firstErr == nil {
			firstErr = st.err
		}
	}
	return firstErr
}

type mergeHeap []*stream

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return before(h[i], h[j]) }

// before orders streams by their next record: timestamp, then stream
// order (deterministic output for equal timestamps).
func before(x, y *stream) bool {
	a, b := &x.cur[x.i], &y.cur[y.i]
	if a.ts != b.ts {
		return a.ts < b.ts
	}
	return x.order < y.order
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*stream)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// statsLost sums the "overrun" and "dropped events" counters of the
// per-CPU stats trace-cmd stores (CPUSTAT options).
func statsLost(stats []string) (overrun, dropped int64) {
	for _, st := range stats {
		for _, line := range strings.Split(st, "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok || (k != "overrun" && k != "dropped events") {
				continue
			}
			if c, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && c > 0 {
				if k == "overrun" {
					overrun += c
				} else {
					dropped += c
				}
			}
		}
	}
	return overrun, dropped
}
