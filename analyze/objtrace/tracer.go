package objtrace

import (
	"sort"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/analyze/symbolize"
	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
)

// Field is one argument of an event.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Caller is where the code address in a caller field lies
	// ("FUNC+0xOFF FILE:LINE"), when it can be symbolized.
	Caller string `json:"caller,omitempty"`
}

// Hit is one event whose arguments carry the traced address.
type Hit struct {
	File  string `json:"file,omitempty"` // with several recordings
	TS    uint64 `json:"ts"`
	CPU   int    `json:"cpu"`
	PID   int    `json:"pid"`
	TGID  int    `json:"tgid,omitempty"`
	Comm  string `json:"comm,omitempty"`
	Event string `json:"event"`
	// Matched are the arguments holding the address.
	Matched []string `json:"matched"`
	// Fields are the event's arguments, in order, the matched ones too.
	Fields []Field `json:"fields"`
}

// Summary is the traced object's life as the recordings show it.
type Summary struct {
	Object     string `json:"object"`
	Events     int    `json:"events"`
	FirstTS    uint64 `json:"first_ts"`
	LastTS     uint64 `json:"last_ts"`
	LifetimeNs uint64 `json:"lifetime_ns"`
	FirstEvent string `json:"first_event,omitempty"`
	LastEvent  string `json:"last_event,omitempty"`
	// Elsewhere are processes whose user-space events carry the same
	// number, when those are not the ones asked for (at most
	// maxElsewhere): the object may be one of theirs.
	Elsewhere []int `json:"elsewhere,omitempty"`
}

const maxElsewhere = 16

// Tracer finds the events of one object. Feed it every recording's events
// in time order; it keeps only the summary.
type Tracer struct {
	addr    Addr
	file    string
	sym     *symbolize.Symbolizer
	classes trace.TypeCache[*class]
	sum     Summary
	seen    map[int]bool // Elsewhere, as a set
}

// class is what an event type's arguments are: their names, and for
// binary events their fields.
type class struct {
	name   string
	names  []string
	fields []*eventfmt.Field
	user   bool
	caller string // symbolize.Symbolizer.CallerField
}

// NewTracer returns a tracer of the object at a.
func NewTracer(a Addr) *Tracer {
	return &Tracer{addr: a, sum: Summary{Object: a.String()}, seen: map[int]bool{}}
}

// Recording starts the events of a recording: file names it in hits
// ("" for one recording alone), info's probe definitions and kallsyms
// symbolize its caller fields.
func (t *Tracer) Recording(file string, info trace.Info) {
	t.file = file
	t.sym = symbolize.New(info.Probes, info.Kallsyms)
	t.classes = trace.TypeCache[*class]{}
}

func classify(sym *symbolize.Symbolizer) func(e *trace.Event) *class {
	return func(e *trace.Event) *class {
		c := &class{name: fullName(e), names: e.ArgNames(), user: symbolize.IsUser(e), caller: sym.CallerField(e)}
		if e.Format != nil {
			for _, n := range c.names {
				c.fields = append(c.fields, e.Format.Field(n))
			}
		}
		return c
	}
}

func fullName(e *trace.Event) string {
	if e.System == "" {
		return e.Name
	}
	return e.System + ":" + e.Name
}

// value is argument i of e as a number.
func (c *class) value(e *trace.Event, i int) (uint64, bool) {
	if e.Format != nil {
		if f := c.fields[i]; f != nil && !f.IsString() {
			return f.Uint(e.Data, e.Order)
		}
		return 0, false
	}
	return e.Uint(c.names[i])
}

// Event looks at one event: a data event whose arguments carry the
// address (and, in user space, of the address' process) is a hit.
func (t *Tracer) Event(e *trace.Event) (Hit, bool) {
	if e.Kind != trace.Data {
		return Hit{}, false
	}
	c := t.classes.Get(e, classify(t.sym))
	var matched []string
	for i := range c.names {
		if v, ok := c.value(e, i); ok && v == t.addr.Addr {
			matched = append(matched, c.names[i])
		}
	}
	if matched == nil {
		return Hit{}, false
	}
	if c.user != (t.addr.Proc != 0) || (c.user && e.Process() != t.addr.Proc) {
		if c.user && !t.seen[e.Process()] && len(t.seen) < maxElsewhere {
			t.seen[e.Process()] = true
			t.sum.Elsewhere = append(t.sum.Elsewhere, e.Process())
			sort.Ints(t.sum.Elsewhere)
		}
		return Hit{}, false
	}
	h := Hit{File: t.file, TS: e.TS, CPU: e.CPU, PID: e.PID, TGID: e.TGID, Comm: e.Comm, Event: c.name, Matched: matched}
	for i, n := range c.names {
		var f Field
		if e.Format != nil && c.fields[i] != nil {
			f = Field{Name: n, Value: trace.CutGoString(c.fields[i].Format(e.Data, e.Order), trace.GoStringLen(e.Format, c.fields[i]), e.Data, e.Order)}
		} else {
			v, _ := e.Value(n)
			f = Field{Name: n, Value: v}
		}
		if n == c.caller {
			if v, ok := c.value(e, i); ok {
				if p, ok := t.sym.Code(e, v); ok {
					f.Caller = p.String()
				}
			}
		}
		h.Fields = append(h.Fields, f)
	}
	if strings.HasPrefix(c.caller, "__probe_") {
		// A return probe's caller is not among its arguments.
		if v, ok := e.Uint(c.caller); ok {
			f := Field{Name: c.caller, Value: "0x" + strconv.FormatUint(v, 16)}
			if p, ok := t.sym.Code(e, v); ok {
				f.Caller = p.String()
			}
			h.Fields = append(h.Fields, f)
		}
	}
	s := &t.sum
	if s.Events == 0 {
		s.FirstTS, s.FirstEvent = e.TS, c.name
	}
	s.Events++
	s.LastTS, s.LastEvent = e.TS, c.name
	s.LifetimeNs = s.LastTS - s.FirstTS
	return h, true
}

// Summary is the object's life so far.
func (t *Tracer) Summary() Summary { return t.sum }
