package perfetto

import (
	"strings"

	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/analyze/trace"
)

// liveCounter counts the objects alive as refcount.Analyzer sees them: an
// object (its key field, or the event's first argument, and for
// user-space probes its process) is alive while its references taken
// (get, new) exceed those dropped (put, free); new on a live object starts
// a new life. refcount's Analyzer keeps no count over time, so this small
// mirror of its rules gives the counter track its values.
type liveCounter struct {
	spec    refcount.Spec
	refs    map[liveKey]int64
	live    int64
	classes trace.TypeCache[*liveClass]
}

type liveKey struct {
	proc int
	addr uint64
	str  string
}

type liveClass struct {
	delta int64 // +1 get/new, -1 put/free, 0 other
	isNew bool
	key   string
}

func newLiveCounter(spec refcount.Spec) *liveCounter {
	return &liveCounter{spec: spec, refs: map[liveKey]int64{}}
}

// specMatches is refcount's event naming: "sys:name", "sys/name" or a
// bare name (any system; text recordings name none).
func specMatches(specs []string, e *trace.Event) bool {
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

func (l *liveCounter) derive(e *trace.Event) *liveClass {
	c := &liveClass{key: l.spec.Key}
	// refcount's precedence: new, free, get, put.
	switch {
	case specMatches(l.spec.New, e):
		c.delta, c.isNew = 1, true
	case specMatches(l.spec.Free, e):
		c.delta = -1
	case specMatches(l.spec.Get, e):
		c.delta = 1
	case specMatches(l.spec.Put, e):
		c.delta = -1
	}
	if c.key == "" {
		if args := e.ArgNames(); len(args) > 0 {
			c.key = args[0]
		}
	}
	return c
}

// event feeds one event and returns the live count when it changed.
func (l *liveCounter) event(e *trace.Event) (int64, bool) {
	if e.Kind != trace.Data {
		return 0, false
	}
	c := l.classes.Get(e, l.derive)
	if c.delta == 0 || c.key == "" {
		return 0, false
	}
	var k liveKey
	var ok bool
	if k.addr, ok = e.Uint(c.key); !ok {
		if k.str, ok = e.Value(c.key); !ok {
			return 0, false
		}
	}
	// User-space addresses are per process.
	if ip, ok := e.Uint("__probe_ip"); ok && ip < 1<<47 {
		k.proc = e.Process()
	}
	refs := l.refs[k]
	switch {
	case c.delta > 0 && refs > 0 && c.isNew:
		l.refs[k] = 1 // a new life at a live address: still one object
		return 0, false
	case c.delta > 0:
		l.refs[k] = refs + 1
		if refs > 0 {
			return 0, false
		}
		l.live++
	case refs <= 0:
		return 0, false // put without a live object
	case refs == 1:
		delete(l.refs, k)
		l.live--
	default:
		l.refs[k] = refs - 1
		return 0, false
	}
	return l.live, true
}
