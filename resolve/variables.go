package resolve

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/internal/dwarfexpr"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/spec"
)

// Variables: perf 6.1 probe-finder.c find_variable, convert_variable_location,
// convert_variable_fields and convert_variable_type, over one unit's DIEs.
// Where perf is wrong for the kernel (bitfield offsets, see bitfield), gprobe
// gives the right answer and says why in a comment.

// maxBasicTypeBits is perf's MAX_BASIC_TYPE_BITS.
const maxBasicTypeBits = 64

// ErrOptimizedOut: a variable has no location at the probe address.
var ErrOptimizedOut = errors.New("variable optimized out at the probe address")

// varRef is one dereference level (perf's probe_trace_arg_ref).
type varRef struct {
	off  int64
	user bool
}

// traceArg is perf's probe_trace_arg while it is being built.
type traceArg struct {
	name  string
	value string // "%di", "@sym", "\5", or raw fetch text
	refs  []varRef
	typ   string
	found bool // false: skipped (perf's NULL value), filled by fillEmptyArgs
}

// fetch renders the value and its dereference levels the way perf's
// synthesize_probe_trace_arg does.
func (t *traceArg) fetch() probe.Fetch {
	var f probe.Fetch
	refs := t.refs
	switch {
	case strings.HasPrefix(t.value, "@") && len(refs) > 0:
		f = probe.Symbol{Name: t.value[1:], Off: refs[0].off}
		refs = refs[1:]
	case strings.HasPrefix(t.value, "%"):
		f = probe.Reg(t.value[1:])
	default:
		f = probe.Raw(t.value)
	}
	for _, r := range refs {
		f = probe.Mem{Off: r.off, User: r.user, Inner: f}
	}
	return f
}

func (t *traceArg) fetchArg() probe.FetchArg {
	return probe.FetchArg{Name: t.name, Expr: t.fetch(), Type: t.typ}
}

// scopeCtx is what perf's probe_finder holds for one probe address.
type scopeCtx struct {
	f    *finder
	cu   *dwarfinfo.CU
	sc   *lines.Scope // the scope the address was found in
	sp   *lines.Scope // the real function holding it
	addr uint64
	fb   dwarfexpr.FrameBase
	// showRange is perf's probe_conf.show_location_range (-V --range).
	showRange bool
}

// varError carries perf's message for a variable and its errno class.
func varError(sentinel error, format string, args ...any) error {
	return errorf(sentinel, format, args...)
}

// frameBase is the frame-base part of perf's call_probe_finder: the
// function's DW_AT_frame_base at addr, with DW_OP_call_frame_cfa resolved
// through CFI.
func (c *scopeCtx) frameBase() error {
	e, err := c.cu.DIE(c.sp.Offset)
	if err != nil {
		return err
	}
	fld := e.AttrField(dwarf.AttrFrameBase)
	if fld == nil {
		return nil
	}
	expr, ok, err := c.cu.Location(fld, c.addr)
	if err != nil || !ok || len(expr) == 0 {
		return err
	}
	fb, needCFA, err := dwarfexpr.ParseFrameBase(expr, c.cu.AddrSize)
	if err != nil {
		return nil // perf: fb_ops stays NULL
	}
	if needCFA {
		if !c.f.r.f.HasCFI() {
			// perf keeps the call_frame_cfa op itself; fbreg then fails.
			c.fb = dwarfexpr.FrameBase{Kind: dwarfexpr.FrameBaseNone}
			return nil
		}
		reg, off, ok, err := c.f.r.f.CFA(c.addr)
		if err != nil {
			return err
		}
		if !ok {
			c.f.warn("Failed to get call frame on 0x%x", c.addr)
			return errorf(ErrNotFound, "")
		}
		fb.Reg, fb.Offset = int(reg), off
	}
	c.fb = fb
	return nil
}

// die helpers ---------------------------------------------------------------

