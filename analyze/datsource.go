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

// batchPages is how many pages a CPU decoder hands over at once; with the
// channel depth below it bounds the events held per CPU.
const (
	batchPages = 16
	chanDepth  = 2
	pageDepth  = 2 // page batches read ahead of decoding
)

// datSource decodes every CPU stream of every buffer in its own goroutine
// and merges them by timestamp.
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

type batch struct {
	recs []rec
	err  error
	last bool
}

type stream struct {
	ch    chan batch
	cur   []rec
	i     int
	done  bool
	order int // tie-break for equal timestamps: deterministic output
	cpu   int
}

// A batch of batchPages pages holds up to about 1,600 records of small
// events: handing one over (waking a goroutine) is rare, and the batches
// in flight stay within a megabyte (fresh memory costs a page fault per
// 4 KiB).
var batchPool = sync.Pool{New: func() any { return make([]rec, 0, 2048) }}

func (s *datSource) Run(fn func(*trace.Event) error) (err error) {
	// The events' bytes may alias a mapped file (tracefmt.Mapping).
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.f.Recover(&err)
	var streams []*stream
	var texts [][]byte
	stop := make(chan struct{})
	var wg sync.WaitGroup
	truncated := make([]bool, 0)
	var tmu sync.Mutex
	for bi := range s.f.Buffers {
		b := &s.f.Buffers[bi]
		if b.Latency {
			texts = append(texts, b.Text)
			continue
		}
		for ci := range b.CPUs {
			st := &stream{ch: make(chan batch, chanDepth), order: len(streams), cpu: b.CPUs[ci].CPU}
			streams = append(streams, st)
			pages := s.f.Pages(b, ci)
			// Records alias their page until the merge loop is done with
			// them: at most the page batches read ahead, the one being
			// decoded, the record batches in the channel, the one being
			// merged and the one being filled.
			pages.Keep = batchPages * (pageDepth + chanDepth + 6)
			wg.Add(1)
			go func() {
				defer wg.Done()
				t := s.decodeCPU(pages, st.ch, stop)
				tmu.Lock()
				truncated = append(truncated, t)
				tmu.Unlock()
			}()
		}
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	h := &mergeHeap{}
	var firstErr error
	advance := func(st *stream) bool {
		for st.i >= len(st.cur) {
			if st.cur != nil {
				batchPool.Put(st.cur[:0])
				st.cur = nil
			}
			if st.done {
				return false
			}
			b := <-st.ch
			if b.err != nil && firstErr == nil {
				firstErr = b.err
			}
			st.cur, st.i, st.done = b.recs, 0, b.last
		}
		return true
	}
	for _, st := range streams {
		if advance(st) {
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
			st.i++
			if r.data == nil {
				ev = trace.Event{TS: r.ts, CPU: st.cpu, Kind: trace.Lost, Count: r.lostCount()}
				if ev.Count < 0 {
					s.info.LostUnknown++
				} else {
					s.info.Lost += ev.Count
				}
			} else {
				s.info.Events++
				ev = trace.Event{TS: r.ts, CPU: st.cpu, PID: int(r.pid), Data: unsafe.Slice((*byte)(r.data), r.n), Order: s.f.Order, Format: r.f}
				if r.f != nil {
					ev.System, ev.Name = r.f.System, r.f.Name
				} else {
					ev.Name = fmt.Sprintf("event_%d", s.f.Order.Uint16(ev.Data))
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
	wg.Wait()
	for _, t := range truncated {
		s.info.Truncated = s.info.Truncated || t
	}
	return firstErr
}

// decodeCPU reads one CPU's pages and sends decoded records in batches.
// It returns whether the stream was cut short.
func (s *datSource) decodeCPU(pages *tracefmt.Pages, out chan<- batch, stop <-chan struct{}) (truncated bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	dec := ringbuf.NewDecoder(s.f.PageLayout, s.f.Order)
	formats := map[int]*eventfmt.Format{}
	pidField := &eventfmt.Field{Offset: 4, Size: 4, Signed: true}
	pidKnown := false
	order := s.f.Order
	lastID, lastFmt := ^uint64(0), (*eventfmt.Format)(nil)
	recs := batchPool.Get().([]rec)
	n := 0
	send := func(last bool, err error) bool {
		select {
		case out <- batch{recs: recs, last: last, err: err}:
			recs = batchPool.Get().([]rec)
			n = 0
			return true
		case <-stop:
			return false
		}
	}
	// Reading and inflating pages runs one stage ahead of decoding them.
	pageCh := make(chan [][]byte, pageDepth)
	quit := make(chan struct{}) // the decoder gave up on a damaged page
	var readErr error
	go func() {
		defer close(pageCh)
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer s.f.Recover(&readErr)
		for {
			b := make([][]byte, 0, batchPages)
			for len(b) < batchPages {
				pg, err := pages.Next()
				if err != nil {
					if err != io.EOF {
						readErr = err
					}
					break
				}
				b = append(b, pg)
			}
			if len(b) > 0 {
				select {
				case pageCh <- b:
				case <-stop:
					return
				case <-quit:
					return
				}
			}
			if len(b) < batchPages {
				return
			}
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			err := s.f.Fault(r) // the mapped file shrank
			select {
			case <-quit:
			default:
				close(quit)
			}
			for range pageCh {
			}
			send(true, err)
			truncated = true
		}
	}()
	var lastTS uint64
	var pending [][]byte
	for {
		if len(pending) == 0 {
			b, ok := <-pageCh
			if !ok {
				break
			}
			pending = b
		}
		pg := pending[0]
		pending = pending[1:]
		start := len(recs)
		p, derr := dec.Decode(pg, func(r ringbuf.Record) {
			if len(r.Data) < 8 {
				return
			}
			id := uint64(order.Uint16(r.Data))
			ef := lastFmt
			if id != lastID {
				var ok bool
				ef, ok = formats[int(id)]
				if !ok {
					ef, _ = s.f.Format(int(id))
					formats[int(id)] = ef
					if ef != nil && !pidKnown {
						if pf := ef.Field("common_pid"); pf != nil {
							pidField, pidKnown = pf, true
						}
					}
				}
				lastID, lastFmt = id, ef
			}
			pid, _ := pidField.Uint(r.Data, s.f.Order)
			lastTS = r.TS
			recs = append(recs, rec{ts: r.TS, data: unsafe.Pointer(unsafe.SliceData(r.Data)), f: ef, n: uint32(len(r.Data)), pid: int32(pid)})
		})
		if p.Missed != 0 {
			// Lost events sit between the previous page and this one; the
			// marker goes before this page's first event.
			mark := lostRec(max(p.TS, lastTS), p.Missed)
			recs = append(recs, rec{})
			copy(recs[start+1:], recs[start:])
			recs[start] = mark
		}
		if derr != nil {
			send(true, nil)
			// Let the reading stage end before the page iterator is dropped.
			close(quit)
			for range pageCh {
			}
			return true
		}
		n++
		if n >= batchPages {
			if !send(false, nil) {
				for range pageCh {
				}
				return pages.Truncated
			}
		}
	}
	// pageCh is closed: readErr and pages.Truncated are final.
	if readErr != nil {
		send(true, readErr)
		return true
	}
	send(true, nil)
	return pages.Truncated
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
