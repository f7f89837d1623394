// Package probedef parses kprobe_events / uprobe_events definition lines and
// checks them against the kernel's probe-event grammar and limits before
// anything is written to tracefs.
//
// The checks follow the kernel's own parser (kernel/trace/trace_kprobe.c,
// trace_uprobe.c and trace_probe.c, Linux 6.1) step by step and in the same
// order, so a line the kernel would refuse is refused here with the kernel's
// message and the kernel's error position (the column of the `^` the kernel
// writes to error_log). Checks that need the running kernel's state (does a
// symbol exist, is it unique, which probes already exist) run only when
// [Options] supplies that state.
package probedef

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/disasm"
	"github.com/gprobe/gprobe/emit/probe"
)

// ErrSyntax is wrapped by every *Error.
var ErrSyntax = errors.New("invalid probe definition")

// Kind is the kind of dynamic event a line defines.
type Kind int

const (
	Kprobe Kind = iota
	Uprobe
)

func (k Kind) String() string {
	if k == Uprobe {
		return "uprobe"
	}
	return "kprobe"
}

// File is the tracefs file that takes this kind of line.
func (k Kind) File() string {
	if k == Uprobe {
		return "uprobe_events"
	}
	return "kprobe_events"
}

// Subsystem is the error_log prefix of this kind.
func (k Kind) Subsystem() string {
	if k == Uprobe {
		return "trace_uprobe"
	}
	return "trace_kprobe"
}

// Def is one parsed definition (or deletion) line.
type Def struct {
	Kind      Kind
	Delete    bool // "-:GRP/EVENT"
	Return    bool // r, or a %return place
	MaxActive int  // r<N>
	// Group and Event as written; empty when the line leaves them to the
	// kernel (which then uses kprobes/uprobes and a generated name).
	Group, Event string
	Place        string // the place token as written
	// Kernel places.
	Module, Symbol string
	Address        uint64 // when Symbol == ""
	// User places.
	Path      string
	RefCtr    uint64
	HasRefCtr bool
	Offset    uint64 // from Symbol, or file offset in Path
	Args      []Arg
}

// Arg is one fetch argument NAME=BODY:TYPE.
type Arg struct {
	Name  string // as written, "" when omitted (the kernel names it arg<N>)
	Fetch string // the fetch part ("+0(%di)")
	Type  string // "" = default
	Count int    // TYPE[Count], 0 when not an array
	Comm  string // the text after NAME= (fetch and type), as the kernel keeps it
}

// EffectiveName is the field name the kernel gives the i-th (0-based) argument.
func (a Arg) EffectiveName(i int) string {
	if a.Name != "" {
		return a.Name
	}
	return "arg" + strconv.Itoa(i+1)
}

// GroupOrDefault is Group, or the kernel's default group for the kind.
func (d *Def) GroupOrDefault() string {
	if d.Group != "" {
		return d.Group
	}
	if d.Kind == Uprobe {
		return "uprobes"
	}
	return "kprobes"
}

// String renders the definition as a kprobe_events/uprobe_events line.
// Places and arguments keep the text they were written with.
func (d *Def) String() string {
	var b strings.Builder
	switch {
	case d.Delete:
		b.WriteString("-")
	case d.Return && !strings.Contains(d.Place, "%return"):
		b.WriteString("r")
		if d.MaxActive > 0 {
			b.WriteString(strconv.Itoa(d.MaxActive))
		}
	default:
		b.WriteString("p")
	}
	if d.Group != "" || d.Event != "" || d.Delete {
		b.WriteString(":")
		if d.Group != "" {
			b.WriteString(d.Group + "/")
		}
		b.WriteString(d.Event)
	}
	if d.Place != "" {
		b.WriteString(" " + d.Place)
	}
	for _, a := range d.Args {
		b.WriteString(" ")
		if a.Name != "" {
			b.WriteString(a.Name + "=")
		}
		b.WriteString(a.Comm)
	}
	return b.String()
}

// Probe converts the definition into the probe value the rest of gprobe
// uses; arguments are carried as raw fetch text.
func (d *Def) Probe() probe.Probe {
	p := probe.Probe{Group: d.GroupOrDefault(), Event: d.Event, Return: d.Return, MaxActive: d.MaxActive}
	if d.Kind == Uprobe {
		p.Target = probe.Location{Path: d.Path, Offset: d.Offset}
	} else {
		p.Target = probe.Location{Module: d.Module, Symbol: d.Symbol, Address: d.Address, Offset: d.Offset}
	}
	for _, a := range d.Args {
		p.Args = append(p.Args, probe.FetchArg{Name: a.Name, Expr: probe.Raw(a.Fetch), Type: typeWithCount(a)})
	}
	return p
}

