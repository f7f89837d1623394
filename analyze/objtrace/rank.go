package objtrace

import (
	"container/heap"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/analyze/symbolize"
	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
)

// By is what objects are ranked by.
type By int

const (
	// ByEvents ranks by the number of events carrying the address.
	ByEvents By = iota
	// ByLifetime ranks by the time from the first to the last of them.
	ByLifetime
)

// ParseBy reads "events" or "lifetime".
func ParseBy(s string) (By, error) {
	switch s {
	case "events", "":
		return ByEvents, nil
	case "lifetime":
		return ByLifetime, nil
	}
	return 0, fmt.Errorf("--rank %q: want events or lifetime", s)
}

func (b By) String() string {
	if b == ByLifetime {
		return "lifetime"
	}
	return "events"
}

// MinAddr is the lowest value taken for an address: nothing can be
// mapped below the kernel's default mmap_min_addr (64 KiB), so smaller
// numbers are counts, sizes and flags.
const MinAddr = 0x10000

// Object is one ranked object.
type Object struct {
	Object     string `json:"object"`
	Events     int    `json:"events"`
	FirstTS    uint64 `json:"first_ts"`
	LastTS     uint64 `json:"last_ts"`
	LifetimeNs uint64 `json:"lifetime_ns"`
	FirstEvent string `json:"first_event"`
	LastEvent  string `json:"last_event"`
}

// Ranking is the result of a Ranker.
type Ranking struct {
	By string `json:"rank"`
	// Objects counts the distinct addresses seen; Values the address
	// values read (one per counted field of each event).
	Objects int   `json:"objects"`
	Values  int64 `json:"values"`
	// Fields are the counted fields that held an address, "EVENT FIELD".
	Fields []string `json:"fields"`
	// Top are the first objects by By, at most the Ranker's top.
	Top []Object `json:"top"`
}

// objKey is an address and its process (0 in the kernel).
type objKey struct {
	addr uint64
	proc int32
}

// objState is an object's compact state: 32 bytes.
type objState struct {
	first, last     uint64
	events          uint32
	firstEv, lastEv uint32 // interned event names
}

// Ranker counts the events and lifetimes of the addresses in the counted
// fields of every event: with a refcount spec, the key field of its
// events; otherwise address-like arguments (Pointer).
type Ranker struct {
	by      By
	top     int
	spec    *refcount.Spec
	sym     *symbolize.Symbolizer
	classes trace.TypeCache[*rankClass]
	objs    map[objKey]objState
	events  []string // interned event names
	eventID map[string]uint32
	values  int64
	used    map[string]bool // "EVENT FIELD" that held an address
}

type rankClass struct {
	event  uint32
	user   bool
	names  []string // counted fields
	fields []*eventfmt.Field
	counts []bool // names[i] held an address already
}

// NewRanker returns a ranker keeping the top n objects by by; spec, when
// set, restricts the counted fields to its events' key field.
func NewRanker(n int, by By, spec *refcount.Spec) *Ranker {
	return &Ranker{by: by, top: n, spec: spec, objs: map[objKey]objState{}, eventID: map[string]uint32{}, used: map[string]bool{}}
}

// Recording starts a recording's events; its probe definitions tell
// which fields hold callers (never counted as objects).
func (r *Ranker) Recording(info trace.Info) {
	r.sym = symbolize.New(info.Probes, info.Kallsyms)
	r.classes = trace.TypeCache[*rankClass]{}
}

// printHex matches a print fmt conversion that prints a number as an
// address: NAME=0x%..x, NAME=%..x or NAME=%p.
var printHex = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(\w+)=(?:0x)?%[-#0-9.]*(?:l|ll|L|h|hh|z)?(?:x|p[a-zA-Z]*)`)
})

// Pointer tells whether field f of binary event format ef counts as an
// address: an unsigned 64-bit (or long) scalar, or a C pointer, that the
// event's print format prints in hex or as a pointer, or whose C type is
// a pointer.
func Pointer(ef *eventfmt.Format, f *eventfmt.Field) bool {
	if f == nil || f.IsString() || f.ArrayLen != 0 || f.DataLoc || f.RelLoc || f.Signed || f.Size != 8 {
		return false
	}
	if strings.Contains(f.Type, "*") {
		return true
	}
	for _, m := range printHex().FindAllStringSubmatch(ef.Print, -1) {
		if m[1] == f.Name {
			return true
		}
	}
	return false
}

