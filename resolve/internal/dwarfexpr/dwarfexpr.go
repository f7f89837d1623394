// Package dwarfexpr translates a DWARF location expression, valid at one probe
// address, into a kprobe fetch argument, the way perf 6.1's probe-finder.c
// convert_variable_location() does.
//
// This is a translator, not an evaluator. Like perf, Translate decodes the whole
// expression (as libdw's __libdw_intern_expression does, so a malformed
// expression is rejected) but looks only at the FIRST operation:
//
//	DW_OP_addr A          → @SYM           (address; the caller names SYM — perf uses the DIE's name)
//	DW_OP_fbreg N         → frame base reg + (fb offset + N), address
//	DW_OP_breg0..31 N     → +N(%reg), address
//	DW_OP_bregx R N       → +N(%reg), address
//	DW_OP_reg0..31        → %reg, value
//	DW_OP_regx R          → %reg, value
//	anything else         → "Sorry, we don't support this variable location yet."
//
// The caller handles what perf decides before the expression: DW_AT_external
// ([StaticVar], "@name" whatever the location says), DW_AT_const_value
// ([ConstValue], "\N"), selecting the location-list entry for the address
// (perf retries later addresses up to high_pc for a formal parameter probed
// at the function's entry pc), and resolving DW_OP_call_frame_cfa frame
// bases through CFI ([ParseFrameBase]).
//
// Operands are read with internal/dwbuf, LEB128 numbers with libdw's limits
// ([dwbuf.Cursor.UlebLibdw]), so an overlong number decodes as perf sees it.
//
// Operations after the first are ignored, exactly as perf ignores them, so
// "DW_OP_breg5 0; DW_OP_stack_value" gives +0(%di) and
// "DW_OP_reg5; DW_OP_piece 4; ..." gives %di. [Location.Ops] tells the caller
// how many operations there were.
//
// [Pieces] reads a whole expression that composes a value from parts
// (DW_OP_piece): Go keeps its strings, slices and interfaces that way, in
// two or three registers, and its stack arguments at DW_OP_call_frame_cfa.
package dwarfexpr

import (
	"errors"
	"fmt"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/internal/dwbuf"
)

// Sentinel errors. Their text is perf's.
var (
	// ErrUnsupported: perf's -ENOTSUP from convert_variable_location, which
	// convert_variable prints as this message.
	ErrUnsupported = errors.New("Sorry, we don't support this variable location yet.")
	// ErrOptimizedOut: perf's -ENOENT (no location at the address, an empty
	// expression, or one libdw refuses to parse). perf prints
	// [NotFoundMessage] with the variable's name.
	ErrOptimizedOut = errors.New("Failed to find the location of the variable at this address.")
	// ErrMalformed marks an expression libdw would refuse to decode
	// (truncated operand, unknown opcode). Such errors also match
	// ErrOptimizedOut, which is how perf ends up reporting them.
	ErrMalformed = errors.New("malformed DWARF expression")
)

// NotFoundMessage is perf's print_var_not_found() text for varname.
func NotFoundMessage(varname string) string {
	return fmt.Sprintf("Failed to find the location of the '%s' variable at this address.\n"+
		" Perhaps it has been optimized out.\n"+
		" Use -V with the --range option to show '%s' location range.", varname, varname)
}

// UnsupportedError is a location perf does not support. Error() is always
// perf's user-visible message; Detail is perf's pr_debug line for it.
type UnsupportedError struct {
	Op     byte   // the first operation's opcode (or the frame base's)
	Detail string // e.g. "DW_OP a3 is not supported."
}

func (e *UnsupportedError) Error() string { return ErrUnsupported.Error() }
func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// RegisterError is a register number with no kprobe name on the arch. perf
// prints this text as a warning and then ErrUnsupported's message; the error
// matches both ErrUnsupported and arch.ErrUnknownRegister.
type RegisterError struct {
	Reg uint32
	Err error // from arch.KprobeRegister
}