func typeWithCount(a Arg) string {
	if a.Count > 0 {
		return a.Type + "[" + strconv.Itoa(a.Count) + "]"
	}
	return a.Type
}

// Error is a refused line: the kernel's message and the error position the
// kernel would log.
type Error struct {
	Kind    Kind
	Code    string // the kernel's error name, "BAD_REG_NAME"
	Text    string // the kernel's message, "Invalid register name"
	Command string // argv joined with single spaces
	Pos     int    // caret offset in Command
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %q: %s", e.Kind.File(), e.Command, Describe(e.Command, e.Pos, e.Text))
}

func (e *Error) Unwrap() error { return ErrSyntax }

// ErrorLog renders the error as the kernel writes it to error_log (without
// the timestamp):
//
//	trace_kprobe: error: Invalid register name
//	  Command: p vfs_read %none_reg
//	                      ^
func (e *Error) ErrorLog() string {
	return fmt.Sprintf("%s: error: %s\n  Command: %s\n%s^", e.Kind.Subsystem(), e.Text, e.Command,
		strings.Repeat(" ", len("  Command: ")+e.Pos))
}

// Describe is a one-line description of an error at byte pos of command:
// the message, then the part of the line it concerns with a ^ at the error
// position (`Invalid register name (argument 1 "^%none_reg")`).
func Describe(command string, pos int, text string) string {
	toks := strings.Split(command, " ")
	start := 0
	for i, t := range toks {
		end := start + len(t)
		if pos >= start && pos <= end && !(pos == end && i+1 < len(toks)) {
			return fmt.Sprintf("%s (%s %q)", text, partName(i), t[:pos-start]+"^"+t[pos-start:])
		}
		start = end + 1
	}
	return fmt.Sprintf("%s (after the last argument of %q)", text, command)
}

func partName(i int) string {
	switch i {
	case 0:
		return "event"
	case 1:
		return "probe place"
	}
	return "argument " + strconv.Itoa(i-1)
}

// Features are probe-event capabilities a kernel advertises in tracefs
// README (see emit/tracefs.ParseFeatures).
type Features struct {
	MultiProbe      bool // "Create/append/": same GRP/EVENT appends a probe
	HexTypes        bool // "type: ... x8/16/32/64,"
	KretprobeOffset bool // "place (kretprobe): "
	RefCtr          bool // "ref_ctr_offset": uprobe (0xREF) semaphores
	UserAccess      bool // "u]<offset>": +u deref and ustring
	Immediates      bool // "\imm-value,"
	ImmString       bool // "\"imm-string\""
	MaxActive       bool // "r[maxactive]"
	ArgN            bool // "$arg<N>"
	ReturnSuffix    bool // "%return" in a place: SYM%return / PATH:OFF%return
	Arrays          bool // "<type>\[<array-size>\]"
	// Types lists the fetch types of README's "type:" lines (nil: all
	// types gprobe knows are allowed).
	Types []string
}

// AllFeatures is what Linux 6.1 offers; the default when README is unknown.
var AllFeatures = Features{MultiProbe: true, HexTypes: true, KretprobeOffset: true, RefCtr: true,
	UserAccess: true, Immediates: true, ImmString: true, MaxActive: true, ArgN: true,
	ReturnSuffix: true, Arrays: true}

// Options give the checks the state of the kernel the line is meant for.
// The zero value checks syntax for Linux 6.1 on the running architecture.
type Options struct {
	// Features of the target kernel; nil means AllFeatures.
	Features *Features
	// Arch selects the register names; the zero value means this machine.
	// An architecture gprobe does not know accepts any register name.
	Arch disasm.Arch
	// Symbols, when set, counts the kernel text symbols named sym
	// (/proc/kallsyms), for BAD_PROBE_ADDR and NON_UNIQ_SYMBOL.
	Symbols func(sym string) int
	// Stat checks uprobe paths; nil means os.Stat. NoStat skips the check
	// (for lines meant for another machine).
	Stat   func(path string) (fs.FileInfo, error)
	NoStat bool
	// Existing probes of the target kernel, for the multi-probe checks
	// (DIFF_PROBE_TYPE, DIFF_ARG_TYPE, SAME_PROBE).
	Existing []*Def
}

func (o *Options) features() *Features {
	if o == nil || o.Features == nil {
		return &AllFeatures
	}
	return o.Features
}