// textPointer tells an address-like printed value: 0x and hex digits.
func textPointer(v string) bool {
	return len(v) > 2 && (strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X"))
}

func (r *Ranker) classify(e *trace.Event) *rankClass {
	name := fullName(e)
	id, ok := r.eventID[name]
	if !ok {
		id = uint32(len(r.events))
		r.eventID[name] = id
		r.events = append(r.events, name)
	}
	c := &rankClass{event: id, user: symbolize.IsUser(e)}
	if r.spec != nil {
		if role, key := r.spec.Role(e); role != refcount.RoleNone && key != "" {
			c.names = []string{key}
		}
	} else {
		caller := r.sym.CallerField(e)
		for _, n := range e.ArgNames() {
			if n == caller {
				continue
			}
			if e.Format != nil && !Pointer(e.Format, e.Format.Field(n)) {
				continue
			}
			c.names = append(c.names, n)
		}
	}
	c.counts = make([]bool, len(c.names))
	if e.Format != nil {
		for _, n := range c.names {
			c.fields = append(c.fields, e.Format.Field(n))
		}
	}
	return c
}

// Event counts one event.
func (r *Ranker) Event(e *trace.Event) {
	if e.Kind != trace.Data {
		return
	}
	c := r.classes.Get(e, r.classify)
	for i, n := range c.names {
		var v uint64
		var ok bool
		if e.Format != nil {
			if f := c.fields[i]; f != nil {
				v, ok = f.Uint(e.Data, e.Order)
			}
		} else if s, has := e.Value(n); has && (r.spec != nil || textPointer(s)) {
			v, ok = trace.ParseUint(s)
		}
		if !ok || v < MinAddr {
			continue
		}
		if !c.counts[i] {
			c.counts[i] = true
			r.used[r.events[c.event]+" "+n] = true
		}
		r.values++
		k := objKey{addr: v}
		if c.user {
			k.proc = int32(e.Process())
		}
		o, seen := r.objs[k]
		if !seen {
			o.first, o.firstEv = e.TS, c.event
		}
		o.events++
		o.last, o.lastEv = e.TS, c.event
		r.objs[k] = o
	}
}

// rankHeap keeps the best objects: its root is the worst kept.
type rankHeap struct {
	r    *Ranker
	keys []objKey
}

func (h *rankHeap) Len() int           { return len(h.keys) }
func (h *rankHeap) Less(i, j int) bool { return h.r.better(h.keys[j], h.keys[i]) }
func (h *rankHeap) Swap(i, j int)      { h.keys[i], h.keys[j] = h.keys[j], h.keys[i] }
func (h *rankHeap) Push(x any)         { h.keys = append(h.keys, x.(objKey)) }
func (h *rankHeap) Pop() any {
	x := h.keys[len(h.keys)-1]
	h.keys = h.keys[:len(h.keys)-1]
	return x
}

// better orders by the ranking, then by first seen, then by key.
func (r *Ranker) better(a, b objKey) bool {
	x, y := r.objs[a], r.objs[b]
	if r.by == ByLifetime {
		if lx, ly := x.last-x.first, y.last-y.first; lx != ly {
			return lx > ly
		}
	}
	if x.events != y.events {
		return x.events > y.events
	}
	if x.first != y.first {
		return x.first < y.first
	}
	if a.proc != b.proc {
		return a.proc < b.proc
	}
	return a.addr < b.addr
}

// Ranking returns the top objects.
func (r *Ranker) Ranking() Ranking {
	h := &rankHeap{r: r}
	for k := range r.objs {
		if h.Len() < r.top {
			heap.Push(h, k)
		} else if r.better(k, h.keys[0]) {
			h.keys[0] = k
			heap.Fix(h, 0)
		}
	}
	sort.Slice(h.keys, func(i, j int) bool { return r.better(h.keys[i], h.keys[j]) })
	out := Ranking{By: r.by.String(), Objects: len(r.objs), Values: r.values, Fields: []string{}, Top: []Object{}}
	for f := range r.used {
		out.Fields = append(out.Fields, f)
	}
	sort.Strings(out.Fields)
	for _, k := range h.keys {
		o := r.objs[k]
		out.Top = append(out.Top, Object{Object: Addr{Proc: int(k.proc), Addr: k.addr}.String(), Events: int(o.events),
			FirstTS: o.first, LastTS: o.last, LifetimeNs: o.last - o.first, FirstEvent: r.events[o.firstEv], LastEvent: r.events[o.lastEv]})
	}
	return out
}
