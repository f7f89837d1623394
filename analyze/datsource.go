package analyze

import (
	"container/heap"
	"fmt"
	"io"
	"sync"

	"github.com/gprobe/gprobe/analyze/event"
	"github.com/gprobe/gprobe/analyze/ftracetext"
	"github.com/gprobe/gprobe/analyze/ringbuf"
	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/analyze/tracedat"
)

// batchPages is how many pages a CPU decoder hands over at once; with the
// channel depth below it bounds the events held per CPU.
const (
	batchPages = 16
	chanDepth  = 4
)

// datSource decodes every CPU stream of every buffer in its own goroutine
// and merges them by timestamp.
type datSource struct {
	f    *tracedat.File
	info trace.Info
}

func newDatSource(f *tracedat.File) *datSource {
	s := &datSource{f: f}
	comp := f.Compression
	if comp == "" {
		comp = "none"
	}
	s.info.Format = fmt.Sprintf("trace.dat v%d (%s)", f.Version, comp)
	s.info.Truncated = f.Truncated
	return s
}

func (s *datSource) Info() trace.Info { return s.info }

type batch struct {
	evs  []trace.Event
	err  error
	last bool
}

type stream struct {
	ch    chan batch
	cur   []trace.Event
	i     int
	done  bool
	order int // tie-break for equal timestamps: deterministic output
}

func (s *datSource) Run(fn func(*trace.Event) error) error {
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
			st := &stream{ch: make(chan batch, chanDepth), order: len(streams)}
			streams = append(streams, st)
			pages := s.f.Pages(b, ci)
			cpu := b.CPUs[ci].CPU
			wg.Add(1)
			go func() {
				defer wg.Done()
				t := s.decodeCPU(pages, cpu, st.ch, stop)
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
			if st.done {
				return false
			}
			b := <-st.ch
			if b.err != nil && firstErr == nil {
				firstErr = b.err
			}
			st.cur, st.i, st.done = b.evs, 0, b.last
		}
		return true
	}
	for _, st := range streams {
		if advance(st) {
			heap.Push(h, st)
		}
	}
	for h.Len() > 0 {
		st := (*h)[0]
		ev := &st.cur[st.i]
		st.i++
		if ev.Kind == trace.Lost {
			if ev.Count < 0 {
				s.info.LostUnknown++
			} else {
				s.info.Lost += ev.Count
			}
		} else {
			s.info.Events++
		}
		if err := fn(ev); err != nil {
			return err
		}
		if advance(st) {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
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

// decodeCPU reads one CPU's pages and sends decoded events in batches. It
// returns whether the stream was cut short.
func (s *datSource) decodeCPU(pages *tracedat.Pages, cpu int, out chan<- batch, stop <-chan struct{}) (truncated bool) {
	dec := ringbuf.Decoder{Header: s.f.HeaderPage, Order: s.f.Order}
	formats := map[int]*event.Format{}
	var pidField, typeField *event.Field
	evs := make([]trace.Event, 0, 256)
	n := 0
	send := func(last bool, err error) bool {
		select {
		case out <- batch{evs: evs, last: last, err: err}:
			evs = make([]trace.Event, 0, 256)
			n = 0
			return true
		case <-stop:
			return false
		}
	}
	var lastTS uint64
	for {
		pg, err := pages.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			send(true, err)
			return true
		}
		start := len(evs)
		p, derr := dec.Decode(pg, func(r ringbuf.Record) {
			if len(r.Data) < 8 {
				return
			}
			if typeField == nil {
				typeField = &event.Field{Offset: 0, Size: 2}
			}
			id, _ := typeField.Uint(r.Data, s.f.Order)
			ef, ok := formats[int(id)]
			if !ok {
				ef, _ = s.f.Format(int(id))
				formats[int(id)] = ef
				if ef != nil && pidField == nil {
					pidField = ef.Field("common_pid")
				}
			}
			ev := trace.Event{TS: r.TS, CPU: cpu, Data: r.Data, Order: s.f.Order, Format: ef}
			if ef != nil {
				ev.System, ev.Name = ef.System, ef.Name
				if pidField != nil {
					v, _ := pidField.Uint(r.Data, s.f.Order)
					ev.PID = int(int32(v))
				}
			} else {
				ev.Name = fmt.Sprintf("event_%d", id)
			}
			ev.Comm = s.f.Cmdlines[ev.PID]
			lastTS = r.TS
			evs = append(evs, ev)
		})
		if p.Missed != 0 {
			// Lost events sit between the previous page and this one; the
			// marker goes before this page's first event.
			mark := trace.Event{Kind: trace.Lost, TS: p.TS, CPU: cpu, Count: p.Missed}
			if p.TS < lastTS {
				mark.TS = lastTS
			}
			evs = append(evs, trace.Event{})
			copy(evs[start+1:], evs[start:])
			evs[start] = mark
		}
		if derr != nil {
			truncated = true
			send(true, nil)
			return truncated
		}
		n++
		if n >= batchPages {
			if !send(false, nil) {
				return pages.Truncated
			}
		}
	}
	send(true, nil)
	return pages.Truncated
}

type mergeHeap []*stream

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	a, b := &h[i].cur[h[i].i], &h[j].cur[h[j].i]
	if a.TS != b.TS {
		return a.TS < b.TS
	}
	return h[i].order < h[j].order
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*stream)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
