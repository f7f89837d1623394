package vars

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfexpr"
	"github.com/gprobe/gprobe/resolve/internal/symtab"
)

// errNoLocation is perf's -ENOENT/-EINVAL from convert_variable_location:
// reported as "Failed to find the location of the '%s' variable".
var errNoLocation = errors.New("no location")

// errOutOfRange marks a variable that -V --range lists as [INV]: it has a
// location in the function, but not at the probe address.
var errOutOfRange = errors.New("no location at this address")

// varLocation is perf's convert_variable_location. With t == nil it only
// checks that the variable can be converted at the address.
func (c *Scope) varLocation(vr *dwarf.Entry, t *core.TraceArg) error {
	if vr.AttrField(dwarf.AttrExternal) != nil {
		return c.staticVar(vr, t)
	}
	if f := vr.AttrField(dwarf.AttrConstValue); f != nil && c.Im.Opts.Features.Immediates {
		if t != nil {
			v, ok := f.Val.(int64)
			if !ok {
				return errNoLocation
			}
			t.Value = "\\" + strconv.FormatInt(v, 10)
		}
		return nil
	}
	fld := vr.AttrField(dwarf.AttrLocation)
	if fld == nil {
		return errNoLocation // perf: broken DIE (-EINVAL)
	}
	addr := c.Addr
	expr, ok, err := c.CU.Location(fld, addr)
	if err != nil {
		return err
	}
	// outOfRange is perf's -ERANGE for -V --range: a local variable with
	// no location at addr but one later in the function.
	var outOfRange error
	if !ok {
		// perf: a parameter probed at the function's entry may get its
		// location only after the mcount/fentry call; take the first
		// address up to high_pc where it has one. With --range, any local
		// variable is looked for that way.
		entry, hasEntry := c.Func.EntryPC, c.Func.HasEntryPC
		if !hasEntry {
			return errNoLocation
		}
		if c.showRange && vr.Tag == dwarf.TagVariable {
			outOfRange = errOutOfRange
		} else if addr != entry || vr.Tag != dwarf.TagFormalParameter {
			return errNoLocation
		}
		if c.Func.HighPC == 0 {
			return errNoLocation
		}
		for a := addr + 1; a <= c.Func.HighPC; a++ {
			if expr, ok, err = c.CU.Location(fld, a); err != nil {
				return err
			}
			if ok {
				break
			}
		}
		if !ok {
			return errNoLocation
		}
	}
	loc, err := dwarfexpr.Translate(expr, c.Im.Arch, c.fb, c.CU.AddrSize)
	var computed error
	if err == nil && loc.Ops > 1 {
		loc, err = c.multiOp(vr, expr, loc)
		if errors.Is(err, errComputed) {
			computed, err = err, nil // carry on as perf does, then report it
		}
	}
	if err != nil {
		var re *dwarfexpr.RegisterError
		if errors.As(err, &re) {
			c.Im.Warnf("Mapping for the register number %d missing on this architecture.", re.Reg)
		}
		if errors.Is(err, dwarfexpr.ErrUnsupported) || errors.As(err, new(*core.Error)) {
			return err
		}
		return errNoLocation
	}
	if outOfRange != nil {
		return outOfRange // only -V asks for ranges, and it passes no t
	}
	if _, isSym := loc.Fetch.(probe.Symbol); isSym {
		if err := c.staticVar(vr, t); err != nil {
			return err
		}
		return computed
	}
	if t == nil {
		return computed
	}
	switch fe := loc.Fetch.(type) {
	case probe.Reg:
		t.Value = fe.String()
	case probe.Mem:
		reg, ok := fe.Inner.(probe.Reg)
		if !ok {
			return dwarfexpr.ErrUnsupported
		}
		t.Value = reg.String()
		t.Refs = []core.Ref{{Off: fe.Off}}
	default:
		return dwarfexpr.ErrUnsupported
	}
	return computed
}

// Opcodes the multi-operation check and static addresses need.
const (
	opPiece        = 0x93
	opStackValue   = 0x9f
	opAddr         = 0x03
	opAddrx        = 0xa1
	opGNUAddrIndex = 0xfb
)

// multiOp checks an expression of several operations, of which perf
// translates only the first. "DW_OP_bregN 0; DW_OP_stack_value" is the
// register's value (perf dereferences it); a register piece is the
// register; anything else computes a value kprobes cannot compute (perf
// reads memory at the first operation's address instead).
func (c *Scope) multiOp(vr *dwarf.Entry, expr []byte, loc *dwarfexpr.Location) (*dwarfexpr.Location, error) {
	ops, err := dwarfexpr.Decode(expr, c.CU.AddrSize)
	if err != nil {
		return nil, err
	}
	last := ops[len(ops)-1].Atom
	switch {
	case !loc.IsAddress && last == opPiece:
		return loc, nil // DW_OP_regN; DW_OP_piece: the register holds the low part
	case len(ops) == 2 && last == opStackValue:
		if m, ok := loc.Fetch.(probe.Mem); ok && m.Off == 0 {
			return &dwarfexpr.Location{Fetch: m.Inner, Op: loc.Op, Ops: loc.Ops}, nil
		}
	}
	return loc, &core.Error{Msg: fmt.Sprintf("'%s' is computed at this address (%s): a probe can fetch registers and memory but not compute values.\n perf probe reads memory at %s instead, which is not the variable's value.",
		c.name(vr), describeOps(ops), dwarfexpr.Format(loc)), Err: errComputed}
}

