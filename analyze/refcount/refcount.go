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

	"github.com/gprobe/gprobe/analyze/symbolize"
	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/internal/hugepage"
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

// Role is what an event does to an object's references.
type Role uint8

const (
	RoleNone Role = iota // not an event of the spec
	RoleGet              // takes a reference
	RolePut              // drops a reference
	RoleNew              // creates the object (its first reference; a new life at a live address)
	RoleFree             // destroys the object
)

// Role returns e's role under the spec (new, free, get, put take
// precedence in that order) and the name of the field holding the
// object's key (Key, else e's first argument; "" when e has none).
func (s Spec) Role(e *trace.Event) (Role, string) {
	r := RoleNone
	switch {
	case matches(s.New, e):
		r = RoleNew
	case matches(s.Free, e):
		r = RoleFree
	case matches(s.Get, e):
		r = RoleGet
	case matches(s.Put, e):
		r = RolePut
	}
	key := s.Key
	if key == "" {
		if args := e.ArgNames(); len(args) > 0 {
			key = args[0]
		}
	}
	return r, key
}

// Options tune the analyzer.
type Options struct {
	History    int // events kept per object (default 8; fewer when they do not fit in the object's ring)
	Quarantine int // released objects remembered for double-put detection (default 1<<20)
	// MaxListed bounds each list of the report (default 100): the oldest
	// outstanding objects, the sites with the most of them, and the first
	// objects of each kind of problem. Counts are always exact.
	MaxListed int
	// Symbols, when set, names the call sites that took first
	// references (symbolize.Symbolizer.CallerField finds them).
	Symbols *symbolize.Symbolizer
}

// Analyzer consumes events in time order. Its state is the live and
// quarantined objects, about 80 bytes each, and the listed problem
// objects.
type Analyzer struct {
	spec    Spec
	opts    Options
	classes trace.TypeCache[*class]
	slab    slab
	ix      index
	fifo    ring // released objects, oldest first
	deaths  uint32
	// Events queued for the next flush.
	batch  [batchSize]pending
	queued int
	seen   uint64 // latest timestamp fed
	sink   uint32 // keeps flush's loads
	// Interned names: event names, threads, string keys and sites.
	events    []string
	threads   []thread
	threadIDs map[thread]uint32
	lastTh    thread
	lastThID  uint32
	strs      map[string]uint32
	strList   []string
	sites     []siteKey
	siteIDs   map[siteKey]uint32
	// siteCache holds recently seen sites by a hash of their key: a few
	// call sites alternate, and a map lookup per reference costs more.
	siteCache [siteCacheLen]cachedSite
	// fields are the interned site field names; places the symbolized
	// call sites by site id (Symbols set).
	fields   []string
	fieldIDs map[string]uint32
	places   []symbolize.Place

	loss []uint64
	last uint64
	// lostAnywhere: events were lost at unknown times.
	lostAnywhere bool
	counts       Report // the counters; lists are built by Report
	underflow    []Object
	useAfterPut  []Object
	reused       []Object
}

// released is a quarantine entry: the slot, the serial of the release
// and the key's hash (to load its index line ahead).
type released struct {
	slot, death uint32
	h           uint64
}

// The quarantine ring's entries are backed ahead of its first pass, 1,024
// (16 KiB) to 16,384 (256 KiB) at a time.
const (
	backReleasesMin = 1 << 10
	backReleasesMax = 1 << 14
)

// ring is a FIFO of up to the size it is told. Its room is allocated
// whole (chunkMemory) and so costs the pages its entries have covered:
// growing by copies would touch the old and the new memory.
type ring struct {
	mem        *chunkMemory
	buf        []released
	head, size int
	backed     int // entries of buf backed (hugepage.Ahead): the first pass fills it in order
}

func (r *ring) len() int { return r.size }

// at is the i-th oldest entry.
func (r *ring) at(i int) released { return r.buf[(r.head+i)%len(r.buf)] }

// push appends x; the ring never holds more than limit entries at once.
func (r *ring) push(x released, limit int) {
	if r.buf == nil {
		if r.mem == nil {
			r.mem = newChunkMemory()
		}
		r.buf = r.mem.releases(limit)
	}
	if r.size == len(r.buf) {
		panic("refcount: quarantine ring over its limit")
	}
	i := (r.head + r.size) % len(r.buf)
	hugepage.Ahead(r.buf, i, &r.backed, backReleasesMin, backReleasesMax)
	r.buf[i] = x
	r.size++
}

