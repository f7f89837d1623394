// Package probe holds THE probe model: the value that carries one probe from
// resolution to the kernel, its text form, and perf's conventions for naming
// events.
//
// Everything upstream (resolve) produces a [Probe]; everything downstream
// (emit/install, emit/tracefs, record, analyze) consumes it. Text is produced
// here and nowhere else ([Probe.String]), and matches what `perf probe -D`
// (6.1) prints:
//
//	p:probe/vfs_read vfs_read+0 count=%dx:x64
//	r:probe/vfs_read__return vfs_read+0 $retval
//	p:probe_prog/work /tmp/prog:0x1139 n=%di:s32
//
// The one reader of such lines is emit/probedef.Parse, which follows the
// kernel's grammar and limits; it returns a Probe, so that every line gprobe
// writes reads back to an equal Probe, and a line written by hand prints
// back as it was written (see [Location.Place] and [Raw]).
package probe

import (
	"strconv"
	"strings"
)

// Kind is the family of dynamic event a Probe defines: it decides the
// tracefs file the definition is written to and the grammar the kernel reads
// it with. A new kind of probe is a new Kind here, a case in
// [Probe.String], and a rule in emit/probedef.
type Kind uint8

const (
	// Kprobe is a kernel probe (p:, and r: for a kretprobe): kprobe_events.
	Kprobe Kind = iota
	// Uprobe is a user-space probe on PATH:OFFSET (p:, r:): uprobe_events.
	Uprobe
	// Fprobe is a function entry or exit probe (f:, FUNC or FUNC%return)
	// built on ftrace: dynamic_events.
	Fprobe
	// Tprobe is a probe on a tracepoint's arguments (t:, TRACEPOINT):
	// dynamic_events.
	Tprobe
	// Eprobe is an event probe (e:, SYSTEM.EVENT) reading the fields of
	// another trace event when it fires: dynamic_events.
	Eprobe
	// UserEvent is a persistent user event (u:NAME FIELDS;...), which
	// applications write through user_events_data: dynamic_events. It has
	// no place, only Fields, and is in the system user_events.
	UserEvent
)

// Kinds lists every Kind, in the order tools list events.
var Kinds = []Kind{Kprobe, Uprobe, Fprobe, Tprobe, Eprobe, UserEvent}

// kindInfo is what the kernel's code says about each kind: its events
// file, its error_log subsystem (trace_probe_log_init) and the group it
// gives an event defined without one.
var kindInfo = [...]struct{ name, file, subsystem, group string }{
	Kprobe: {"kprobe", "kprobe_events", "trace_kprobe", "kprobes"},
	Uprobe: {"uprobe", "uprobe_events", "trace_uprobe", "uprobes"},
	Fprobe: {"fprobe", "dynamic_events", "trace_fprobe", "fprobes"},
	Tprobe: {"tprobe", "dynamic_events", "trace_fprobe", "tracepoints"},
	Eprobe: {"eprobe", "dynamic_events", "event_probe", "eprobes"},
	// user_events logs nothing in error_log.
	UserEvent: {"user event", "dynamic_events", "user_events", "user_events"},
}

func (k Kind) info() struct{ name, file, subsystem, group string } {
	if int(k) < len(kindInfo) {
		return kindInfo[k]
	}
	return kindInfo[Kprobe]
}

func (k Kind) String() string { return k.info().name }

// File is the tracefs file that takes this kind's definitions.
func (k Kind) File() string { return k.info().file }

// Subsystem is the prefix of this kind's error_log entries.
func (k Kind) Subsystem() string { return k.info().subsystem }

// DefaultGroup is the group the kernel gives an event defined without one.
func (k Kind) DefaultGroup() string { return k.info().group }

// Dynamic reports whether the kind is written to dynamic_events only (it
// has no events file of its own).
func (k Kind) Dynamic() bool { return k.File() == "dynamic_events" }

// Probe is one trace event definition: one line of kprobe_events,
// uprobe_events or dynamic_events.
type Probe struct {
	Kind Kind
	// Group and Event name the event; either may be empty in a line written
	// by hand ("p vfs_read", "p:myev vfs_read"): the kernel then supplies
	// them (GroupOrDefault).
	Group, Event string
	// Return is a return probe: r:, a place written with %return, or an
	// fprobe on FUNC%return. On kernels that offer it, $argN and BTF
	// parameter names on a return probe are the values the arguments had
	// at the function's entry.
	Return    bool
	MaxActive int // r<N> or f<N> on a return probe; 0 = kernel default (perf never prints it)
	Target    Location
	Args      []FetchArg
	// Filter is an eprobe's filter on the attached event (the words after
	// "if", joined by single spaces); "" when there is none.
	Filter string
	// Fields are a user event's fields, in order.
	Fields []UserField
}