// errComputed marks a variable whose value DWARF computes. It wraps
// core.ErrUnsupported; findVariable reports it after perf's own checks (fields,
// types), so that wherever perf refuses the argument anyway the answers
// agree.
var errComputed = fmt.Errorf("%w: computed value", core.ErrUnsupported)

// describeOps names an expression's operations for messages.
func describeOps(ops []dwarfexpr.Op) string {
	var parts []string
	for _, o := range ops {
		a := o.Atom
		switch {
		case a >= 0x50 && a <= 0x6f:
			parts = append(parts, fmt.Sprintf("DW_OP_reg%d", a-0x50))
		case a >= 0x70 && a <= 0x8f:
			parts = append(parts, fmt.Sprintf("DW_OP_breg%d %d", a-0x70, int64(o.Number)))
		case a == 0x91:
			parts = append(parts, fmt.Sprintf("DW_OP_fbreg %d", int64(o.Number)))
		case a == 0x03:
			parts = append(parts, fmt.Sprintf("DW_OP_addr %#x", o.Number))
		case a >= 0x30 && a <= 0x4f:
			parts = append(parts, fmt.Sprintf("DW_OP_lit%d", a-0x30))
		case a >= 0x08 && a <= 0x11:
			name := []string{"const1u", "const1s", "const2u", "const2s", "const4u", "const4s", "const8u", "const8s", "constu", "consts"}[a-0x08]
			parts = append(parts, fmt.Sprintf("DW_OP_%s %d", name, int64(o.Number)))
		default:
			name, ok := map[byte]string{0x06: "DW_OP_deref", 0x1c: "DW_OP_minus", 0x22: "DW_OP_plus", 0x23: "DW_OP_plus_uconst",
				0x93: "DW_OP_piece", 0x9f: "DW_OP_stack_value", 0xa3: "DW_OP_entry_value", 0xf3: "DW_OP_GNU_entry_value",
				0x94: "DW_OP_deref_size", 0x1a: "DW_OP_and", 0x1b: "DW_OP_div", 0x1d: "DW_OP_mod", 0x1e: "DW_OP_mul",
				0x1f: "DW_OP_neg", 0x20: "DW_OP_not", 0x21: "DW_OP_or", 0x25: "DW_OP_shr", 0x24: "DW_OP_shl", 0x26: "DW_OP_shra",
				0x27: "DW_OP_xor", 0x9e: "DW_OP_implicit_value", 0xa0: "DW_OP_implicit_pointer", 0xa8: "DW_OP_convert", 0x12: "DW_OP_dup"}[a]
			if !ok {
				name = fmt.Sprintf("DW_OP_%#x", a)
			}
			parts = append(parts, name)
		}
	}
	return strings.Join(parts, "; ")
}

// staticVar: perf's static_var label, "@name" with a zero-offset ref; in
// a user binary also the variable's address (core.TraceArg.Static).
func (c *Scope) staticVar(vr *dwarf.Entry, t *core.TraceArg) error {
	if t != nil {
		t.Value = "@" + c.name(vr)
		t.Refs = []core.Ref{{}}
		if c.Im.User {
			addr, err := c.staticAddr(vr)
			if err != nil {
				return err
			}
			t.Static, t.HasStatic = addr, true
		}
	}
	return nil
}

// staticAddr is the address of a static variable of a user binary: its
// DW_OP_addr location, else (a declaration, or an address DWARF gives
// indirectly) the one data symbol of its name.
func (c *Scope) staticAddr(vr *dwarf.Entry) (uint64, error) {
	name := c.name(vr)
	if fld := vr.AttrField(dwarf.AttrLocation); fld != nil {
		if expr, ok, err := c.CU.Location(fld, c.Addr); err == nil && ok {
			if ops, err := dwarfexpr.Decode(expr, c.CU.AddrSize); err == nil && len(ops) == 1 && ops[0].Atom == opAddr {
				return ops[0].Number, nil
			} else if err == nil && len(ops) > 0 && ops[0].Atom != opAddr && ops[0].Atom != opAddrx && ops[0].Atom != opGNUAddrIndex {
				return 0, core.Errorf(core.ErrUnsupported, "%s is not at a fixed address (%s): a uprobe cannot fetch it.", name, describeOps(ops))
			}
		}
	}
	m, err := c.Im.Symbols()
	if err != nil {
		return 0, err
	}
	var addrs []uint64
	for _, s := range m.ByName(symtab.Query{Pattern: name, Exact: true, KeepVersion: true}) {
		if s.Type == elf.STT_TLS {
			return 0, core.Errorf(core.ErrUnsupported, "%s is thread-local: a uprobe cannot fetch it.", name)
		}
		if s.Type == elf.STT_OBJECT && !slices.Contains(addrs, s.Start) {
			addrs = append(addrs, s.Start)
		}
	}
	switch len(addrs) {
	case 1:
		return addrs[0], nil
	case 0:
		return 0, core.Errorf(core.ErrNotFound, "Failed to find the address of %s (no data symbol of that name): a uprobe fetches a global at its file offset.", name)
	}
	return 0, core.Errorf(core.ErrInvalid, "%d data symbols are named %s and its debug information gives no address: a uprobe fetches a global at its file offset.", len(addrs), name)
}