func (r *ring) pop() released {
	x := r.buf[r.head]
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return x
}

type thread struct {
	pid  int
	comm string
}

// siteKey is where a first reference was taken: the event and the value
// of its call-site field (field: 0 none, else 1 + index in fields).
type siteKey struct {
	event uint32
	field uint32
	val   uint64
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
	return &Analyzer{spec: spec, opts: opts, threadIDs: map[thread]uint32{}, strs: map[string]uint32{},
		siteIDs: map[siteKey]uint32{}, lastThID: ^uint32(0), fieldIDs: map[string]uint32{}}
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
	role     Role
	event    uint32          // interned name
	keyField *eventfmt.Field // binary events
	keyName  string
	ipField  *eventfmt.Field
	// site is the call-site field (1 + index in Analyzer.fields, 0 none);
	// siteField its place in binary events.
	site      uint32
	siteField *eventfmt.Field
}

func (a *Analyzer) classOf(e *trace.Event) *class { return a.classes.Get(e, a.derive) }

func (a *Analyzer) derive(e *trace.Event) *class {
	c := &class{event: uint32(len(a.events))}
	a.events = append(a.events, e.Name)
	c.role, c.keyName = a.spec.Role(e)
	if f := a.opts.Symbols.CallerField(e); f != "" {
		id, ok := a.fieldIDs[f]
		if !ok {
			id = uint32(len(a.fields))
			a.fieldIDs[f] = id
			a.fields = append(a.fields, f)
		}
		c.site = id + 1
	}
	if e.Format != nil {
		c.keyField = e.Format.Field(c.keyName)
		c.ipField = e.Format.Field("__probe_ip")
		if c.site != 0 {
			c.siteField = e.Format.Field(a.fields[c.site-1])
		}
	}
	return c
}

func (a *Analyzer) key(e *trace.Event, c *class) (key, bool) {
	var k key
	var ok bool
	var str string
	if c.keyField != nil {
		if k.addr, ok = c.keyField.Uint(e.Data, e.Order); !ok {
			str, ok = c.keyField.String(e.Data, e.Order)
			k.tag = strKey
		}
	} else if e.Format == nil && c.keyName != "" {
		if k.addr, ok = e.Uint(c.keyName); !ok {
			str, ok = e.Value(c.keyName)
			k.tag = strKey
		}
	}
	if !ok {
		return k, false
	}
	if k.tag == strKey {
		id, seen := a.strs[str]
		if !seen {
			id = uint32(len(a.strList))
			a.strs[str] = id
			a.strList = append(a.strList, str)
		}
		k.addr = uint64(id)
	}
	var ip uint64
	var ipOK bool
	if c.ipField != nil {
		ip, ipOK = c.ipField.Uint(e.Data, e.Order)
	} else if e.Format == nil {
		ip, ipOK = e.Uint("__probe_ip")
	}
	if ipOK && ip < 1<<47 {
		k.tag |= uint32(e.Process()) &^ strKey
	}
	return k, true
}

// keyString renders a key: "0xADDR" or the string key, after "PROC:" for
// user-space keys.
func (a *Analyzer) keyString(k key) string {
	var s string
	if k.tag&strKey != 0 {
		s = a.strList[k.addr]
	} else {
		s = "0x" + strconv.FormatUint(k.addr, 16)
	}
	if p := k.tag &^ strKey; p != 0 {
		return strconv.Itoa(int(p)) + ":" + s
	}
	return s
}

