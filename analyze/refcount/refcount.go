// Package refcount follows objects through get/put (and optional
// new/free) events keyed by an address argument, and reports objects still
// referenced at the end (leaks, grouped by the site that took the first
// reference), puts below zero (underflows), use after the final put, and
// address reuse. Verdicts on objects whose life overlaps a lost-events
// marker are flagged uncertain.
package refcount

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
)

// ErrSpec is wrapped by errors about a --refcount specification.
var ErrSpec = errors.New("bad refcount spec")

// Spec names the events of each role and the key field.
type Spec struct {
	Get, Put, New, Free []string
	// Key is the field holding the object address; "" means the event's
	// first argument.
	Key string
}

// ParseSpec reads "get=EV[,EV..],put=EV[,EV..][,key=FIELD][,new=EV][,free=EV]".
// A bare item continues the list of the role before it.
func ParseSpec(s string) (Spec, error) {
	var sp Spec
	var cur *[]string
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return sp, fmt.Errorf("%w: empty item in %q", ErrSpec, s)
		}
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			if cur == nil {
				return sp, fmt.Errorf("%w: %q has no role (get=, put=, new=, free=, key=)", ErrSpec, item)
			}
			*cur = append(*cur, item)
			continue
		}
		if v == "" {
			return sp, fmt.Errorf("%w: %s= has no value", ErrSpec, k)
		}
		switch k {
		case "get":
			cur = &sp.Get
		case "put":
			cur = &sp.Put
		case "new":
			cur = &sp.New
		case "free":
			cur = &sp.Free
		case "key":
			if sp.Key != "" {
				return sp, fmt.Errorf("%w: key= given twice", ErrSpec)
			}
			sp.Key, cur = v, nil
			continue
		default:
			return sp, fmt.Errorf("%w: unknown role %q (want get, put, new, free, key)", ErrSpec, k)
		}
		*cur = append(*cur, v)
	}
	if len(sp.Get)+len(sp.New) == 0 || len(sp.Put)+len(sp.Free) == 0 {
		return sp, fmt.Errorf("%w: need get= (or new=) and put= (or free=)", ErrSpec)
	}
	return sp, nil
}

type role uint8

const (
	roleNone role = iota
	roleGet
	rolePut
	roleNew
	roleFree
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
	Key       string `json:"key"`
	Count     int64  `json:"count"`
	FirstTS   uint64 `json:"first_ts"`
	LastTS    uint64 `json:"last_ts"`
	Site      string `json:"site"`
	Uncertain bool   `json:"uncertain,omitempty"`
	History   []Step `json:"history,omitempty"`

	key     objKey
	dead    bool
	hist    []Step // ring
	hn      int
	lastPut uint64
}

func (o *Object) record(s Step, max int) {
	if len(o.hist) < max {
		o.hist = append(o.hist, s)
	} else {
		o.hist[o.hn%max] = s
	}
	o.hn++
}

func (o *Object) history() []Step {
	if o.hn <= len(o.hist) {
		return append([]Step(nil), o.hist...)
	}
	i := o.hn % len(o.hist)
	return append(append([]Step(nil), o.hist[i:]...), o.hist[:i]...)
}

// Site counts outstanding objects per first-reference site.
type Site struct {
	Site    string `json:"site"`
	Objects int    `json:"objects"`
}

// Report is the result.
type Report struct {
	Objects       int      `json:"objects"`
	Outstanding   int      `json:"outstanding"`
	Underflows    int      `json:"underflows"`
	UseAfterPut   int      `json:"use_after_put"`
	Reused        int      `json:"reused"`
	UnmatchedPuts int      `json:"unmatched_puts"`
	Uncertain     int      `json:"uncertain"`
	Leaks         []Object `json:"leaks"`
	Sites         []Site   `json:"sites"`
	// Problem objects (capped at MaxListed each).
	UnderflowObjects   []Object `json:"underflow_objects"`
	UseAfterPutObjects []Object `json:"use_after_put_objects"`
	ReusedObjects      []Object `json:"reused_objects"`
}

// Options tune the analyzer.
type Options struct {
	History    int // events kept per object (default 8)
	Quarantine int // released objects remembered for double-put detection (default 1<<20)
	MaxListed  int // problem objects listed per kind (default 100)
}

// Analyzer consumes events in time order.
type Analyzer struct {
	spec    Spec
	opts    Options
	classes trace.TypeCache[*class]
	live    map[objKey]*Object
	dead    map[objKey]*Object
	order   []objKey // quarantine FIFO
	qhead   int
	loss    []uint64
	last    uint64
	rep     Report
	// lostAnywhere: events were lost at unknown times.
	lostAnywhere bool
}