// integrate is libdw's dwarf_attr_integrate: the attribute of e, or of the
// DIEs its DW_AT_abstract_origin / DW_AT_specification chain leads to.
func (c *scopeCtx) integrate(e *dwarf.Entry, attr dwarf.Attr) (*dwarf.Field, error) {
	for i := 0; i < 16 && e != nil; i++ {
		if f := e.AttrField(attr); f != nil {
			return f, nil
		}
		ref := e.AttrField(dwarf.AttrAbstractOrigin)
		if ref == nil {
			ref = e.AttrField(dwarf.AttrSpecification)
		}
		if ref == nil {
			return nil, nil
		}
		off, ok := ref.Val.(dwarf.Offset)
		if !ok {
			return nil, nil
		}
		var err error
		if e, err = c.cu.DIE(uint64(off)); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// name is dwarf_diename.
func (c *scopeCtx) name(e *dwarf.Entry) string {
	f, _ := c.integrate(e, dwarf.AttrName)
	if f == nil {
		return ""
	}
	s, _ := f.Val.(string)
	return s
}

func udata(f *dwarf.Field) (int64, bool) {
	if f == nil {
		return 0, false
	}
	v, ok := f.Val.(int64)
	return v, ok && f.Class == dwarf.ClassConstant
}

// attrUdata is dwarf_formudata(dwarf_attr_integrate(e, attr)).
func (c *scopeCtx) attrUdata(e *dwarf.Entry, attr dwarf.Attr) (int64, bool) {
	f, _ := c.integrate(e, attr)
	return udata(f)
}

// typeOf is perf's die_get_type: the DIE DW_AT_type (integrated) refers to.
func (c *scopeCtx) typeOf(e *dwarf.Entry) (*dwarf.Entry, error) {
	f, err := c.integrate(e, dwarf.AttrType)
	if err != nil || f == nil {
		return nil, err
	}
	off, ok := f.Val.(dwarf.Offset)
	if !ok {
		return nil, nil
	}
	return c.cu.DIE(uint64(off))
}

// qualifiedType is perf's __die_get_real_type: skips cv/restrict/shared.
func (c *scopeCtx) qualifiedType(e *dwarf.Entry) (*dwarf.Entry, error) {
	for {
		t, err := c.typeOf(e)
		if err != nil || t == nil {
			return nil, err
		}
		switch t.Tag {
		case dwarf.TagConstType, dwarf.TagRestrictType, dwarf.TagVolatileType, dwarf.TagSharedType:
			e = t
			continue
		}
		return t, nil
	}
}

// realType is perf's die_get_real_type: qualifiers and typedefs skipped.
func (c *scopeCtx) realType(e *dwarf.Entry) (*dwarf.Entry, error) {
	for {
		t, err := c.qualifiedType(e)
		if err != nil || t == nil || t.Tag != dwarf.TagTypedef {
			return t, err
		}
		e = t
	}
}

// haspc is dwarf_haspc for the children perf descends into: only scopes
// (lexical blocks, inlined calls) have ranges among a function's children.
func (c *scopeCtx) haspc(e *dwarf.Entry, addr uint64) bool {
	if s := c.cu.Scopes[uint64(e.Offset)]; s != nil {
		return s.HasPC(addr)
	}
	return false
}

// findChild is perf's die_find_child with a callback returning one of
// the DIE_FIND_CB_* results.
type findResult int

const (
	cbEnd      findResult = iota // found
	cbContinue                   // descend into children, then siblings
	cbSibling                    // siblings only
)

func (c *scopeCtx) findChild(off uint64, cb func(*dwarf.Entry) (findResult, error)) (*dwarf.Entry, error) {
	return c.findChildIn(off, func(e *dwarf.Entry, _ uint64) (findResult, error) { return cb(e) })
}

// findChildIn is findChild with each DIE's parent offset given to cb.
func (c *scopeCtx) findChildIn(off uint64, cb func(e *dwarf.Entry, parent uint64) (findResult, error)) (*dwarf.Entry, error) {
	kids, err := c.cu.Children(off)
	if err != nil {
		return nil, err
	}
	for _, k := range kids {
		res, err := cb(k, off)
		if err != nil {
			return nil, err
		}
		switch res {
		case cbEnd:
			return k, nil
		case cbContinue:
			if k.Children {
				found, err := c.findChildIn(uint64(k.Offset), cb)
				if err != nil || found != nil {
					return found, err
				}
			}
		}
	}
	return nil, nil
}

func isVarTag(t dwarf.Tag) bool { return t == dwarf.TagFormalParameter || t == dwarf.TagVariable }

// findVariableAt is perf's die_find_variable_at.
func (c *scopeCtx) findVariableAt(scopeOff uint64, name string, addr uint64) (*dwarf.Entry, error) {
	return c.findChild(scopeOff, func(e *dwarf.Entry) (findResult, error) {
		if isVarTag(e.Tag) && c.name(e) == name &&
			(e.AttrField(dwarf.AttrExternal) != nil || e.AttrField(dwarf.AttrLocation) != nil || e.AttrField(dwarf.AttrConstValue) != nil) {
			return cbEnd, nil
		}
		if c.haspc(e, addr) {
			return cbContinue, nil
		}
		return cbSibling, nil
	})
}

// location ------------------------------------------------------------------

// errNoLocation is perf's -ENOENT/-EINVAL from convert_variable_location:
// reported as "Failed to find the location of the '%s' variable".
var errNoLocation = errors.New("no location")

// errOutOfRange marks a variable that -V --range lists as [INV]: it has a
// location in the function, but not at the probe address.
var errOutOfRange = errors.New("no location at this address")

// varLocation is perf's convert_variable_location. With t == nil it only
// checks that the variable can be converted at the address.
func (c *scopeCtx) varLocation(vr *dwarf.Entry, t *traceArg) error {
	if vr.AttrField(dwarf.AttrExternal) != nil {
		return c.staticVar(vr, t)
	}
	if f := vr.AttrField(dwarf.AttrConstValue); f != nil && c.f.r.opts.Features.Immediates {
		if t != nil {
			v, ok := f.Val.(int64)
			if !ok {
				return errNoLocation
			}
			t.value = "\\" + strconv.FormatInt(v, 10)
		}
		return nil
	}
	fld := vr.AttrField(dwarf.AttrLocation)
	if fld == nil {
		return errNoLocation // perf: broken DIE (-EINVAL)
	}
	addr := c.addr
	expr, ok, err := c.cu.Location(fld, addr)
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
		entry, hasEntry := c.sp.EntryPC, c.sp.HasEntryPC
		if !hasEntry {
			return errNoLocation
		}
		if c.showRange && vr.Tag == dwarf.TagVariable {
			outOfRange = errOutOfRange
		} else if addr != entry || vr.Tag != dwarf.TagFormalParameter {
			return errNoLocation
		}
		if c.sp.HighPC == 0 {
			return errNoLocation
		}
		for a := addr + 1; a <= c.sp.HighPC; a++ {
			if expr, ok, err = c.cu.Location(fld, a); err != nil {
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
	loc, err := dwarfexpr.Translate(expr, c.f.r.arch, c.fb, c.cu.AddrSize)
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
			c.f.warn("Mapping for the register number %d missing on this architecture.", re.Reg)
		}
		if errors.Is(err, dwarfexpr.ErrUnsupported) || errors.As(err, new(*Error)) {
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
		t.value = fe.String()
	case probe.Mem:
		reg, ok := fe.Inner.(probe.Reg)
		if !ok {
			return dwarfexpr.ErrUnsupported
		}
		t.value = reg.String()
		t.refs = []varRef{{off: fe.Off}}
	default:
		return dwarfexpr.ErrUnsupported
	}
	return computed
}

// Opcodes the multi-operation check needs.
const (
	opPiece      = 0x93
	opStackValue = 0x9f
)

// multiOp checks an expression of several operations, of which perf
// translates only the first. "DW_OP_bregN 0; DW_OP_stack_value" is the
// register's value (perf dereferences it); a register piece is the
// register; anything else computes a value kprobes cannot compute (perf
// reads memory at the first operation's address instead).
func (c *scopeCtx) multiOp(vr *dwarf.Entry, expr []byte, loc *dwarfexpr.Location) (*dwarfexpr.Location, error) {
	ops, err := dwarfexpr.Decode(expr, c.cu.AddrSize)
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
	return loc, &Error{Msg: fmt.Sprintf("'%s' is computed at this address (%s): a probe can fetch registers and memory but not compute values.\n perf probe reads memory at %s instead, which is not the variable's value.",
		c.name(vr), describeOps(ops), dwarfexpr.Format(loc)), Err: errComputed}
}

// errComputed marks a variable whose value DWARF computes. It wraps
// ErrUnsupported; findVariable reports it after perf's own checks (fields,
// types), so that wherever perf refuses the argument anyway the answers
// agree.
var errComputed = fmt.Errorf("%w: computed value", ErrUnsupported)

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

// staticVar: perf's static_var label, "@name" with a zero-offset ref.
func (c *scopeCtx) staticVar(vr *dwarf.Entry, t *traceArg) error {
	if t != nil {
		t.value = "@" + c.name(vr)
		t.refs = []varRef{{}}
	}
	return nil
}

// fields --------------------------------------------------------------------

// member is perf's die_find_member: a member named name, or an unnamed
// member whose type (not resolved through typedefs) has one.
func (c *scopeCtx) member(st *dwarf.Entry, name string) (*dwarf.Entry, error) {
	return c.findChild(uint64(st.Offset), func(e *dwarf.Entry) (findResult, error) {
		if e.Tag != dwarf.TagMember {
			return cbSibling, nil
		}
		n := c.name(e)
		if n != "" && n == name {
			return cbEnd, nil
		}
		if n == "" {
			t, err := c.typeOf(e)
			if err != nil {
				return cbSibling, err
			}
			if t != nil && t.Children {
				if m, err := c.member(t, name); err != nil || m != nil {
					return cbEnd, err
				}
			}
		}
		return cbSibling, nil
	})
}

// memberOffset is perf's die_get_data_member_location, plus the DWARF 5
// DW_AT_data_bit_offset form perf 6.1 cannot read (bitfields; the byte
// offset of the bitfield's container, see bitfield).
func (c *scopeCtx) memberOffset(m *dwarf.Entry) (int64, error) {
	f := m.AttrField(dwarf.AttrDataMemberLoc)
	if f == nil {
		if bf, ok, err := c.bitfield(m); err != nil {
			return 0, err
		} else if ok {
			return bf.byteOff, nil
		}
		return 0, errNoMemberOffset
	}
	switch v := f.Val.(type) {
	case int64:
		return v, nil
	case []byte:
		ops, err := dwarfexpr.Decode(v, c.cu.AddrSize)
		if err != nil || len(ops) != 1 || ops[0].Atom != 0x23 { // DW_OP_plus_uconst
			return 0, errNoMemberOffset
		}
		return int64(ops[0].Number), nil
	}
	return 0, errNoMemberOffset
}

var errNoMemberOffset = errors.New("no member offset")

// fields is perf's convert_variable_fields: it walks the field chain of
// arg from vr, adding dereference levels to t, and returns the DIE whose
// type is the final value's (the member, or the array/pointer type).
func (c *scopeCtx) fields(vr *dwarf.Entry, varname string, fs []spec.Field, t *traceArg, user bool) (*dwarf.Entry, error) {
	field := fs[0]
	typ, err := c.realType(vr)
	if err != nil {
		return nil, err
	}
	if typ == nil {
		c.f.warn("Failed to get the type of %s.", varname)
		return nil, errorf(ErrNotFound, "")
	}
	var next *dwarf.Entry
	switch {
	case field.IsIndex && (typ.Tag == dwarf.TagArrayType || typ.Tag == dwarf.TagPointerType):
		next = typ
		elem, err := c.realType(typ)
		if err != nil {
			return nil, err
		}
		if elem == nil {
			c.f.warn("Failed to get the type of %s.", varname)
			return nil, errorf(ErrNotFound, "")
		}
		if typ.Tag == dwarf.TagPointerType {
			t.refs = append(t.refs, varRef{})
		} else if len(t.refs) == 0 {
			// perf dereferences a NULL ref here (an array in a register
			// cannot be described by DWARF); refuse instead.
			c.f.warn("Structure on a register is not supported yet.")
			return nil, errorf(ErrUnsupported, "")
		}
		size, _ := c.attrUdata(elem, dwarf.AttrByteSize)
		if size <= 0 {
			size = -1 // perf multiplies dwarf_bytesize's -1
		}
		last := &t.refs[len(t.refs)-1]
		last.off += size * field.Index
		last.user = user
	default:
		if typ.Tag == dwarf.TagPointerType {
			if !field.Ref {
				return nil, errorf(ErrInvalid, "Semantic error: %s must be referred by '->'", field.Name)
			}
			if typ, err = c.realType(typ); err != nil {
				return nil, err
			}
			if typ == nil {
				c.f.warn("Failed to get the type of %s.", varname)
				return nil, errorf(ErrNotFound, "")
			}
			if typ.Tag != dwarf.TagStructType && typ.Tag != dwarf.TagUnionType {
				c.f.warn("%s is not a data structure nor a union.", varname)
				return nil, errorf(ErrInvalid, "")
			}
			t.refs = append(t.refs, varRef{})
		} else {
			if typ.Tag != dwarf.TagStructType && typ.Tag != dwarf.TagUnionType {
				c.f.warn("%s is not a data structure nor a union.", varname)
				return nil, errorf(ErrInvalid, "")
			}
			if field.IsIndex {
				return nil, errorf(ErrInvalid, "Semantic error: %s is not a pointer nor array.", varname)
			}
			if field.Ref && c.name(vr) != "" {
				return nil, errorf(ErrInvalid, "Semantic error: %s must be referred by '.'", field.Name)
			}
			if len(t.refs) == 0 {
				c.f.warn("Structure on a register is not supported yet.")
				return nil, errorf(ErrUnsupported, "")
			}
		}
		m, err := c.member(typ, field.Name)
		if err != nil {
			return nil, err
		}
		if m == nil {
			c.f.warn("%s(type:%s) has no member %s.", varname, c.name(typ), field.Name)
			return nil, errorf(ErrInvalid, "")
		}
		var off int64
		if typ.Tag != dwarf.TagUnionType {
			if off, err = c.memberOffset(m); err != nil {
				if errors.Is(err, errNoMemberOffset) {
					c.f.warn("Failed to get the offset of %s.", field.Name)
					return nil, errorf(ErrNotFound, "")
				}
				return nil, err
			}
		}
		last := &t.refs[len(t.refs)-1]
		last.off += off
		last.user = user
		if c.name(m) == "" {
			// An anonymous struct/union member: look for the same field
			// inside it.
			return c.fields(m, varname, fs, t, user)
		}
		next = m
	}
	if len(fs) > 1 {
		return c.fields(next, field.Name, fs[1:], t, user)
	}
	return next, nil
}

// types ---------------------------------------------------------------------

// bitfieldLayout places a bitfield for the kernel's b<width>@<offset>/<size>
// fetch type: the container is loaded from byteOff as a size-bit integer and
// the field is bits [bitOff, bitOff+width) counted from its least
// significant bit.
type bitfieldLayout struct {
	byteOff       int64
	width, bitOff int64
	size          int64 // container bits
}

// bitfield computes the layout of member m if it is a bitfield.
//
// perf 6.1 prints DW_AT_bit_offset as the offset, but DWARF 2-4 count it
// from the most significant bit of the storage unit and the kernel counts
// from the least significant one (trace_probe.c __parse_bitfield_probe_arg:
// lshift = size - (width + offset)), so perf's value selects the wrong bits
// on little-endian machines; and perf cannot read DWARF 5's
// DW_AT_data_bit_offset at all. gprobe converts both.
func (c *scopeCtx) bitfield(m *dwarf.Entry) (bitfieldLayout, bool, error) {
	width, ok := c.attrUdata(m, dwarf.AttrBitSize)
	if !ok || width <= 0 {
		return bitfieldLayout{}, false, nil
	}
	if c.f.r.f.Order.String() != "LittleEndian" {
		return bitfieldLayout{}, false, errorf(ErrUnsupported, "Bitfields on big-endian targets are not supported.")
	}
	if dbo, ok := c.attrUdata(m, dwarf.AttrDataBitOffset); ok {
		// DWARF 5: absolute bit position of the least significant bit;
		// the container is the member type's size, aligned.
		t, err := c.realType(m)
		if err != nil {
			return bitfieldLayout{}, false, err
		}
		size := int64(0)
		if t != nil {
			size, _ = c.attrUdata(t, dwarf.AttrByteSize)
		}
		if size <= 0 || size > 8 {
			return bitfieldLayout{}, false, errorf(ErrUnsupported, "Failed to get the container size of bitfield %s.", c.name(m))
		}
		start := dbo / (size * 8) * size
		bl := bitfieldLayout{byteOff: start, width: width, bitOff: dbo - start*8, size: size * 8}
		if bl.bitOff+width > bl.size {
			return bitfieldLayout{}, false, errorf(ErrUnsupported, "Bitfield %s straddles its %d-bit container.", c.name(m), bl.size)
		}
		return bl, true, nil
	}
	bo, ok1 := c.attrUdata(m, dwarf.AttrBitOffset)
	total, ok2 := c.attrUdata(m, dwarf.AttrByteSize)
	if !ok1 || !ok2 || total <= 0 {
		return bitfieldLayout{}, false, errorf(ErrNotFound, "")
	}
	off, _ := udata(m.AttrField(dwarf.AttrDataMemberLoc))
	return bitfieldLayout{byteOff: off, width: width, bitOff: total*8 - bo - width, size: total * 8}, true, nil
}

// convertType is perf's convert_variable_type for the final DIE vr.
func (c *scopeCtx) convertType(vr *dwarf.Entry, t *traceArg, a *spec.Arg) error {
	cast, hasCast, user := a.Type, a.HasType, a.User
	if hasCast && cast != "string" && cast != "ustring" && cast != "x" && cast != "s" && cast != "u" {
		t.typ = cast
		return nil
	}
	if bf, ok, err := c.bitfield(vr); err != nil {
		return err
	} else if ok {
		t.typ = fmt.Sprintf("b%d@%d/%d", bf.width, bf.bitOff, bf.size)
		return nil
	}
	typ, err := c.realType(vr)
	if err != nil {
		return err
	}
	if typ == nil {
		c.f.warn("Failed to get a type information of %s.", c.name(vr))
		return errorf(ErrNotFound, "")
	}
	if hasCast && (cast == "string" || cast == "ustring") {
		if typ.Tag != dwarf.TagPointerType && typ.Tag != dwarf.TagArrayType {
			c.f.warn("Failed to cast into string: %s(%s) is not a pointer nor array.", c.name(vr), c.name(typ))
			return errorf(ErrInvalid, "")
		}
		elem, err := c.realType(typ)
		if err != nil {
			return err
		}
		if elem == nil {
			c.f.warn("Failed to get a type information.")
			return errorf(ErrNotFound, "")
		}
		if typ.Tag == dwarf.TagPointerType {
			t.refs = append(t.refs, varRef{user: user})
		}
		if n := c.name(elem); n != "char" && n != "unsigned char" {
			c.f.warn("Failed to cast into string: %s is not (unsigned) char *.", c.name(vr))
			return errorf(ErrInvalid, "")
		}
		t.typ = cast
		return nil
	}
	hex := c.f.r.opts.Features.HexTypes
	var prefix byte
	switch {
	case hasCast && cast == "u":
		prefix = 'u'
	case hasCast && cast == "s":
		prefix = 's'
	case hasCast && cast == "x" && hex:
		prefix = 'x'
	case isSigned(c, typ):
		prefix = 's'
	case hex:
		prefix = 'x'
	default:
		prefix = 'u'
	}
	size, ok := c.attrUdata(typ, dwarf.AttrByteSize)
	if !ok || size <= 0 {
		return nil // no size: the kernel's default type
	}
	bits := size * 8
	if bits > maxBasicTypeBits {
		// perf truncates to the first 64 bits with an info message. For
		// a variable the user named, that silently records a fragment
		// (of a struct, an __int128): refuse and say what works instead.
		// $vars/$params expansions keep perf's behaviour.
		if !expanded(a) {
			return errorf(ErrInvalid, "%s is %d bits wide (%s); a fetch argument holds at most %d bits.\n Fetch one of its members, or cast it (%s:x64) to read its first 8 bytes.",
				spec.Arg{Var: a.Var, Fields: a.Fields}.String(), bits, c.typeLabel(vr), maxBasicTypeBits, spec.Arg{Var: a.Var, Fields: a.Fields}.String())
		}
		c.f.warn("%s exceeds max-bitwidth. Cut down to %d bits.", c.name(typ), maxBasicTypeBits)
		bits = maxBasicTypeBits
	}
	t.typ = fmt.Sprintf("%c%d", prefix, bits)
	return nil
}

// isSigned is perf's die_is_signed_type.
func isSigned(c *scopeCtx, typ *dwarf.Entry) bool {
	enc, ok := c.attrUdata(typ, dwarf.AttrEncoding)
	if !ok {
		return false
	}
	switch enc {
	case 0x05, 0x06, 0x0d: // DW_ATE_signed, signed_char, signed_fixed
		return true
	}
	return false
}

// arguments -----------------------------------------------------------------

// expandArgs is perf's expand_probe_args: $vars and $params become the
// variables (and parameters) that have a location at the address.
func (c *scopeCtx) expandArgs(args []spec.Arg) ([]spec.Arg, error) {
	var out []spec.Arg
	for _, a := range args {
		if a.Var != "$vars" && a.Var != "$params" {
			out = append(out, a)
			continue
		}
		vars := a.Var == "$vars"
		_, err := c.findChild(c.sc.Offset, func(e *dwarf.Entry) (findResult, error) {
			if e.Tag == dwarf.TagFormalParameter || (e.Tag == dwarf.TagVariable && vars) {
				err := c.varLocation(e, nil)
				var re *Error
				switch {
				case err == nil:
					out = append(out, spec.Arg{Var: c.name(e), Raw: a.Var})
				case errors.As(err, &re):
					// A computed value perf would read as memory: left out.
					c.f.warn("%s is left out of %s: it is computed at this address.", c.name(e), a.Var)
				case !errors.Is(err, errNoLocation) && !errors.Is(err, dwarfexpr.ErrUnsupported):
					return cbEnd, err
				}
			}
			if c.haspc(e, c.addr) {
				return cbContinue, nil
			}
			return cbSibling, nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(out) > probedef.MaxTraceArgs {
		return nil, errorf(ErrInvalid, "Too many arguments: %d (the kernel accepts at most %d).", len(out), probedef.MaxTraceArgs)
	}
	return out, nil
}

// expanded reports an argument that came from $vars or $params.
func expanded(a *spec.Arg) bool { return a.Raw == "$vars" || a.Raw == "$params" }

// typeLabel is the -V type name of vr's type, for messages.
func (c *scopeCtx) typeLabel(vr *dwarf.Entry) string {
	if s, ok, _ := c.typeName(vr); ok {
		return s
	}
	return "(unknown_type)"
}

// findVariable is perf's find_variable + convert_variable for one arg.
func (c *scopeCtx) findVariable(a *spec.Arg, skipEmpty bool) (*traceArg, error) {
	t := &traceArg{}
	if !spec.IsCVarname(a.Var) {
		t.value, t.found = a.Var, true
		if a.HasName {
			t.name = a.Name
		}
		if a.HasType {
			t.typ = a.Type
		}
		return t, nil
	}
	if a.HasName {
		t.name = a.Name
	} else {
		t.name = strings.Replace(a.String(), ":", "_", 1)
	}
	vr, err := c.findVariableAt(c.sc.Offset, a.Var, c.addr)
	if err != nil {
		return nil, err
	}
	if vr != nil && c.f.entryOnly && isLocal(vr) {
		return nil, errLocalAtEntry(a.Var, c.sp.Name)
	}
	if vr == nil {
		if vr, err = c.findVariableAt(c.cu.Lines.Offset, a.Var, 0); err != nil {
			return nil, err
		}
	}
	if vr == nil {
		if skipEmpty {
			return t, nil
		}
		c.f.warn("Failed to find '%s' in this function.", a.Var)
		return nil, errorf(ErrNotFound, "")
	}
	err = c.varLocation(vr, t)
	var computed error
	if errors.Is(err, errComputed) {
		computed, err = err, nil
	}
	switch {
	case errors.Is(err, errNoLocation) && skipEmpty:
		t.value, t.refs = "", nil
		return t, nil
	case errors.Is(err, errNoLocation):
		return nil, errorf(ErrNotFound, "%s", dwarfexpr.NotFoundMessage(a.Var))
	case errors.As(err, new(*Error)):
		return nil, err
	case errors.Is(err, dwarfexpr.ErrUnsupported):
		return nil, errorf(ErrUnsupported, "Sorry, we don't support this variable location yet.")
	case err != nil:
		return nil, err
	}
	if len(a.Fields) > 0 {
		if vr, err = c.fields(vr, a.Var, a.Fields, t, a.User); err != nil {
			return nil, err
		}
	}
	if err := c.convertType(vr, t, a); err != nil {
		return nil, err
	}
	if computed != nil {
		return nil, computed
	}
	t.found = true
	return t, nil
}

// traceArgs converts the probe's arguments at one address.
func (c *scopeCtx) traceArgs(args []spec.Arg, skipEmpty bool) ([]*traceArg, error) {
	expanded, err := c.expandArgs(args)
	if err != nil {
		return nil, err
	}
	out := make([]*traceArg, 0, len(expanded))
	for i := range expanded {
		t, err := c.findVariable(&expanded[i], skipEmpty)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// fillEmptyArgs is perf's fill_empty_trace_arg: an argument found at some
// addresses but not others gets the magic immediate where it is missing.
func fillEmptyArgs(args []spec.Arg, tps []tracePoint) error {
	if len(tps) == 0 {
		return errorf(ErrNotFound, "")
	}
	// perf walks the arguments as written: a $params or $vars that expanded
	// to nothing anywhere is "not found" too.
	for i := range args {
		var typ string
		found := false
		for _, tp := range tps {
			if i < len(tp.args) && tp.args[i].found {
				typ, found = tp.args[i].typ, true
				break
			}
		}
		if !found {
			return errorf(ErrNotFound, "%s", dwarfexpr.NotFoundMessage(args[i].Var))
		}
		for _, tp := range tps {
			if i < len(tp.args) && !tp.args[i].found {
				tp.args[i].value = "\\" + strconv.FormatUint(probeMagic, 16)
				tp.args[i].refs = nil
				tp.args[i].typ = typ
				tp.args[i].found = true
			}
		}
	}
	return nil
}

// probeMagic is perf's DEFAULT_PROBE_MAGIC_NUM.
const probeMagic = 0xdeade12d

// Kernel limits on one fetch argument (kernel/trace/trace_probe.h).
const (
	maxArgStrLen  = 63 // MAX_ARGSTR_LEN: the body after NAME=, type included
	maxArgNameLen = 32 // MAX_ARG_NAME_LEN
)

// checkLimits refuses definitions the kernel would reject for their size,
// before anything is printed or written: perf emits them, and the write
// then fails with E2BIG-style errors in error_log.
func checkLimits(ps []probe.Probe) error {
	for _, p := range ps {
		if len(p.Args) > probedef.MaxTraceArgs {
			return errorf(ErrInvalid, "%s/%s: %d arguments; the kernel accepts at most %d.", p.Group, p.Event, len(p.Args), probedef.MaxTraceArgs)
		}
		for _, a := range p.Args {
			if len(a.Name) > maxArgNameLen {
				return errorf(ErrInvalid, "%s/%s: argument name %q is %d characters long; the kernel accepts at most %d. Name it with NAME=ARG.", p.Group, p.Event, a.Name, len(a.Name), maxArgNameLen)
			}
			body := a.Expr.String()
			if a.Type != "" {
				body += ":" + a.Type
			}
			if len(body) > maxArgStrLen {
				return errorf(ErrInvalid, "%s/%s: argument %s is %q, %d characters; the kernel accepts at most %d per argument.", p.Group, p.Event, a.Name, body, len(body), maxArgStrLen)
			}
		}
	}
	return nil
}

// skipPrologue is perf's skip_prologue: for a user program built without
// optimization, a FUNC probe with variable arguments moves past the
// prologue, where the parameters have their stack homes.
func (f *finder) skipPrologue(sp *lines.Scope, addr uint64) (uint64, error) {
	pp := f.pp
	if !f.r.user || addr == 0 || !pp.HasFunction || pp.Line != 0 || pp.Return || pp.HasLazy || pp.Offset != 0 || pp.IsAbs || !withVar(f.args) {
		return addr, nil
	}
	opt, err := f.optimizedTarget()
	if err != nil || opt {
		return addr, err
	}
	f.warn("Target program is compiled without optimization. Skipping prologue.\nProbe on address 0x%x to force probing at the function entry.\n", addr)
	// die_skip_prologue
	if sp.HighPC == 0 {
		return addr, nil
	}
	rows, err := f.cu.Lines.AllRows()
	if err != nil {
		return addr, err
	}
	idx := -1
	for i, r := range rows {
		if r.Addr == addr {
			idx = i
			break
		}
	}
	if idx < 0 {
		return addr, nil
	}
	entryLine := rows[idx].Line
	i := idx
	for ; i < len(rows); i++ {
		r := rows[i]
		if r.Addr >= sp.HighPC || r.PrologueEnd || r.Line != entryLine || i != idx {
			break
		}
	}
	if i == len(rows) {
		i--
	}
	post := rows[i].Addr
	if post >= sp.HighPC && i > 0 {
		post = rows[i-1].Addr
	}
	return post, nil
}

// withVar is perf's perf_probe_with_var.
func withVar(args []spec.Arg) bool {
	for _, a := range args {
		if spec.IsCVarname(a.Var) || a.Var == "$params" || a.Var == "$vars" {
			return true
		}
	}
	return false
}

// optimizedTarget is perf's die_is_optimized_target: some variable of the
// unit has a location list.
func (f *finder) optimizedTarget() (bool, error) {
	if f.optimized != nil {
		return *f.optimized, nil
	}
	opt, err := f.cu.HasLocationLists()
	if err != nil {
		return false, err
	}
	f.optimized = &opt
	return opt, nil
}
