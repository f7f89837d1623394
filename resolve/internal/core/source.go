package core

import (
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/spec"
)

// The debug-information sources a resolver asks, besides the image's symbol
// table (Image.Symbols): Debug describes code (source lines, scopes,
// variable locations at each address: DWARF, package finder), Prototypes
// describes functions and types without code (a function's parameters at
// its entry: BTF, package btfinfo). A new source of either kind is one
// package implementing the interface, chosen in the resolver's constructor.

// Debug is debug information that describes code (DWARF).
type Debug interface {
	// Places is perf's search for p's addresses through debug information
	// (debuginfo__find_trace_events): every address the point resolves
	// to, with p's arguments converted at each and the points renamed to
	// the symbols that hold them; none when nothing matched.
	Places(p *spec.Probe) ([]TracePoint, error)
	// Vars is -V: the variables that have a location at every address pp
	// resolves to.
	Vars(pp *spec.Point, opts VarsOptions) ([]VarList, error)
	// LineRange is -L: the probe-able lines of lr.
	LineRange(lr *spec.LineRange) (*lines.Listing, error)
	// PointAt is the probe point an address belongs to (FUNC:LINE@FILE or
	// FUNC+OFF@FILE, perf -l), nil when nothing is known there.
	PointAt(addr uint64) (*spec.Point, error)
	// EntryArgs converts args at the entry of the out-of-line function fn
	// (registers as the function sees them when it is called).
	EntryArgs(fn string, args []spec.Arg) ([]probe.FetchArg, error)
}

// Prototypes describes functions and types without their code (BTF): what
// a function's parameters are at its entry, and the members of structs.
type Prototypes interface {
	// EntryArgs resolves p's arguments at the entry of the function p
	// names (FUNC, or FUNC%return with arguments as written); what needs
	// more than a prototype (a line, an offset, a local) is an error
	// wrapping ErrNeedsDWARF.
	EntryArgs(p *spec.Probe) ([]probe.FetchArg, error)
	// Vars is -V at a function's entry: its parameters.
	Vars(pp *spec.Point) ([]VarList, error)
	// Functions lists the functions described, those match keeps, sorted.
	Functions(match func(string) bool) ([]string, error)
	// HasStruct says whether struct (or union) name is described.
	HasStruct(name string) error
	// StructArg resolves a's fields (a->member...) in the struct name, a
	// pointer to which is held in reg, for an argument of owner.
	StructArg(owner, name, reg string, a *spec.Arg) (probe.FetchArg, error)
}

// VarList is the -V answer for one probe address (perf's variable_list):
// the function and offset, and "TYPE\tNAME" entries sorted and
// deduplicated as perf's strlist keeps them.
type VarList struct {
	Symbol string
	Offset uint64
	Vars   []string
}

// VarsOptions tune -V.
type VarsOptions struct {
	Externs bool // --externs: the unit's global variables too
	// Range is perf's --range: every variable with a location anywhere
	// in the function, marked [VAL] (valid at the address), [INV] (not
	// there) or [EXT] (extern), with its location ranges.
	Range bool
}