func (e *RegisterError) Error() string   { return e.Err.Error() }
func (e *RegisterError) Unwrap() []error { return []error{e.Err, ErrUnsupported} }

// MalformedError is an expression libdw would refuse to parse.
type MalformedError struct {
	Off    int // byte offset of the offending operation
	Op     byte
	Reason string
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("malformed DWARF expression: %s at offset %d (opcode 0x%02x)", e.Reason, e.Off, e.Op)
}
func (e *MalformedError) Unwrap() []error { return []error{ErrMalformed, ErrOptimizedOut} }

// Frame base kinds.
const (
	// FrameBaseNone: no usable DW_AT_frame_base at the address (absent,
	// empty, undefined CFA, or a first operation perf cannot use). fbreg
	// then fails with ErrUnsupported, as perf does with fb_ops == NULL.
	FrameBaseNone = iota
	// FrameBaseReg: DW_OP_regN/DW_OP_bregN/regx/bregx: register + offset
	// (offset 0 for the regN forms).
	FrameBaseReg
	// FrameBaseCFA: DW_OP_call_frame_cfa, resolved by the caller through
	// CFI to register + offset (libdw's dwarf_frame_cfa gives
	// DW_OP_bregx reg off for a def_cfa rule).
	FrameBaseCFA
)

// FrameBase describes DW_AT_frame_base at the probe address.
type FrameBase struct {
	Kind   int
	Reg    int
	Offset int64
}

// Location is the translation of one expression.
type Location struct {
	Fetch probe.Fetch // probe.Reg("di"), probe.Mem{Off: -16, Inner: probe.Reg("bp")}, probe.Symbol{}
	// IsAddress: the expression yields the variable's address (fbreg, breg,
	// bregx, addr); callers add a dereference level (perf: ref = true).
	// For the register forms Fetch is then a probe.Mem; for DW_OP_addr it
	// is a probe.Symbol.
	IsAddress bool
	// Symbol is the name for DW_OP_addr, empty until the caller calls
	// SetSymbol (perf uses the variable DIE's own name: "@name").
	Symbol string
	Addr   uint64 // DW_OP_addr operand
	Op     byte   // first opcode
	Ops    int    // number of operations in the expression; perf ignores all but the first
}

// SetSymbol names a DW_OP_addr location: Symbol and Fetch become "@name".
func (l *Location) SetSymbol(name string) {
	l.Symbol = name
	if _, ok := l.Fetch.(probe.Symbol); ok {
		l.Fetch = probe.Symbol{Name: name}
	}
}

// StaticVar is perf's translation of a variable with DW_AT_external, which
// convert_variable_location checks before looking at DW_AT_location at all:
// "@name" (address class; perf prints "@name+0" once the caller's deref level
// is folded in).
func StaticVar(name string) *Location {
	return &Location{Fetch: probe.Symbol{Name: name}, IsAddress: true, Symbol: name, Op: opAddr}
}

// ConstValue is perf's translation of DW_AT_const_value (checked before
// DW_AT_location, only when the kernel supports immediates): "\N".
func ConstValue(v int64) *Location {
	return &Location{Fetch: probe.Imm(v)}
}

// Format renders the fetch part ("%di", "-16(%bp)", "@sym").
func Format(l *Location) string {
	if l == nil || l.Fetch == nil {
		return ""
	}
	return l.Fetch.String()
}

