// Package trace is the reader-neutral event model: a stream of events in
// timestamp order, from a trace.dat (binary records decoded with their
// formats) or from ftrace text (fields parsed from the printed line).
package trace

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
)

// Kind tells data events from loss markers.
type Kind uint8

const (
	// Data is a recorded event.
	Data Kind = iota
	// Lost marks events lost on CPU before TS; Count is -1 when unknown.
	Lost
)

// Event is one record. Consumers get a pointer that is only valid during
// the callback; copy what must outlive it.
type Event struct {
	Kind   Kind
	TS     uint64 // nanoseconds (or raw clock units for counter clocks)
	CPU    int
	PID    int // thread id (common_pid)
	TGID   int // process id, 0 when the recording does not say
	Comm   string
	System string // "" for text recordings, which do not print it
	Name   string
	Count  int64 // Lost: events lost, -1 unknown

	// Binary events.
	Format *eventfmt.Format
	Data   []byte
	Order  binary.ByteOrder
	// Text events: the printed name=value pairs, the probe address part
	// "(A)" / "(A <- B)" mapped to __probe_ip / __probe_ret_ip, __probe_func.
	Fields []KV
}

// KV is one printed field of a text event.
type KV struct{ Key, Val string }

// Has reports whether the event has the named field.
func (e *Event) Has(name string) bool {
	if e.Format != nil {
		return e.Format.Field(name) != nil
	}
	for _, kv := range e.Fields {
		if kv.Key == name {
			return true
		}
	}
	return false
}

// Uint returns a numeric field.
func (e *Event) Uint(name string) (uint64, bool) {
	if e.Format != nil {
		fl := e.Format.Field(name)
		if fl == nil {
			return 0, false
		}
		return fl.Uint(e.Data, e.Order)
	}
	for _, kv := range e.Fields {
		if kv.Key == name {
			return ParseUint(kv.Val)
		}
	}
	return 0, false
}

// Value returns a field as text: the printed text for text events, and
// for binary events what ftrace would print (hex for unsigned numbers).
// A Go string's text is cut at its length (see GoStringLen).
func (e *Event) Value(name string) (string, bool) {
	if e.Format != nil {
		fl := e.Format.Field(name)
		if fl == nil {
			return "", false
		}
		return CutGoString(fl.Format(e.Data, e.Order), GoStringLen(e.Format, fl), e.Data, e.Order), true
	}
	for _, kv := range e.Fields {
		if kv.Key == name {
			if _, number := ParseUint(kv.Val); number {
				return kv.Val, true // printed text: a number is not a string
			}
			if n, ok := e.Uint(name + probe.LenSuffix); ok && n < uint64(len(kv.Val)) {
				return kv.Val[:n], true
			}
			return kv.Val, true
		}
	}
	return "", false
}

// GoStringLen is the field that carries the length of the string field
// fl of format f, a Go string recorded as text (NAME:string beside
// NAME_len, probe.LenSuffix): the kernel reads a string up to a NUL, which
// a Go string does not end with, so the text runs past the string. nil
// when fl is not such a string.
func GoStringLen(f *eventfmt.Format, fl *eventfmt.Field) *eventfmt.Field {
	if f == nil || fl == nil || !fl.IsString() {
		return nil
	}
	return f.Field(fl.Name + probe.LenSuffix)
}

// CutGoString cuts v, the text of a string field, at the length lenField
// holds in an event's data (GoStringLen; nil leaves v as it is).
func CutGoString(v string, lenField *eventfmt.Field, data []byte, order binary.ByteOrder) string {
	if lenField == nil {
		return v
	}
	if n, ok := lenField.Uint(data, order); ok && n < uint64(len(v)) {
		return v[:n]
	}
	return v
}

// ArgNames lists the event's own argument names in order (no common_ or
// __probe_ fields).
func (e *Event) ArgNames() []string {
	var out []string
	if e.Format != nil {
		for _, fl := range e.Format.Args() {
			out = append(out, fl.Name)
		}
		return out
	}
	for _, kv := range e.Fields {
		if !strings.HasPrefix(kv.Key, "__probe_") {
			out = append(out, kv.Key)
		}
	}
	return out
}