// UserField is one field of a user event: "TYPE NAME", or "struct TYPE
// NAME SIZE" (Size is given only for struct types).
type UserField struct {
	Type, Name string
	Size       int
}

// String renders the field as user_events lists it.
func (f UserField) String() string {
	s := f.Type + " " + f.Name
	if f.Size > 0 {
		s += " " + strconv.Itoa(f.Size)
	}
	return s
}

// UserFields renders a user event's fields as dynamic_events lists them:
// "TYPE NAME; TYPE NAME".
func (p *Probe) UserFields() string {
	var parts []string
	for _, f := range p.Fields {
		parts = append(parts, f.String())
	}
	return strings.Join(parts, "; ")
}

// GroupOrDefault is Group, or the group the kernel gives the event.
func (p *Probe) GroupOrDefault() string {
	if p.Group != "" {
		return p.Group
	}
	return p.Kind.DefaultGroup()
}

// ArgName is the field name the kernel gives the i-th (0-based) argument:
// its NAME; else, for a BTF parameter name without members, that name
// (kernels with BTF arguments name the field after it); else arg<i+1>.
func (p *Probe) ArgName(i int) string {
	a := p.Args[i]
	if a.Name != "" {
		return a.Name
	}
	if v, ok := a.Expr.(Var); ok && len(v.Fields) == 0 && !strings.HasPrefix(v.Name, "$") {
		return v.Name
	}
	return "arg" + strconv.Itoa(i+1)
}

// Place renders where the probe sits, as the line writes it: the spelling
// kept from a hand-written line (Location.Place), else the kind's canonical
// form: Location.String for kprobes and uprobes, FUNC or FUNC%return for
// fprobes, the tracepoint for tprobes, SYSTEM.EVENT for eprobes.
func (p *Probe) Place() string {
	if p.Target.Place != "" {
		return p.Target.Place
	}
	return p.canonicalPlace()
}

func (p *Probe) canonicalPlace() string {
	switch p.Kind {
	case Fprobe:
		if p.Return {
			return p.Target.Symbol + "%return"
		}
		return p.Target.Symbol
	case Tprobe:
		return p.Target.Symbol
	case Eprobe:
		return p.Target.Event.String()
	}
	return p.Target.canonical()
}

// KeepPlace records written as the place's spelling when it differs from
// the canonical rendering of the probe's fields; used by the parser, so
// that a line prints back as written and a line gprobe wrote parses to a
// Location without one.
func (p *Probe) KeepPlace(written string) {
	p.Target.Place = ""
	if written != p.canonicalPlace() {
		p.Target.Place = written
	}
}

// EventID names a trace event: an eprobe's attached event.
type EventID struct{ System, Name string }

// String is SYSTEM.EVENT, as dynamic_events lists an eprobe's attached event.
func (e EventID) String() string { return e.System + "." + e.Name }

// ParseEventID reads SYSTEM/EVENT (or SYSTEM:EVENT), as a user names a
// trace event (sched/sched_switch); ok is false for anything else.
func ParseEventID(s string) (id EventID, ok bool) {
	sys, name, ok := strings.Cut(s, "/")
	if !ok {
		sys, name, ok = strings.Cut(s, ":")
	}
	if !ok || sys == "" || name == "" || strings.ContainsAny(s, " \t") {
		return EventID{}, false
	}
	return EventID{System: sys, Name: name}, true
}

// Location is where a probe sits. Kernel probes use Symbol+Offset (with
// Module for module symbols, or Address for absolute addresses); user-space
// probes use Path+Offset, where Offset is a file offset, with an optional
// reference counter (a USDT semaphore) at file offset RefCtr. fprobes sit on
// the function Symbol, tprobes on the tracepoint Symbol, eprobes on the
// trace event Event.
type Location struct {
	Module  string  // kernel module name, "" for vmlinux
	Symbol  string  // kernel symbol (function, or tracepoint name); "" with Address set means an absolute address
	Address uint64  // absolute kernel address when Symbol == ""
	Path    string  // user binary (uprobes)
	Offset  uint64  // bytes from Symbol, or file offset within Path
	Event   EventID // the event an eprobe is attached to

	RefCtr    uint64 // uprobe reference counter offset, when HasRefCtr
	HasRefCtr bool

	// Place is the place exactly as a hand-written line spelled it, when
	// that differs from the rendering of the fields above ("vfs_read" for
	// vfs_read+0, "vfs_read%return", "/bin/sh:0x1a0(0x20)",
	// "sched/sched_switch"). String and Probe.Place print it instead of the
	// fields; code that changes the fields clears it.
	Place string
}

