package vars

import (
	"debug/dwarf"
	"errors"
	"fmt"

	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfexpr"
	"github.com/gprobe/gprobe/resolve/spec"
)

// member is perf's die_find_member: a member named name, or an unnamed
// member whose type (not resolved through typedefs) has one.
func (c *Scope) member(st *dwarf.Entry, name string) (*dwarf.Entry, error) {
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
func (c *Scope) memberOffset(m *dwarf.Entry) (int64, error) {
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
		ops, err := dwarfexpr.Decode(v, c.CU.AddrSize)
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
func (c *Scope) fields(vr *dwarf.Entry, varname string, fs []spec.Field, t *core.TraceArg, user bool) (*dwarf.Entry, error) {
	field := fs[0]
	typ, err := c.realType(vr)
	if err != nil {
		return nil, err
	}
	if typ == nil {
		c.Im.Warnf("Failed to get the type of %s.", varname)
		return nil, core.Errorf(core.ErrNotFound, "")
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
			c.Im.Warnf("Failed to get the type of %s.", varname)
			return nil, core.Errorf(core.ErrNotFound, "")
		}
		if typ.Tag == dwarf.TagPointerType {
			t.Refs = append(t.Refs, core.Ref{})
		} else if len(t.Refs) == 0 {
			// perf dereferences a NULL ref here (an array in a register
			// cannot be described by DWARF); refuse instead.
			c.Im.Warnf("Structure on a register is not supported yet.")
			return nil, core.Errorf(core.ErrUnsupported, "")
		}
		size, _ := c.attrUdata(elem, dwarf.AttrByteSize)
		if size <= 0 {
			size = -1 // perf multiplies dwarf_bytesize's -1
		}
		last := &t.Refs[len(t.Refs)-1]
		last.Off += size * field.Index
		last.User = user
	default:
		if typ.Tag == dwarf.TagPointerType {
			if !field.Ref {
				return nil, core.Errorf(core.ErrInvalid, "Semantic error: %s must be referred by '->'", field.Name)
			}
			if typ, err = c.realType(typ); err != nil {
				return nil, err
			}
			if typ == nil {
				c.Im.Warnf("Failed to get the type of %s.", varname)
				return nil, core.Errorf(core.ErrNotFound, "")
			}
			if !isRecord(typ) {
				c.Im.Warnf("%s is not a data structure nor a union.", varname)
				return nil, core.Errorf(core.ErrInvalid, "")
			}
			t.Refs = append(t.Refs, core.Ref{})
		} else {
			if !isRecord(typ) {
				c.Im.Warnf("%s is not a data structure nor a union.", varname)
				return nil, core.Errorf(core.ErrInvalid, "")
			}
			if field.IsIndex {
				return nil, core.Errorf(core.ErrInvalid, "Semantic error: %s is not a pointer nor array.", varname)
			}
			if field.Ref && c.name(vr) != "" {
				return nil, core.Errorf(core.ErrInvalid, "Semantic error: %s must be referred by '.'", field.Name)
			}
			if len(t.Refs) == 0 {
				c.Im.Warnf("Structure on a register is not supported yet.")
				return nil, core.Errorf(core.ErrUnsupported, "")
			}
		}
		m, err := c.member(typ, field.Name)
		if err != nil {
			return nil, err
		}
		if m == nil {
			c.Im.Warnf("%s(type:%s) has no member %s.", varname, c.name(typ), field.Name)
			return nil, core.Errorf(core.ErrInvalid, "")
		}
		var off int64
		if typ.Tag != dwarf.TagUnionType {
			if off, err = c.memberOffset(m); err != nil {
				if errors.Is(err, errNoMemberOffset) {
					c.Im.Warnf("Failed to get the offset of %s.", field.Name)
					return nil, core.Errorf(core.ErrNotFound, "")
				}
				return nil, err
			}
		}
		last := &t.Refs[len(t.Refs)-1]
		last.Off += off
		last.User = user
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
func (c *Scope) bitfield(m *dwarf.Entry) (bitfieldLayout, bool, error) {
	width, ok := c.attrUdata(m, dwarf.AttrBitSize)
	if !ok || width <= 0 {
		return bitfieldLayout{}, false, nil
	}
	if c.Im.File.Order.String() != "LittleEndian" {
		return bitfieldLayout{}, false, core.Errorf(core.ErrUnsupported, "Bitfields on big-endian targets are not supported.")
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
			return bitfieldLayout{}, false, core.Errorf(core.ErrUnsupported, "Failed to get the container size of bitfield %s.", c.name(m))
		}
		start := dbo / (size * 8) * size
		bl := bitfieldLayout{byteOff: start, width: width, bitOff: dbo - start*8, size: size * 8}
		if bl.bitOff+width > bl.size {
			return bitfieldLayout{}, false, core.Errorf(core.ErrUnsupported, "Bitfield %s straddles its %d-bit container.", c.name(m), bl.size)
		}
		return bl, true, nil
	}
	bo, ok1 := c.attrUdata(m, dwarf.AttrBitOffset)
	total, ok2 := c.attrUdata(m, dwarf.AttrByteSize)
	if !ok1 || !ok2 || total <= 0 {
		return bitfieldLayout{}, false, core.Errorf(core.ErrNotFound, "")
	}
	off, _ := udata(m.AttrField(dwarf.AttrDataMemberLoc))
	return bitfieldLayout{byteOff: off, width: width, bitOff: total*8 - bo - width, size: total * 8}, true, nil
}

// convertType is perf's convert_variable_type for the final DIE vr.
func (c *Scope) convertType(vr *dwarf.Entry, t *core.TraceArg, a *spec.Arg) error {
	cast, hasCast, user := a.Type, a.HasType, a.User
	if hasCast && cast != "string" && cast != "ustring" && cast != "x" && cast != "s" && cast != "u" {
		t.Type = cast
		return nil
	}
	if bf, ok, err := c.bitfield(vr); err != nil {
		return err
	} else if ok {
		t.Type = fmt.Sprintf("b%d@%d/%d", bf.width, bf.bitOff, bf.size)
		return nil
	}
	typ, err := c.realType(vr)
	if err != nil {
		return err
	}
	if typ == nil {
		c.Im.Warnf("Failed to get a type information of %s.", c.name(vr))
		return core.Errorf(core.ErrNotFound, "")
	}
	if hasCast && (cast == "string" || cast == "ustring") {
		if typ.Tag != dwarf.TagPointerType && typ.Tag != dwarf.TagArrayType {
			c.Im.Warnf("Failed to cast into string: %s(%s) is not a pointer nor array.", c.name(vr), c.name(typ))
			return core.Errorf(core.ErrInvalid, "")
		}
		elem, err := c.realType(typ)
		if err != nil {
			return err
		}
		if elem == nil {
			c.Im.Warnf("Failed to get a type information.")
			return core.Errorf(core.ErrNotFound, "")
		}
		if typ.Tag == dwarf.TagPointerType {
			t.Refs = append(t.Refs, core.Ref{User: user})
		}
		if n := c.name(elem); n != "char" && n != "unsigned char" {
			c.Im.Warnf("Failed to cast into string: %s is not (unsigned) char *.", c.name(vr))
			return core.Errorf(core.ErrInvalid, "")
		}
		t.Type = cast
		return nil
	}
	hex := c.Im.Opts.Features.HexTypes
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
	if bits > core.MaxBasicTypeBits {
		// perf truncates to the first 64 bits with an info message. For
		// a variable the user named, that silently records a fragment
		// (of a struct, an __int128): refuse and say what works instead.
		// $vars/$params expansions keep perf's behaviour.
		if !expanded(a) {
			return core.Errorf(core.ErrInvalid, "%s is %d bits wide (%s); a fetch argument holds at most %d bits.\n Fetch one of its members, or cast it (%s:x64) to read its first 8 bytes.",
				spec.Arg{Var: a.Var, Fields: a.Fields}.String(), bits, c.typeLabel(vr), core.MaxBasicTypeBits, spec.Arg{Var: a.Var, Fields: a.Fields}.String())
		}
		c.Im.Warnf("%s exceeds max-bitwidth. Cut down to %d bits.", c.name(typ), core.MaxBasicTypeBits)
		bits = core.MaxBasicTypeBits
	}
	t.Type = fmt.Sprintf("%c%d", prefix, bits)
	return nil
}

// isSigned is perf's die_is_signed_type.
func isSigned(c *Scope, typ *dwarf.Entry) bool {
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