// New returns an analyzer for spec.
func New(spec Spec, opts Options) *Analyzer {
	if opts.History <= 0 {
		opts.History = 8
	}
	if opts.Quarantine <= 0 {
		opts.Quarantine = 1 << 20
	}
	if opts.MaxListed <= 0 {
		opts.MaxListed = 100
	}
	return &Analyzer{spec: spec, opts: opts, live: map[objKey]*Object{}, dead: map[objKey]*Object{}}
}

func matches(specs []string, e *trace.Event) bool {
	for _, s := range specs {
		sys, name, ok := strings.Cut(s, ":")
		if !ok {
			sys, name, ok = strings.Cut(s, "/")
		}
		if !ok {
			sys, name = "", s
		}
		if name == e.Name && (sys == "" || e.System == "" || sys == e.System) {
			return true
		}
	}
	return false
}

// class caches, per event type, the role and where the key is.
type class struct {
	role     role
	keyField *eventfmt.Field // binary events
	keyName  string
	ipField  *eventfmt.Field
}

func (a *Analyzer) classOf(e *trace.Event) *class { return a.classes.Get(e, a.derive) }

func (a *Analyzer) derive(e *trace.Event) *class {
	c := &class{}
	switch {
	case matches(a.spec.New, e):
		c.role = roleNew
	case matches(a.spec.Free, e):
		c.role = roleFree
	case matches(a.spec.Get, e):
		c.role = roleGet
	case matches(a.spec.Put, e):
		c.role = rolePut
	}
	c.keyName = a.spec.Key
	if c.keyName == "" {
		if args := e.ArgNames(); len(args) > 0 {
			c.keyName = args[0]
		}
	}
	if e.Format != nil {
		c.keyField = e.Format.Field(c.keyName)
		c.ipField = e.Format.Field("__probe_ip")
	}
	return c
}

// objKey identifies an object: its address, or its printed key when not
// numeric, and for user-space probes the process (addresses are per
// process).
type objKey struct {
	proc int
	addr uint64
	str  string
}

func (k objKey) String() string {
	s := k.str
	if s == "" {
		s = "0x" + strconv.FormatUint(k.addr, 16)
	}
	if k.proc != 0 {
		return strconv.Itoa(k.proc) + ":" + s
	}
	return s
}

func (a *Analyzer) key(e *trace.Event, c *class) (objKey, bool) {
	var k objKey
	var ok bool
	if c.keyField != nil {
		if k.addr, ok = c.keyField.Uint(e.Data, e.Order); !ok {
			k.str, ok = c.keyField.String(e.Data, e.Order)
		}
	} else if e.Format == nil && c.keyName != "" {
		if k.addr, ok = e.Uint(c.keyName); !ok {
			k.str, ok = e.Value(c.keyName)
		}
	}
	if !ok {
		return k, false
	}
	var ip uint64
	var ipOK bool
	if c.ipField != nil {
		ip, ipOK = c.ipField.Uint(e.Data, e.Order)
	} else if e.Format == nil {
		ip, ipOK = e.Uint("__probe_ip")
	}
	if ipOK && ip < 1<<47 {
		k.proc = e.Process()
	}
	return k, true
}

// site names where a reference was taken: the event, and the call site
// when the probe records one (an argument named site, call_site or caller).
func (a *Analyzer) site(e *trace.Event) string {
	s := e.Name
	for _, f := range []string{"site", "call_site", "caller"} {
		if v, ok := e.Uint(f); ok {
			return s + " " + f + "=0x" + strconv.FormatUint(v, 16)
		}
	}
	return s
}