// DWARF opcodes used here (DWARF 5 + GNU extensions that libdw decodes).
const (
	opAddr              = 0x03
	opDeref             = 0x06
	opConst1u           = 0x08
	opConst1s           = 0x09
	opConst2u           = 0x0a
	opConst2s           = 0x0b
	opConst4u           = 0x0c
	opConst4s           = 0x0d
	opConst8u           = 0x0e
	opConst8s           = 0x0f
	opConstu            = 0x10
	opConsts            = 0x11
	opDup               = 0x12
	opPick              = 0x15
	opPlusUconst        = 0x23
	opBra               = 0x28
	opNe                = 0x2e
	opSkip              = 0x2f
	opLit0              = 0x30
	opReg0              = 0x50
	opReg31             = 0x6f
	opBreg0             = 0x70
	opBreg31            = 0x8f
	opRegx              = 0x90
	opFbreg             = 0x91
	opBregx             = 0x92
	opPiece             = 0x93
	opDerefSize         = 0x94
	opXderefSize        = 0x95
	opNop               = 0x96
	opPushObjectAddress = 0x97
	opCall2             = 0x98
	opCall4             = 0x99
	opCallRef           = 0x9a
	opFormTLSAddress    = 0x9b
	opCallFrameCFA      = 0x9c
	opBitPiece          = 0x9d
	opImplicitValue     = 0x9e
	opStackValue        = 0x9f
	opImplicitPointer   = 0xa0
	opAddrx             = 0xa1
	opConstx            = 0xa2
	opEntryValue        = 0xa3
	opConstType         = 0xa4
	opRegvalType        = 0xa5
	opDerefType         = 0xa6
	opXderefType        = 0xa7
	opConvert           = 0xa8
	opReinterpret       = 0xa9
	opGNUPushTLSAddress = 0xe0
	opGNUUninit         = 0xf0
	opGNUImplicitPtr    = 0xf2
	opGNUEntryValue     = 0xf3
	opGNUConstType      = 0xf4
	opGNURegvalType     = 0xf5
	opGNUDerefType      = 0xf6
	opGNUConvert        = 0xf7
	opGNUReinterpret    = 0xf9
	opGNUParameterRef   = 0xfa
	opGNUAddrIndex      = 0xfb
	opGNUConstIndex     = 0xfc
	opGNUVariableValue  = 0xfd
)

// Op is one decoded operation (libdw's Dwarf_Op).
type Op struct {
	Atom    byte
	Number  uint64
	Number2 uint64
	Offset  int // byte offset in the expression
}

// RefSize is the size of DW_FORM_ref_addr-style operands
// (DW_OP_call_ref, DW_OP_implicit_pointer): 32-bit DWARF is assumed.
const RefSize = 4