// siteOf is where a reference was taken, as a site id: the event, and
// the call site when the probe records one (symbolize.Symbolizer.
// CallerField), placed by the symbolizer the first time it is seen.
func (a *Analyzer) siteOf(e *trace.Event, c *class) uint32 {
	sk := siteKey{event: c.event}
	if c.site != 0 {
		var v uint64
		var ok bool
		if c.siteField != nil {
			v, ok = c.siteField.Uint(e.Data, e.Order)
		} else if e.Format == nil {
			v, ok = e.Uint(a.fields[c.site-1])
		}
		if ok {
			sk.field, sk.val = c.site, v
		}
	}
	cs := &a.siteCache[(sk.val^uint64(sk.event)<<32^uint64(sk.field))*0x9e3779b97f4a7c15>>(64-siteCacheBits)]
	if cs.id != 0 && cs.sk == sk {
		return cs.id - 1
	}
	id, ok := a.siteIDs[sk]
	if !ok {
		id = uint32(len(a.sites))
		a.siteIDs[sk] = id
		a.sites = append(a.sites, sk)
		if a.opts.Symbols != nil && sk.field != 0 {
			for len(a.places) < len(a.sites) {
				a.places = append(a.places, symbolize.Place{})
			}
			a.places[id], _ = a.opts.Symbols.Code(e, sk.val)
		}
	}
	*cs = cachedSite{sk, id + 1}
	return id
}

const (
	siteCacheBits = 4
	siteCacheLen  = 1 << siteCacheBits
)

// cachedSite is a siteCache entry: id is the site id plus one (0: empty).
type cachedSite struct {
	sk siteKey
	id uint32
}

func (a *Analyzer) siteString(id uint32) string {
	sk := a.sites[id]
	s := a.events[sk.event]
	if sk.field != 0 {
		s += " " + a.fields[sk.field-1] + "=0x" + strconv.FormatUint(sk.val, 16)
	}
	return s
}

// sitePlace is where site id's code lies, when symbolized.
func (a *Analyzer) sitePlace(id uint32) (symbolize.Place, bool) {
	if int(id) >= len(a.places) {
		return symbolize.Place{}, false
	}
	p := a.places[id]
	return p, p.Function != ""
}

// thread interns the event's thread and command.
func (a *Analyzer) thread(e *trace.Event) uint32 {
	t := thread{e.PID, e.Comm}
	if t == a.lastTh && a.lastThID != ^uint32(0) {
		return a.lastThID
	}
	id, ok := a.threadIDs[t]
	if !ok {
		id = uint32(len(a.threads))
		a.threadIDs[t] = id
		a.threads = append(a.threads, t)
	}
	a.lastTh, a.lastThID = t, id
	return id
}

// batchSize is how many events are queued before they are applied: the
// index lines and objects a batch needs are loaded together first, so
// that their cache misses overlap instead of following one another.
const batchSize = 64

// pending is a queued event: what Event extracted from it.
type pending struct {
	ts   uint64
	k    key
	h    uint64 // hashKey(k)
	c    *class
	th   uint32
	site uint32 // a get or new: the site id
	lost bool
}

// Event feeds one event.
func (a *Analyzer) Event(e *trace.Event) {
	if e.TS > a.seen {
		a.seen = e.TS
	}
	p := &a.batch[a.queued]
	if e.Kind == trace.Lost {
		*p = pending{ts: e.TS, lost: true}
	} else {
		c := a.classOf(e)
		if c.role == RoleNone {
			return
		}
		k, ok := a.key(e, c)
		if !ok {
			return
		}
		*p = pending{ts: e.TS, k: k, h: hashKey(k), c: c, th: a.thread(e)}
		if c.role == RoleGet || c.role == RoleNew {
			p.site = a.siteOf(e, c)
		}
	}
	a.queued++
	if a.queued == batchSize {
		a.flush()
	}
}

// flush applies the queued events.
func (a *Analyzer) flush() {
	b := a.batch[:a.queued]
	a.queued = 0
	if len(a.ix.e) > 0 {
		// Touch what the batch will need; the loads do not depend on one
		// another, so the processor overlaps their misses.
		var sink uint32
		for i := range b {
			if !b[i].lost {
				sink += a.ix.e[b[i].h&a.ix.mask].h
			}
		}
		for i := range b {
			if !b[i].lost {
				if slot, ok := a.ix.find(&a.slab, b[i].k); ok {
					sink += uint32(a.slab.at(slot).count)
				}
			}
		}
		// The oldest released objects the batch may make the quarantine
		// forget.
		for i := 0; i < a.fifo.len() && i < a.fifo.len()-a.opts.Quarantine+len(b); i++ {
			q := a.fifo.at(i)
			sink += a.ix.e[q.h&a.ix.mask].h + uint32(a.slab.at(q.slot).count)
		}
		a.sink = sink
	}
	for i := range b {
		a.apply(&b[i])
	}
	if a.seen > a.last {
		a.last = a.seen
	}
}