// Event feeds one event.
func (a *Analyzer) Event(e *trace.Event) {
	if e.TS > a.last {
		a.last = e.TS
	}
	if e.Kind == trace.Lost {
		a.loss = append(a.loss, e.TS)
		return
	}
	c := a.classOf(e)
	r := c.role
	if r == roleNone {
		return
	}
	k, ok := a.key(e, c)
	if !ok {
		return
	}
	o := a.live[k]
	switch r {
	case roleGet, roleNew:
		switch {
		case o != nil && r == roleNew:
			// Allocated again while still referenced: the old life's
			// final put was missed or the object leaked.
			a.rep.Reused++
			a.list(&a.rep.ReusedObjects, o)
			o = a.born(k, e)
		case o != nil:
			o.Count++
		default:
			if d := a.dead[k]; d != nil && r == roleGet && len(a.spec.New) > 0 {
				// The object was released and not allocated again.
				a.rep.UseAfterPut++
				delete(a.dead, k)
				d.dead = false
				d.Count = 1
				a.list(&a.rep.UseAfterPutObjects, d)
				a.live[k] = d
				o = d
			} else {
				if d != nil {
					a.rep.Reused++
					delete(a.dead, k)
				}
				o = a.born(k, e)
			}
		}
	case rolePut, roleFree:
		if o == nil {
			d := a.dead[k]
			if d == nil {
				a.rep.UnmatchedPuts++
				return
			}
			d.Count--
			d.LastTS = e.TS
			d.record(Step{TS: e.TS, Event: e.Name, Count: d.Count, PID: e.PID, Comm: e.Comm}, a.opts.History)
			a.rep.Underflows++
			a.list(&a.rep.UnderflowObjects, d)
			return
		}
		o.Count--
		if o.Count <= 0 {
			o.dead = true
			delete(a.live, k)
			a.quarantine(k, o)
		}
	}
	o.LastTS = e.TS
	o.record(Step{TS: e.TS, Event: e.Name, Count: o.Count, PID: e.PID, Comm: e.Comm}, a.opts.History)
}

func (a *Analyzer) born(k objKey, e *trace.Event) *Object {
	o := &Object{key: k, Count: 1, FirstTS: e.TS, Site: a.site(e), hist: make([]Step, 0, a.opts.History)}
	a.live[k] = o
	a.rep.Objects++
	return o
}

func (a *Analyzer) quarantine(k objKey, o *Object) {
	a.dead[k] = o
	a.order = append(a.order, k)
	if len(a.order)-a.qhead > a.opts.Quarantine {
		old := a.order[a.qhead]
		a.qhead++
		if d := a.dead[old]; d != nil && d.dead {
			delete(a.dead, old)
		}
		if a.qhead > len(a.order)/2 {
			a.order = append([]objKey(nil), a.order[a.qhead:]...)
			a.qhead = 0
		}
	}
}

// list snapshots o into a problem list (bounded).
func (a *Analyzer) list(l *[]Object, o *Object) {
	if len(*l) < a.opts.MaxListed {
		c := *o
		c.Key = o.key.String()
		c.History = o.history()
		c.Uncertain = a.lossIn(o.FirstTS, a.last)
		*l = append(*l, c)
	}
}

// lossIn reports whether a loss marker lies in [from, to].
func (a *Analyzer) lossIn(from, to uint64) bool {
	if a.lostAnywhere {
		return true
	}
	i := sort.Search(len(a.loss), func(i int) bool { return a.loss[i] >= from })
	return i < len(a.loss) && a.loss[i] <= to
}

// LostSomewhere records that events were lost at unknown times (the
// kernel's counters say so, the stream does not say where): every verdict
// becomes uncertain.
func (a *Analyzer) LostSomewhere() { a.lostAnywhere = true }

// Report closes the analysis.
func (a *Analyzer) Report() Report {
	rep := a.rep
	sites := map[string]int{}
	for _, o := range a.live {
		if o.Count <= 0 {
			continue
		}
		c := *o
		c.Key = o.key.String()
		c.History = o.history()
		c.Uncertain = a.lossIn(o.FirstTS, a.last)
		if c.Uncertain {
			rep.Uncertain++
		}
		rep.Leaks = append(rep.Leaks, c)
		sites[o.Site]++
	}
	rep.Outstanding = len(rep.Leaks)
	sort.Slice(rep.Leaks, func(i, j int) bool {
		if rep.Leaks[i].FirstTS != rep.Leaks[j].FirstTS {
			return rep.Leaks[i].FirstTS < rep.Leaks[j].FirstTS
		}
		return rep.Leaks[i].Key < rep.Leaks[j].Key
	})
	for s, n := range sites {
		rep.Sites = append(rep.Sites, Site{Site: s, Objects: n})
	}
	sort.Slice(rep.Sites, func(i, j int) bool {
		if rep.Sites[i].Objects != rep.Sites[j].Objects {
			return rep.Sites[i].Objects > rep.Sites[j].Objects
		}
		return rep.Sites[i].Site < rep.Sites[j].Site
	})
	for _, l := range []*[]Object{&rep.UnderflowObjects, &rep.UseAfterPutObjects, &rep.ReusedObjects} {
		for i := range *l {
			if (*l)[i].Uncertain {
				rep.Uncertain++
			}
		}
	}
	if rep.Leaks == nil {
		rep.Leaks = []Object{}
	}
	if rep.Sites == nil {
		rep.Sites = []Site{}
	}
	return rep
}