// Decode splits expr into operations with libdw's rules. addrSize is the CU
// address size (4 or 8) used by DW_OP_addr.
func Decode(expr []byte, addrSize int) ([]Op, error) {
	var ops []Op
	// Operands are little-endian: only little-endian targets are supported.
	d := dwbuf.Cursor{Data: expr}
	for d.Pos < len(expr) {
		start := d.Pos
		atom := d.U8()
		o := Op{Atom: atom, Offset: start}
		bad := func(reason string) error {
			return &MalformedError{Off: start, Op: atom, Reason: reason}
		}
		switch {
		case atom == opAddr:
			if addrSize != 4 && addrSize != 8 {
				return nil, bad(fmt.Sprintf("address size %d", addrSize))
			}
			o.Number = d.Uint(addrSize)
		case atom == opCallRef || atom == opGNUVariableValue:
			o.Number = d.Uint(RefSize)
		case atom == opDeref || (atom >= opDup && atom <= 0x14) || // dup drop over
			(atom >= 0x16 && atom <= 0x22) || // swap rot xderef abs and div minus mod mul neg not or plus
			(atom >= 0x24 && atom <= 0x27) || // shl shr shra xor
			(atom >= 0x29 && atom <= opNe) || // eq ge gt le lt ne
			(atom >= opLit0 && atom <= opReg31) ||
			atom == opNop || atom == opPushObjectAddress || atom == opCallFrameCFA ||
			atom == opFormTLSAddress || atom == opGNUPushTLSAddress ||
			atom == opStackValue || atom == opGNUUninit:
			// no operand
		case atom == opConst1u || atom == opPick || atom == opDerefSize || atom == opXderefSize:
			o.Number = uint64(d.U8())
		case atom == opConst1s:
			o.Number = uint64(int64(int8(d.U8())))
		case atom == opConst2u:
			o.Number = uint64(d.U16())
		case atom == opConst2s || atom == opSkip || atom == opBra || atom == opCall2:
			o.Number = uint64(int64(int16(d.U16())))
		case atom == opConst4u:
			o.Number = uint64(d.U32())
		case atom == opConst4s || atom == opCall4 || atom == opGNUParameterRef:
			o.Number = uint64(int64(int32(d.U32())))
		case atom == opConst8u || atom == opConst8s:
			o.Number = d.U64()
		case atom == opConstu || atom == opPlusUconst || atom == opRegx || atom == opPiece ||
			atom == opConvert || atom == opGNUConvert || atom == opReinterpret ||
			atom == opGNUReinterpret || atom == opAddrx || atom == opGNUAddrIndex ||
			atom == opConstx || atom == opGNUConstIndex:
			o.Number = d.UlebLibdw()
		case atom == opConsts || (atom >= opBreg0 && atom <= opBreg31) || atom == opFbreg:
			o.Number = uint64(d.SlebLibdw())
		case atom == opBregx:
			o.Number = d.UlebLibdw()
			o.Number2 = uint64(d.SlebLibdw())
		case atom == opBitPiece || atom == opRegvalType || atom == opGNURegvalType:
			o.Number = d.UlebLibdw()
			o.Number2 = d.UlebLibdw()
		case atom == opImplicitValue || atom == opEntryValue || atom == opGNUEntryValue:
			o.Number = d.UlebLibdw()
			d.Skip(o.Number)
		case atom == opImplicitPointer || atom == opGNUImplicitPtr:
			o.Number = d.Uint(RefSize)
			o.Number2 = uint64(d.SlebLibdw())
		case atom == opDerefType || atom == opGNUDerefType || atom == opXderefType:
			o.Number = uint64(d.U8())
			o.Number2 = d.UlebLibdw()
		case atom == opConstType || atom == opGNUConstType:
			o.Number = d.UlebLibdw()
			d.Skip(uint64(d.U8()))
		default:
			return nil, bad("unknown opcode")
		}
		if d.Err() != nil {
			return nil, bad("truncated operand")
		}
		ops = append(ops, o)
	}
	return ops, nil
}

// ParseFrameBase turns a DW_AT_frame_base expression (already selected for
// the probe address) into a FrameBase the way perf's call_probe_finder keeps
// fb_ops. A single DW_OP_call_frame_cfa gives Kind FrameBaseCFA with needCFA
// set: the caller resolves the CFA through CFI and fills Reg/Offset (or
// uses FrameBaseNone when CFI has no rule). Anything perf cannot base an
// fbreg on gives FrameBaseNone.
func ParseFrameBase(expr []byte, addrSize int) (fb FrameBase, needCFA bool, err error) {
	ops, err := Decode(expr, addrSize)
	if err != nil {
		return FrameBase{}, false, err
	}
	if len(ops) == 0 {
		return FrameBase{}, false, nil
	}
	o := ops[0]
	switch {
	case o.Atom >= opReg0 && o.Atom <= opReg31:
		return FrameBase{Kind: FrameBaseReg, Reg: int(o.Atom - opReg0)}, false, nil
	case o.Atom >= opBreg0 && o.Atom <= opBreg31:
		return FrameBase{Kind: FrameBaseReg, Reg: int(o.Atom - opBreg0), Offset: int64(o.Number)}, false, nil
	case o.Atom == opRegx:
		return FrameBase{Kind: FrameBaseReg, Reg: int(uint32(o.Number))}, false, nil
	case o.Atom == opBregx:
		return FrameBase{Kind: FrameBaseReg, Reg: int(uint32(o.Number)), Offset: int64(o.Number2)}, false, nil
	case o.Atom == opCallFrameCFA && len(ops) == 1:
		return FrameBase{Kind: FrameBaseCFA}, true, nil
	}
	return FrameBase{}, false, nil
}