// IsUprobe reports whether the location is in a user-space binary.
func (l Location) IsUprobe() bool { return l.Path != "" }

// String renders the place: Place when set, else the way perf probe 6.1
// writes it: "[MOD:]SYM+OFF" (decimal, +0 always printed), "[MOD:]0xADDR",
// or "PATH:0xOFF[(0xREF)]"; an eprobe's "SYSTEM.EVENT". (Probe.Place is the
// place as each kind writes it.)
func (l Location) String() string {
	if l.Place != "" {
		return l.Place
	}
	return l.canonical()
}

func (l Location) canonical() string {
	switch {
	case l.Event.System != "":
		return l.Event.String()
	case l.Path != "":
		s := l.Path + ":0x" + strconv.FormatUint(l.Offset, 16)
		if l.HasRefCtr {
			s += "(0x" + strconv.FormatUint(l.RefCtr, 16) + ")"
		}
		return s
	case l.Symbol == "":
		return modPrefix(l.Module) + "0x" + strconv.FormatUint(l.Address, 16)
	default:
		return modPrefix(l.Module) + l.Symbol + "+" + strconv.FormatUint(l.Offset, 10)
	}
}

// Canonical reports whether the place is the rendering of its fields (no
// hand-written spelling kept).
func (l Location) Canonical() bool { return l.Place == "" }

func modPrefix(m string) string {
	if m == "" {
		return ""
	}
	return m + ":"
}

// FetchArg is one fetch argument: NAME=EXPR:TYPE. Name and Type may be empty;
// an argument without a name is named arg<N> by the kernel. Type includes an
// array suffix ("u8[16]").
type FetchArg struct {
	Name string
	Expr Fetch
	Type string
}

// String renders the argument as it appears in a probe definition.
func (a FetchArg) String() string {
	var b strings.Builder
	if a.Name != "" {
		b.WriteString(a.Name)
		b.WriteByte('=')
	}
	b.WriteString(a.Expr.String())
	if a.Type != "" {
		b.WriteByte(':')
		b.WriteString(a.Type)
	}
	return b.String()
}

// String renders the whole definition line (without a trailing newline),
// exactly as perf probe -D prints it for kprobes and uprobes, and as the
// kernel documents the other kinds: "f[N]:GROUP/EVENT FUNC[%return] ARGS",
// "t:GROUP/EVENT TRACEPOINT ARGS", "e:GROUP/EVENT SYSTEM.EVENT ARGS [if
// FILTER]".
func (p Probe) String() string {
	if p.Kind == UserEvent {
		// "u:NAME FIELD; FIELD", as user_event_show lists it.
		s := "u:" + p.Event
		if len(p.Fields) > 0 {
			s += " " + p.UserFields()
		}
		return s
	}
	var b strings.Builder
	switch {
	case p.Kind == Fprobe:
		b.WriteByte('f')
		if p.Return && p.MaxActive > 0 {
			b.WriteString(strconv.Itoa(p.MaxActive))
		}
	case p.Kind == Tprobe:
		b.WriteByte('t')
	case p.Kind == Eprobe:
		b.WriteByte('e')
	case p.Return && !strings.Contains(p.Target.Place, "%return"):
		// A place written SYM%return makes a return probe of a "p" line.
		b.WriteByte('r')
		if p.MaxActive > 0 {
			b.WriteString(strconv.Itoa(p.MaxActive))
		}
	default:
		b.WriteByte('p')
	}
	switch {
	case p.Group != "":
		b.WriteString(":" + p.Group + "/" + p.Event)
	case p.Event != "":
		b.WriteString(":" + p.Event)
	}
	b.WriteByte(' ')
	b.WriteString(p.Place())
	for _, a := range p.Args {
		b.WriteByte(' ')
		b.WriteString(a.String())
	}
	if p.Filter != "" {
		b.WriteString(" if " + p.Filter)
	}
	return b.String()
}
