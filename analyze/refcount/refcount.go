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
	"strings"

	"github.com/gprobe/gprobe/analyze/trace"
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
	spec  Spec
	opts  Options
	roles map[string]role
	live  map[string]*Object
	dead  map[string]*Object
	order []string // quarantine FIFO
	qhead int
	loss  []uint64
	last  uint64
	rep   Report
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
	return &Analyzer{spec: spec, opts: opts, roles: map[string]role{}, live: map[string]*Object{}, dead: map[string]*Object{}}
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

func (a *Analyzer) role(e *trace.Event) role {
	full := e.System + ":" + e.Name
	if r, ok := a.roles[full]; ok {
		return r
	}
	r := roleNone
	switch {
	case matches(a.spec.New, e):
		r = roleNew
	case matches(a.spec.Free, e):
		r = roleFree
	case matches(a.spec.Get, e):
		r = roleGet
	case matches(a.spec.Put, e):
		r = rolePut
	}
	a.roles[full] = r
	return r
}

// key returns the object key: the address, prefixed by the process for
// user-space probes (addresses are per process).
func (a *Analyzer) key(e *trace.Event) (string, bool) {
	field := a.spec.Key
	if field == "" {
		args := e.ArgNames()
		if len(args) == 0 {
			return "", false
		}
		field = args[0]
	}
	var k string
	if v, ok := e.Uint(field); ok {
		k = fmt.Sprintf("0x%x", v)
	} else if s, ok := e.Value(field); ok {
		k = s
	} else {
		return "", false
	}
	if ip, ok := e.Uint("__probe_ip"); ok && ip < 1<<47 {
		p := e.TGID
		if p == 0 {
			p = e.PID
		}
		k = fmt.Sprintf("%d:%s", p, k)
	}
	return k, true
}

func site(e *trace.Event) string {
	s := e.Name
	for _, f := range []string{"site", "call_site", "caller"} {
		if v, ok := e.Uint(f); ok {
			return fmt.Sprintf("%s %s=0x%x", s, f, v)
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
	r := a.role(e)
	if r == roleNone {
		return
	}
	k, ok := a.key(e)
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

func (a *Analyzer) born(k string, e *trace.Event) *Object {
	o := &Object{Key: k, Count: 1, FirstTS: e.TS, Site: site(e)}
	a.live[k] = o
	a.rep.Objects++
	return o
}

func (a *Analyzer) quarantine(k string, o *Object) {
	a.dead[k] = o
	a.order = append(a.order, k)
	if len(a.order)-a.qhead > a.opts.Quarantine {
		old := a.order[a.qhead]
		a.qhead++
		if d := a.dead[old]; d != nil && d.dead {
			delete(a.dead, old)
		}
		if a.qhead > len(a.order)/2 {
			a.order = append([]string(nil), a.order[a.qhead:]...)
			a.qhead = 0
		}
	}
}

// list snapshots o into a problem list (bounded).
func (a *Analyzer) list(l *[]Object, o *Object) {
	if len(*l) < a.opts.MaxListed {
		c := *o
		c.History = o.history()
		c.Uncertain = a.lossIn(o.FirstTS, a.last)
		*l = append(*l, c)
	}
}

// lossIn reports whether a loss marker lies in [from, to].
func (a *Analyzer) lossIn(from, to uint64) bool {
	i := sort.Search(len(a.loss), func(i int) bool { return a.loss[i] >= from })
	return i < len(a.loss) && a.loss[i] <= to
}

// Report closes the analysis.
func (a *Analyzer) Report() Report {
	rep := a.rep
	sites := map[string]int{}
	for _, o := range a.live {
		if o.Count <= 0 {
			continue
		}
		c := *o
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
