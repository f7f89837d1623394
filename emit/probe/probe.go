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
)

// Kinds lists every Kind, in the order tools list events.
var Kinds = []Kind{Kprobe, Uprobe}

func (k Kind) String() string {
	if k == Uprobe {
		return "uprobe"
	}
	return "kprobe"
}

// File is the tracefs file that takes this kind's definitions.
func (k Kind) File() string {
	if k == Uprobe {
		return "uprobe_events"
	}
	return "kprobe_events"
}

// Subsystem is the prefix of this kind's error_log entries.
func (k Kind) Subsystem() string {
	if k == Uprobe {
		return "trace_uprobe"
	}
	return "trace_kprobe"
}

// DefaultGroup is the group the kernel gives an event defined without one.
func (k Kind) DefaultGroup() string {
	if k == Uprobe {
		return "uprobes"
	}
	return "kprobes"
}

// Probe is one trace event definition: one address, one line of
// kprobe_events or uprobe_events.
type Probe struct {
	Kind Kind
	// Group and Event name the event; either may be empty in a line written
	// by hand ("p vfs_read", "p:myev vfs_read"): the kernel then supplies
	// them (GroupOrDefault).
	Group, Event string
	Return       bool // a return probe (r:, or a place written with %return)
	MaxActive    int  // r<N>; 0 = kernel default (perf never prints it)
	Target       Location
	Args         []FetchArg
}

// GroupOrDefault is Group, or the group the kernel gives the event.
func (p *Probe) GroupOrDefault() string {
	if p.Group != "" {
		return p.Group
	}
	return p.Kind.DefaultGroup()
}

// ArgName is the field name the kernel gives the i-th (0-based) argument:
// its NAME, or arg<i+1>.
func (p *Probe) ArgName(i int) string {
	if n := p.Args[i].Name; n != "" {
		return n
	}
	return "arg" + strconv.Itoa(i+1)
}

// Location is where a probe sits. Kernel probes use Symbol+Offset (with
// Module for module symbols, or Address for absolute addresses); user-space
// probes use Path+Offset, where Offset is a file offset, with an optional
// reference counter (a USDT semaphore) at file offset RefCtr.
type Location struct {
	Module  string // kernel module name, "" for vmlinux
	Symbol  string // kernel symbol; "" with Address set means an absolute address
	Address uint64 // absolute kernel address when Symbol == ""
	Path    string // user binary (uprobes)
	Offset  uint64 // bytes from Symbol, or file offset within Path

	RefCtr    uint64 // uprobe reference counter offset, when HasRefCtr
	HasRefCtr bool

	// Place is the place exactly as a hand-written line spelled it, when
	// that differs from the rendering of the fields above ("vfs_read" for
	// vfs_read+0, "vfs_read%return", "/bin/sh:0x1a0(0x20)"). String prints
	// it instead of the fields; code that changes the fields clears it.
	Place string
}

// IsUprobe reports whether the location is in a user-space binary.
func (l Location) IsUprobe() bool { return l.Path != "" }

// String renders the place: Place when set, else the way perf probe 6.1
// writes it: "[MOD:]SYM+OFF" (decimal, +0 always printed), "[MOD:]0xADDR",
// or "PATH:0xOFF[(0xREF)]".
func (l Location) String() string {
	if l.Place != "" {
		return l.Place
	}
	return l.canonical()
}

func (l Location) canonical() string {
	switch {
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

// WithPlace returns l keeping written as its spelling when it differs from
// the rendering of l's fields; used by the parser, so that a line prints
// back as written and a line gprobe wrote parses to a Location without one.
func (l Location) WithPlace(written string) Location {
	l.Place = ""
	if written != l.canonical() {
		l.Place = written
	}
	return l
}

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
// exactly as perf probe -D prints it.
func (p Probe) String() string {
	var b strings.Builder
	switch {
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
	b.WriteString(p.Target.String())
	for _, a := range p.Args {
		b.WriteByte(' ')
		b.WriteString(a.String())
	}
	return b.String()
}
