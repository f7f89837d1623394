package perfetto

import (
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

func (l *liveCounter) derive(e *trace.Event) *liveClass {
	role, key := l.spec.Role(e)
	c := &liveClass{key: key}
	switch role {
	case refcount.RoleNew:
		c.delta, c.isNew = 1, true
	case refcount.RoleGet:
		c.delta = 1
	case refcount.RoleFree, refcount.RolePut:
		c.delta = -1
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