// Translate converts expr, the location expression of a variable at the probe
// address, into a fetch argument for isa. fb is the function's frame base at
// that address; addrSize is the CU address size.
//
// Result: (loc, nil) or (nil, err) where err matches ErrUnsupported,
// ErrOptimizedOut (and ErrMalformed), or is an arch error (disasm/arch).
func Translate(expr []byte, isa arch.Arch, fb FrameBase, addrSize int) (*Location, error) {
	ops, err := Decode(expr, addrSize)
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		// perf: nops == 0 → -ENOENT.
		return nil, ErrOptimizedOut
	}
	return translateOp(ops[0], len(ops), isa, fb)
}

// translateOp is Translate's work on the expression's first operation o,
// of nops.
func translateOp(o Op, nops int, isa arch.Arch, fb FrameBase) (*Location, error) {
	loc := &Location{Op: o.Atom, Ops: nops}
	if o.Atom == opAddr {
		loc.IsAddress = true
		loc.Addr = o.Number
		loc.Fetch = probe.Symbol{}
		return loc, nil
	}

	var (
		offs int64
		ref  bool
		regn uint32
	)
	atom, num, num2 := o.Atom, o.Number, o.Number2
	if atom == opFbreg {
		ref = true
		offs = int64(num)
		switch fb.Kind {
		case FrameBaseReg, FrameBaseCFA:
			// libdw hands perf DW_OP_bregx reg off (CFA) or the frame
			// base's own breg/reg op; a reg op with offset 0 behaves the
			// same since ref is already set.
			atom, num, num2 = opBregx, uint64(fb.Reg), uint64(fb.Offset)
			if fb.Reg < 0 {
				return nil, &UnsupportedError{Op: opFbreg, Detail: "frame base register unknown"}
			}
		default:
			return nil, &UnsupportedError{Op: opFbreg, Detail: "no frame base"}
		}
	}
	switch {
	case atom >= opBreg0 && atom <= opBreg31:
		regn = uint32(atom - opBreg0)
		offs += int64(num)
		ref = true
	case atom >= opReg0 && atom <= opReg31:
		regn = uint32(atom - opReg0)
	case atom == opBregx:
		regn = uint32(num)
		offs += int64(num2)
		ref = true
	case atom == opRegx:
		regn = uint32(num)
	default:
		return nil, &UnsupportedError{Op: atom, Detail: fmt.Sprintf("DW_OP %x is not supported.", atom)}
	}
	name, err := arch.KprobeRegister(isa, int(regn))
	if err != nil {
		if errors.Is(err, arch.ErrUnknownRegister) {
			return nil, &RegisterError{Reg: regn, Err: err}
		}
		return nil, err
	}
	if ref {
		loc.IsAddress = true
		loc.Fetch = probe.Mem{Off: offs, Inner: probe.Reg(name)}
	} else {
		loc.Fetch = probe.Reg(name)
	}
	return loc, nil
}

// Piece is one part of a value a location composes with DW_OP_piece: Size
// bytes at Loc, or a part that is not available at the address (Loc nil:
// the compiler did not keep it there).
type Piece struct {
	Size int64
	Loc  *Location
	// Unreadable names the register that holds the part when a probe
	// cannot read it (a floating-point or vector register: "xmm0", "v1");
	// Loc is nil then.
	Unreadable string
}

