package refcount

import (
	"container/heap"
	"sort"
)

// Step is one event in an object's history.
type Step struct {
	TS    uint64 `json:"ts"`
	Event string `json:"event"`
	Count int64  `json:"count"` // reference count after the event
	PID   int    `json:"pid"`
	Comm  string `json:"comm,omitempty"`
}

// Object is one life of one key.
type Object struct {
	Key string `json:"key"`
	// File is the recording the object is from, in totals over several.
	File      string `json:"file,omitempty"`
	Count     int64  `json:"count"`
	FirstTS   uint64 `json:"first_ts"`
	LastTS    uint64 `json:"last_ts"`
	Site      string `json:"site"`
	Uncertain bool   `json:"uncertain,omitempty"`
	History   []Step `json:"history,omitempty"`
}

// Site counts outstanding objects per first-reference site.
type Site struct {
	Site    string `json:"site"`
	Objects int    `json:"objects"`
}

// Report is the result. Counts are exact; each list holds at most
// Options.MaxListed entries.
type Report struct {
	Objects       int `json:"objects"`
	Outstanding   int `json:"outstanding"`
	Underflows    int `json:"underflows"`
	UseAfterPut   int `json:"use_after_put"`
	Reused        int `json:"reused"`
	UnmatchedPuts int `json:"unmatched_puts"`
	Uncertain     int `json:"uncertain"`
	// Leaks are the oldest outstanding objects, oldest first.
	Leaks []Object `json:"leaks"`
	// Sites are the sites with the most outstanding objects, of LeakSites.
	Sites     []Site `json:"sites"`
	LeakSites int    `json:"leak_sites"`
	// Problem objects, in the order found.
	UnderflowObjects   []Object `json:"underflow_objects"`
	UseAfterPutObjects []Object `json:"use_after_put_objects"`
	ReusedObjects      []Object `json:"reused_objects"`

	each func(fn func(Object) error) error
}

// EachLeak calls fn with every outstanding object, oldest first: streamed
// from the analyzer that made the report (the one that is alive), or
// Leaks when the report is a total over several.
func (r *Report) EachLeak(fn func(Object) error) error {
	if r.each != nil {
		return r.each(fn)
	}
	for _, o := range r.Leaks {
		if err := fn(o); err != nil {
			return err
		}
	}
	return nil
}

// Report closes the analysis.
func (a *Analyzer) Report() Report {
	t := NewTotals(a.opts.MaxListed)
	t.Add(a, "")
	r := t.Report()
	r.each = a.eachLeak
	return r
}

// older orders objects by first reference, then key.
func older(aTS uint64, aKey string, bTS uint64, bKey string) bool {
	if aTS != bTS {
		return aTS < bTS
	}
	return aKey < bKey
}

// eachLeak streams the outstanding objects, oldest first.
func (a *Analyzer) eachLeak(fn func(Object) error) error {
	var slots []uint32
	a.outstanding(func(slot uint32, _ *obj) { slots = append(slots, slot) })
	sort.Slice(slots, func(i, j int) bool { return a.olderSlot(slots[i], slots[j]) })
	for _, s := range slots {
		o := a.slab.at(s)
		out := a.object(o)
		out.Uncertain = a.lossIn(o.first, a.last)
		if err := fn(out); err != nil {
			return err
		}
	}
	return nil
}

func (a *Analyzer) olderSlot(i, j uint32) bool {
	x, y := a.slab.at(i), a.slab.at(j)
	if x.first != y.first {
		return x.first < y.first
	}
	return a.keyString(x.key()) < a.keyString(y.key())
}

// Totals adds up the analyses of several recordings: counts add up, sites
// of the same name merge, and the lists keep the oldest outstanding
// objects and the first problem objects, MaxListed of each.
type Totals struct {
	max   int
	rep   Report
	sites map[string]int
}

// NewTotals returns empty totals listing at most max objects per list.
func NewTotals(max int) *Totals {
	if max <= 0 {
		max = 100
	}
	return &Totals{max: max, sites: map[string]int{}}
}

// slotHeap keeps the max oldest slots: the root is the youngest kept.
type slotHeap struct {
	a     *Analyzer
	slots []uint32
}

func (h *slotHeap) Len() int           { return len(h.slots) }
func (h *slotHeap) Less(i, j int) bool { return h.a.olderSlot(h.slots[j], h.slots[i]) }
func (h *slotHeap) Swap(i, j int)      { h.slots[i], h.slots[j] = h.slots[j], h.slots[i] }
func (h *slotHeap) Push(x any)         { h.slots = append(h.slots, x.(uint32)) }
func (h *slotHeap) Pop() any {
	x := h.slots[len(h.slots)-1]
	h.slots = h.slots[:len(h.slots)-1]
	return x
}

// Add adds a finished analysis of the recording named file ("" for one
// recording alone).
func (t *Totals) Add(a *Analyzer, file string) {
	a.flush()
	c := a.counts
	r := &t.rep
	r.Objects += c.Objects
	r.Underflows += c.Underflows
	r.UseAfterPut += c.UseAfterPut
	r.Reused += c.Reused
	r.UnmatchedPuts += c.UnmatchedPuts
	perSite := make([]int, len(a.sites))
	h := &slotHeap{a: a}
	a.outstanding(func(slot uint32, o *obj) {
		r.Outstanding++
		perSite[o.site]++
		if a.lossIn(o.first, a.last) {
			r.Uncertain++
		}
		if h.Len() < t.max {
			heap.Push(h, slot)
		} else if a.olderSlot(slot, h.slots[0]) {
			h.slots[0] = slot
			heap.Fix(h, 0)
		}
	})
	for id, n := range perSite {
		if n > 0 {
			t.sites[a.siteString(uint32(id))] += n
		}
	}
	for _, s := range h.slots {
		o := a.slab.at(s)
		out := a.object(o)
		out.File = file
		out.Uncertain = a.lossIn(o.first, a.last)
		r.Leaks = append(r.Leaks, out)
	}
	sort.Slice(r.Leaks, func(i, j int) bool {
		x, y := &r.Leaks[i], &r.Leaks[j]
		if x.FirstTS != y.FirstTS || x.Key != y.Key {
			return older(x.FirstTS, x.Key, y.FirstTS, y.Key)
		}
		return x.File < y.File
	})
	if len(r.Leaks) > t.max {
		r.Leaks = r.Leaks[:t.max]
	}
	for _, l := range []struct{ dst, src *[]Object }{{&r.UnderflowObjects, &a.underflow}, {&r.UseAfterPutObjects, &a.useAfterPut}, {&r.ReusedObjects, &a.reused}} {
		for _, o := range *l.src {
			o.Uncertain = o.Uncertain || a.lostAnywhere
			if o.Uncertain {
				r.Uncertain++
			}
			if len(*l.dst) < t.max {
				o.File = file
				*l.dst = append(*l.dst, o)
			}
		}
	}
}

// Report returns the totals.
func (t *Totals) Report() Report {
	r := t.rep
	r.Leaks = append([]Object{}, r.Leaks...)
	r.Sites = []Site{}
	for s, n := range t.sites {
		r.Sites = append(r.Sites, Site{Site: s, Objects: n})
	}
	sort.Slice(r.Sites, func(i, j int) bool {
		if r.Sites[i].Objects != r.Sites[j].Objects {
			return r.Sites[i].Objects > r.Sites[j].Objects
		}
		return r.Sites[i].Site < r.Sites[j].Site
	})
	r.LeakSites = len(r.Sites)
	if len(r.Sites) > t.max {
		r.Sites = r.Sites[:t.max]
	}
	return r
}
