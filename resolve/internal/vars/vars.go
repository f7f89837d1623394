// Package vars converts a C expression on a variable at a probe address
// into a fetch argument through DWARF, as perf 6.1's probe-finder.c does
// (find_variable, convert_variable_location, convert_variable_fields and
// convert_variable_type, over one unit's DIEs), and lists the variables
// that have a location there (-V). Where perf is wrong for the kernel
// (bitfield offsets, see bitfield), gprobe gives the right answer and says
// why in a comment.
package vars

import (
	"debug/dwarf"

	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfexpr"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// Scope is one probe address in a unit, where perf's probe_finder looks
// variables up: the scope the address was found in and the real function
// holding it.
type Scope struct {
	Im   *core.Image
	CU   *dwarfinfo.CU
	Sc   *lines.Scope // the scope the address was found in
	Func *lines.Scope // the real function holding it
	Addr uint64
	// EntryOnly refuses local variables: at a function's entry only its
	// parameters have values (fprobes, tprobes, entry values at return).
	EntryOnly bool

	fb dwarfexpr.FrameBase
	// showRange is perf's probe_conf.show_location_range (-V --range).
	showRange bool
}

// NewScope returns the scope at addr, with the function's frame base
// there (perf's call_probe_finder).
func NewScope(im *core.Image, cu *dwarfinfo.CU, sc, fn *lines.Scope, addr uint64, entryOnly bool) (*Scope, error) {
	c := &Scope{Im: im, CU: cu, Sc: sc, Func: fn, Addr: addr, EntryOnly: entryOnly}
	if err := c.frameBase(); err != nil {
		return nil, err
	}
	return c, nil
}

// frameBase is the frame-base part of perf's call_probe_finder: the
// function's DW_AT_frame_base at addr, with DW_OP_call_frame_cfa resolved
// through CFI.
func (c *Scope) frameBase() error {
	e, err := c.CU.DIE(c.Func.Offset)
	if err != nil {
		return err
	}
	fld := e.AttrField(dwarf.AttrFrameBase)
	if fld == nil {
		return nil
	}
	expr, ok, err := c.CU.Location(fld, c.Addr)
	if err != nil || !ok || len(expr) == 0 {
		return err
	}
	fb, needCFA, err := dwarfexpr.ParseFrameBase(expr, c.CU.AddrSize)
	if err != nil {
		return nil // perf: fb_ops stays NULL
	}
	if needCFA {
		if !c.Im.File.HasCFI() {
			// perf keeps the call_frame_cfa op itself; fbreg then fails.
			c.fb = dwarfexpr.FrameBase{Kind: dwarfexpr.FrameBaseNone}
			return nil
		}
		reg, off, ok, err := c.Im.File.CFA(c.Addr)
		if err != nil {
			return err
		}
		if !ok {
			c.Im.Warnf("Failed to get call frame on 0x%x", c.Addr)
			return core.Errorf(core.ErrNotFound, "")
		}
		fb.Reg, fb.Offset = int(reg), off
	}
	c.fb = fb
	return nil
}

// DIE helpers.

// integrate is libdw's dwarf_attr_integrate: the attribute of e, or of the
// DIEs its DW_AT_abstract_origin / DW_AT_specification chain leads to.
func (c *Scope) integrate(e *dwarf.Entry, attr dwarf.Attr) (*dwarf.Field, error) {
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
		if e, err = c.CU.DIE(uint64(off)); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// name is dwarf_diename.
func (c *Scope) name(e *dwarf.Entry) string {
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
func (c *Scope) attrUdata(e *dwarf.Entry, attr dwarf.Attr) (int64, bool) {
	f, _ := c.integrate(e, attr)
	return udata(f)
}

// typeOf is perf's die_get_type: the DIE DW_AT_type (integrated) refers to.
func (c *Scope) typeOf(e *dwarf.Entry) (*dwarf.Entry, error) {
	f, err := c.integrate(e, dwarf.AttrType)
	if err != nil || f == nil {
		return nil, err
	}
	off, ok := f.Val.(dwarf.Offset)
	if !ok {
		return nil, nil
	}
	return c.CU.DIE(uint64(off))
}

// qualifiedType is perf's __die_get_real_type: skips cv/restrict/shared.
func (c *Scope) qualifiedType(e *dwarf.Entry) (*dwarf.Entry, error) {
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
func (c *Scope) realType(e *dwarf.Entry) (*dwarf.Entry, error) {
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
func (c *Scope) haspc(e *dwarf.Entry, addr uint64) bool {
	if s := c.CU.Scopes[uint64(e.Offset)]; s != nil {
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

func (c *Scope) findChild(off uint64, cb func(*dwarf.Entry) (findResult, error)) (*dwarf.Entry, error) {
	return c.findChildIn(off, func(e *dwarf.Entry, _ uint64) (findResult, error) { return cb(e) })
}

// findChildIn is findChild with each DIE's parent offset given to cb.
func (c *Scope) findChildIn(off uint64, cb func(e *dwarf.Entry, parent uint64) (findResult, error)) (*dwarf.Entry, error) {
	kids, err := c.CU.Children(off)
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
func (c *Scope) findVariableAt(scopeOff uint64, name string, addr uint64) (*dwarf.Entry, error) {
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