// Pieces translates a location expression in full, where Translate reads
// only its first operation as perf does: a value split into pieces
// ("DW_OP_reg0; DW_OP_piece 8; DW_OP_reg3; DW_OP_piece 8", a Go string in
// RAX and RBX) comes back as one Piece per part, in order; an expression
// without pieces as one Piece of Size 0 (the whole value). A part in a
// floating-point or vector register is named in Piece.Unreadable. Each part is a
// register (the value), an address (DW_OP_bregN, bregx, fbreg, addr, or
// DW_OP_call_frame_cfa, optionally plus DW_OP_plus_uconst N or
// DW_OP_consts N; DW_OP_plus), or empty. cfa is the canonical frame
// address at the probe address, resolved by the caller through CFI
// (FrameBaseNone when unknown), for DW_OP_call_frame_cfa: Go's address of
// its stack-assigned arguments. A part computed any other way is an
// *UnsupportedError (a probe fetches registers and memory, it computes
// nothing).
func Pieces(expr []byte, isa arch.Arch, fb, cfa FrameBase, addrSize int) ([]Piece, error) {
	ops, err := Decode(expr, addrSize)
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, ErrOptimizedOut
	}
	var out []Piece
	var part []Op
	whole := true
	for _, o := range ops {
		if o.Atom != opPiece {
			part = append(part, o)
			continue
		}
		whole = false
		p := Piece{Size: int64(o.Number)}
		if len(part) > 0 {
			if p.Unreadable = vectorRegister(part, isa); p.Unreadable == "" {
				if p.Loc, err = simpleLocation(part, isa, fb, cfa); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, p)
		part = nil
	}
	if whole {
		if v := vectorRegister(part, isa); v != "" {
			return []Piece{{Unreadable: v}}, nil
		}
		loc, err := simpleLocation(part, isa, fb, cfa)
		if err != nil {
			return nil, err
		}
		return []Piece{{Loc: loc}}, nil
	}
	if len(part) > 0 {
		return nil, &UnsupportedError{Op: part[0].Atom, Detail: "operations after the last DW_OP_piece"}
	}
	return out, nil
}

// vectorRegister names the floating-point or vector register a part is
// in (DW_OP_regN or DW_OP_regx alone), or is "".
func vectorRegister(ops []Op, isa arch.Arch) string {
	if len(ops) != 1 {
		return ""
	}
	reg := -1
	switch o := ops[0]; {
	case o.Atom >= opReg0 && o.Atom <= opReg31:
		reg = int(o.Atom - opReg0)
	case o.Atom == opRegx:
		reg = int(uint32(o.Number))
	}
	name, _ := arch.VectorRegister(isa, reg)
	return name
}

// simpleLocation is one part of Pieces: a register, or an address.
func simpleLocation(ops []Op, isa arch.Arch, fb, cfa FrameBase) (*Location, error) {
	o := ops[0]
	var loc *Location
	rest := ops[1:]
	switch {
	case o.Atom == opCallFrameCFA:
		if cfa.Kind == FrameBaseNone || cfa.Reg < 0 {
			return nil, &UnsupportedError{Op: o.Atom, Detail: "no call frame information at the address"}
		}
		name, err := arch.KprobeRegister(isa, cfa.Reg)
		if err != nil {
			return nil, &RegisterError{Reg: uint32(cfa.Reg), Err: err}
		}
		loc = &Location{Fetch: probe.Mem{Off: cfa.Offset, Inner: probe.Reg(name)}, IsAddress: true, Op: o.Atom, Ops: len(ops)}
	default:
		l, err := translateOp(o, len(ops), isa, fb)
		if err != nil {
			return nil, err
		}
		loc = l
	}
	// DW_OP_plus_uconst N, or DW_OP_consts N; DW_OP_plus (Go: the CFA plus
	// an argument's offset), on an address.
	switch {
	case len(rest) == 0:
	case len(rest) == 1 && rest[0].Atom == opPlusUconst && loc.IsAddress:
		loc.Fetch = addOffset(loc.Fetch, int64(rest[0].Number))
	case len(rest) == 2 && (rest[0].Atom == opConsts || rest[0].Atom == opConstu) && rest[1].Atom == 0x22 && loc.IsAddress:
		loc.Fetch = addOffset(loc.Fetch, int64(rest[0].Number))
	default:
		return nil, &UnsupportedError{Op: rest[0].Atom, Detail: fmt.Sprintf("DW_OP %x after a location is not supported.", rest[0].Atom)}
	}
	return loc, nil
}

func addOffset(f probe.Fetch, off int64) probe.Fetch {
	if m, ok := f.(probe.Mem); ok {
		m.Off += off
		return m
	}
	return f
}