// apply runs one event against the objects.
func (a *Analyzer) apply(p *pending) {
	if p.ts > a.last {
		a.last = p.ts
	}
	if p.lost {
		a.loss = append(a.loss, p.ts)
		return
	}
	c, r := p.c, p.c.role
	slot, found := a.ix.find(&a.slab, p.k)
	var o *obj
	if found {
		o = a.slab.at(slot)
	}
	live := found && o.flags&dead == 0
	switch r {
	case RoleGet, RoleNew:
		switch {
		case live && r == RoleNew:
			// Allocated again while still referenced: the old life's
			// final put was missed or the object leaked.
			a.counts.Reused++
			a.list(&a.reused, o)
			a.born(o, p)
		case live:
			o.count++
		case found && r == RoleGet && len(a.spec.New) > 0:
			// The object was released and not allocated again.
			a.counts.UseAfterPut++
			o.flags &^= dead
			o.count = 1
			a.list(&a.useAfterPut, o)
		case found:
			a.counts.Reused++
			a.born(o, p)
		default:
			slot = a.slab.alloc()
			o = a.slab.at(slot)
			o.addr, o.tag = p.k.addr, p.k.tag
			a.ix.insert(p.h, slot)
			a.born(o, p)
		}
	case RolePut, RoleFree:
		if !found {
			a.counts.UnmatchedPuts++
			return
		}
		o.count--
		if !live {
			o.record(p.ts, c.event, p.th, o.count, a.opts.History)
			a.counts.Underflows++
			a.list(&a.underflow, o)
			return
		}
		if o.count <= 0 {
			a.release(slot, o, p.h)
		}
	}
	o.record(p.ts, c.event, p.th, o.count, a.opts.History)
}

// born starts a new life in o's slot (the key is set).
func (a *Analyzer) born(o *obj, p *pending) {
	o.first, o.count, o.site = p.ts, 1, p.site
	o.flags, o.hlen, o.steps = inUse, 0, 0
	a.counts.Objects++
}

// release quarantines a released object; the oldest beyond the
// quarantine's size are forgotten.
func (a *Analyzer) release(slot uint32, o *obj, h uint64) {
	o.flags |= dead
	a.deaths++
	o.death = a.deaths
	a.fifo.push(released{slot, o.death, h}, a.opts.Quarantine+1)
	if a.fifo.len() > a.opts.Quarantine {
		old := a.fifo.pop()
		// Only the latest release of a slot frees it: the object may
		// have been used again, or released again, since.
		if d := a.slab.at(old.slot); d.flags&dead != 0 && d.death == old.death {
			a.ix.remove(&a.slab, d.key(), old.h)
			a.slab.release(old.slot)
		}
	}
}

// list snapshots o into a problem list (bounded).
func (a *Analyzer) list(l *[]Object, o *obj) {
	if len(*l) < a.opts.MaxListed {
		c := a.object(o)
		c.Uncertain = a.lossIn(o.first, a.last)
		*l = append(*l, c)
	}
}

// object renders o.
func (a *Analyzer) object(o *obj) Object {
	out := Object{Key: a.keyString(o.key()), Count: int64(o.count), FirstTS: o.first, LastTS: o.last, Site: a.siteString(o.site)}
	for _, s := range o.history() {
		t := a.threads[s.thread]
		out.History = append(out.History, Step{TS: s.ts, Event: a.events[s.event], Count: int64(s.count), PID: t.pid, Comm: t.comm})
	}
	return out
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
func (a *Analyzer) LostSomewhere() {
	a.flush()
	a.lostAnywhere = true
}

// outstanding calls fn with the slot of every object still referenced.
func (a *Analyzer) outstanding(fn func(slot uint32, o *obj)) {
	a.flush()
	for i := uint32(0); i < a.slab.n; i++ {
		if o := a.slab.at(i); o.flags&(inUse|dead) == inUse && o.count > 0 {
			fn(i, o)
		}
	}
}