// ParseUint reads a printed number: 0x hex, decimal, negative decimal
// (as two's complement), or a quoted/odd value fails.
func ParseUint(s string) (uint64, bool) {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		v, err := strconv.ParseUint(s[2:], 16, 64)
		return v, err == nil
	}
	if v, err := strconv.ParseUint(s, 10, 64); err == nil {
		return v, true
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return uint64(v), true
	}
	// Old kernels printed x64 args as bare hex.
	v, err := strconv.ParseUint(s, 16, 64)
	return v, err == nil
}

// Info is what a reader learned about the recording as a whole.
type Info struct {
	Format      string // "trace.dat v7 (zstd)", "ftrace text", ...
	Events      int64  // data events delivered
	Lost        int64  // events known lost (sum of known counts)
	LostUnknown int    // loss markers without a count
	Truncated   bool
	// StatsLost is what the kernel's per-CPU stats (overrun, dropped)
	// recorded in the file count as lost, where it is not known when:
	// StatsOverrun (overwritten in a full buffer) plus StatsDropped
	// (refused by a full buffer).
	StatsLost                  int64
	StatsOverrun, StatsDropped int64
	// ProbeMissed counts probe hits the kernel could not record (the
	// kprobe_profile misses gprobe record stores; uprobes have none).
	ProbeMissed int64
	// LossCounted: the recording carries the kernel's own loss counters
	// (per-CPU buffer stats, or the "entries-written" header of the
	// trace file); without them events dropped without an in-band marker
	// go unseen.
	LossCounted bool
	// Host is the name of the machine that recorded, when it says.
	Host string
	// Probes are probe definitions the recording carries (gprobe record).
	Probes []string
	// Kallsyms reads the kernel's symbol table the recording carries
	// (trace.dat); nil for formats without one.
	Kallsyms func() ([]byte, error)
	// TextTimestamps: timestamps came from text (microsecond resolution).
	TextTimestamps bool
}

// Source delivers a recording's events in timestamp order.
type Source interface {
	// Run calls fn for every event (data and loss markers) in order; it
	// stops at the first error fn returns.
	Run(fn func(*Event) error) error
	// Info is complete once Run returned.
	Info() Info
}

// Process is the event's process: its TGID when the recording says, else
// its thread id.
func (e *Event) Process() int {
	if e.TGID != 0 {
		return e.TGID
	}
	return e.PID
}

// TypeCache keeps what a consumer derived once per event type: by format
// ID for binary events (a slice index on the hot path, from the lowest ID
// seen: probe events have IDs in the thousands), by system and name for
// text events.
type TypeCache[T any] struct {
	byID   []cached[T]
	base   int
	byName map[[2]string]T
}

type cached[T any] struct {
	f *eventfmt.Format
	v T
}

// Get returns the value for e's type, calling derive the first time.
func (c *TypeCache[T]) Get(e *Event, derive func(*Event) T) T {
	if f := e.Format; f != nil && f.ID >= 0 && f.ID < 1<<16 {
		i := f.ID - c.base
		if i >= 0 && i < len(c.byID) && c.byID[i].f == f {
			return c.byID[i].v
		}
		v := derive(e)
		switch {
		case len(c.byID) == 0:
			c.base, i = f.ID, 0
		case i < 0:
			c.byID = append(make([]cached[T], -i), c.byID...)
			c.base, i = f.ID, 0
		}
		for len(c.byID) <= i {
			c.byID = append(c.byID, cached[T]{})
		}
		c.byID[i] = cached[T]{f, v}
		return v
	}
	k := [2]string{e.System, e.Name}
	if v, ok := c.byName[k]; ok {
		return v
	}
	v := derive(e)
	if c.byName == nil {
		c.byName = map[[2]string]T{}
	}
	c.byName[k] = v
	return v
}
