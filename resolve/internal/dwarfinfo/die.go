package dwarfinfo

import (
	"debug/dwarf"
	"fmt"
	"sort"

	"github.com/gprobe/gprobe/internal/dwbuf"
)

// Variables and types are read with the standard library's DIE reader
// (debug/dwarf), which is right about DWARF 5 forms and bitfield layout
// (notes/go-libraries.md P1), over a view of this one unit: dwarf.New then
// parses one unit header and one abbreviation table instead of all of them.

// unitData returns a debug/dwarf view of the unit alone. Offsets inside it
// are relative to the unit start; the DIE methods below translate them to
// absolute .debug_info offsets, the identity used everywhere else.
func (cu *CU) unitData() (*dwarf.Data, error) {
	if cu.data != nil || cu.dataErr != nil {
		return cu.data, cu.dataErr
	}
	f := cu.f
	info, err := f.sectionRange(".debug_info", cu.hdr.off, cu.hdr.end)
	if err != nil {
		cu.dataErr = fmt.Errorf("%s: %w: unit at %#x beyond .debug_info", f.Path, ErrBadDWARF, cu.hdr.off)
		return nil, cu.dataErr
	}
	d, err := dwarf.New(f.Section(".debug_abbrev"), nil, nil, info,
		f.Section(".debug_line"), nil, f.Section(".debug_ranges"), f.Section(".debug_str"))
	if err == nil {
		for _, name := range []string{".debug_addr", ".debug_line_str", ".debug_str_offsets", ".debug_rnglists"} {
			if s := f.Section(name); s != nil {
				d.AddSection(name, s)
			}
		}
	}
	if err != nil {
		cu.dataErr = fmt.Errorf("%s: %w: unit at %#x: %v", f.Path, ErrBadDWARF, cu.hdr.off, err)
	}
	cu.data = d
	return d, cu.dataErr
}

// absolute rewrites e's offset and its intra-unit references from unit
// relative to .debug_info offsets. A DW_FORM_ref_addr reference is one
// already (debug/dwarf reads it as is), so it is left alone: the entry's
// abbreviation tells which references have that form.
func (cu *CU) absolute(e *dwarf.Entry) *dwarf.Entry {
	var refAddr []attrSpec
	for i := range e.Field {
		if e.Field[i].Class != dwarf.ClassReference {
			continue
		}
		o, ok := e.Field[i].Val.(dwarf.Offset)
		if !ok {
			continue
		}
		if refAddr == nil {
			refAddr = cu.refAddrAttrs(uint64(e.Offset))
		}
		if !hasAttr(refAddr, uint32(e.Field[i].Attr)) {
			e.Field[i].Val = o + dwarf.Offset(cu.hdr.off)
		}
	}
	e.Offset += dwarf.Offset(cu.hdr.off)
	return e
}

func hasAttr(specs []attrSpec, attr uint32) bool {
	for _, sp := range specs {
		if sp.attr == attr {
			return true
		}
	}
	return false
}

// refAddrAttrs lists the DW_FORM_ref_addr attributes of the abbreviation
// of the entry at unit-relative offset rel (an empty, non-nil slice when
// there are none).
func (cu *CU) refAddrAttrs(rel uint64) []attrSpec {
	none := []attrSpec{}
	if !cu.tabRead {
		cu.tabRead = true
		if cu.tab.parse(cu.f.Section(".debug_abbrev"), cu.hdr.abbrevOff, &cu.hdr) != nil {
			return none
		}
		for _, sp := range cu.tab.attrs {
			cu.hasRefAddr = cu.hasRefAddr || sp.form == dwbuf.FormRefAddr
		}
	}
	if !cu.hasRefAddr {
		return none
	}
	info, err := cu.f.sectionRange(".debug_info", cu.hdr.off, cu.hdr.end)
	if err != nil || rel >= uint64(len(info)) {
		return none
	}
	r := dwbuf.Cursor{Data: info, Pos: int(rel), Big: cu.big()}
	a := cu.tab.get(r.Uleb())
	if a == nil {
		return none
	}
	out := none
	for _, sp := range a.attrs {
		if sp.form == dwbuf.FormRefAddr {
			out = append(out, sp)
		}
	}
	return out
}

// unitOf returns the unit holding the DIE at absolute offset off: cu, or a
// view of the unit a DW_FORM_ref_addr reference leads to (GCC's -flto
// takes names, parameters and types from the early debug units), enough
// to read its DIEs.
func (cu *CU) unitOf(off uint64) (*CU, error) {
	if off >= cu.hdr.off && off < cu.hdr.end {
		return cu, nil
	}
	units, err := cu.f.unitHeaders()
	if err != nil {
		return nil, err
	}
	i := sort.Search(len(units), func(i int) bool { return units[i].end > off })
	if i == len(units) || off < units[i].dieOff {
		return nil, fmt.Errorf("%s: %w: DIE reference %#x outside every unit", cu.f.Path, ErrBadDWARF, off)
	}
	if cu.foreign == nil {
		cu.foreign = map[uint64]*CU{}
	}
	o := cu.foreign[units[i].off]
	if o == nil {
		u := units[i]
		o = &CU{Index: i, Base: u.off, AddrSize: int(u.AddrSize), f: cu.f, hdr: u, foreign: cu.foreign}
		cu.foreign[u.off] = o
	}
	return o, nil
}

func (cu *CU) relative(off uint64) (dwarf.Offset, error) {
	if off < cu.hdr.off || off >= cu.hdr.end {
		return 0, fmt.Errorf("%s: %w: DIE reference %#x outside its unit [%#x, %#x)", cu.f.Path, ErrBadDWARF, off, cu.hdr.off, cu.hdr.end)
	}
	return dwarf.Offset(off - cu.hdr.off), nil
}

// entryAt positions a reader on the entry at absolute offset off and
// returns it (offsets still unit relative).
func (cu *CU) entryAt(off uint64) (*dwarf.Reader, *dwarf.Entry, error) {
	d, err := cu.unitData()
	if err != nil {
		return nil, nil, err
	}
	rel, err := cu.relative(off)
	if err != nil {
		return nil, nil, err
	}
	r := d.Reader()
	r.Seek(rel)
	e, err := r.Next()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w: DIE at %#x: %v", cu.f.Path, ErrBadDWARF, off, err)
	}
	if e == nil || e.Offset != rel {
		return nil, nil, fmt.Errorf("%s: %w: no DIE at %#x", cu.f.Path, ErrBadDWARF, off)
	}
	return r, e, nil
}

// DIE reads the entry at absolute offset off, in the unit or, following a
// DW_FORM_ref_addr reference, in another.
func (cu *CU) DIE(off uint64) (e *dwarf.Entry, err error) {
	defer cu.recoverInto(&err)
	if o, err := cu.unitOf(off); err != nil || o != cu {
		if err != nil {
			return nil, err
		}
		return o.DIE(off)
	}
	_, e, err = cu.entryAt(off)
	if err != nil {
		return nil, err
	}
	return cu.absolute(e), nil
}

// Children returns the direct children of the entry at off, in order.
func (cu *CU) Children(off uint64) (out []*dwarf.Entry, err error) {
	defer cu.recoverInto(&err)
	if o, err := cu.unitOf(off); err != nil || o != cu {
		if err != nil {
			return nil, err
		}
		return o.Children(off)
	}
	r, e, err := cu.entryAt(off)
	if err != nil {
		return nil, err
	}
	if !e.Children {
		return nil, nil
	}
	for {
		c, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("%s: %w: children of DIE %#x: %v", cu.f.Path, ErrBadDWARF, off, err)
		}
		if c == nil || c.Tag == 0 {
			return out, nil
		}
		if c.Children {
			r.SkipChildren()
		}
		out = append(out, cu.absolute(c))
	}
}

func (cu *CU) recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: %w: unit at %#x: %v", cu.f.Path, ErrBadDWARF, cu.hdr.off, r)
	}
}

// DWARF 5 location list entry kinds.
const (
	lleEndOfList       = 0
	lleBaseAddressx    = 1
	lleStartxEndx      = 2
	lleStartxLength    = 3
	lleOffsetPair      = 4
	lleDefaultLocation = 5
	lleBaseAddress     = 6
	lleStartEnd        = 7
	lleStartLength     = 8
)

// Location returns the location expression that attribute field (a
// DW_AT_location or DW_AT_frame_base) gives at pc, as libdw's
// dwarf_getlocation_addr(..., 1) does: a single expression applies
// everywhere; for a location list, the first entry whose [begin, end)
// holds pc, else a DWARF 5 default location. ok is false when nothing
// covers pc (the variable is optimized out there).
func (cu *CU) Location(field *dwarf.Field, pc uint64) (expr []byte, ok bool, err error) {
	var deflt []byte
	err = cu.eachLocation(field, func(l LocEntry, e []byte) bool {
		switch {
		case l.Default:
			deflt = e
		case l.Begin <= pc && pc < l.End:
			expr, ok = e, true
			return false
		}
		return true
	})
	if err != nil || ok {
		return expr, ok, err
	}
	return deflt, deflt != nil, nil
}

// LocEntry is one entry of a location description, with absolute
// addresses, as libdw's dwarf_getlocations reports it: a single
// expression (exprloc) is one entry from 0 to the largest address, and so
// is a DWARF 5 default location (Default set).
type LocEntry struct {
	Begin, End uint64
	Default    bool
}

// LocationEntries lists the entries of location attribute field in
// order.
func (cu *CU) LocationEntries(field *dwarf.Field) (out []LocEntry, err error) {
	err = cu.eachLocation(field, func(l LocEntry, _ []byte) bool {
		out = append(out, l)
		return true
	})
	return out, err
}

// eachLocation calls fn for every entry of location attribute field until
// fn returns false.
func (cu *CU) eachLocation(field *dwarf.Field, fn func(LocEntry, []byte) bool) (err error) {
	defer cu.recoverInto(&err)
	switch field.Class {
	case dwarf.ClassExprLoc, dwarf.ClassBlock:
		b, _ := field.Val.([]byte)
		fn(LocEntry{Begin: 0, End: ^uint64(0)}, b)
		return nil
	case dwarf.ClassLocListPtr:
		off, _ := field.Val.(int64)
		if cu.hdr.Version >= 5 {
			return cu.eachLocListEntry(uint64(off), fn)
		}
		return cu.eachLocEntry(uint64(off), fn)
	case dwarf.ClassLocList: // DW_FORM_loclistx
		var idx uint64
		switch v := field.Val.(type) {
		case uint64:
			idx = v
		case int64:
			idx = uint64(v)
		}
		off, err := cu.loclistxOffset(idx)
		if err != nil {
			return err
		}
		return cu.eachLocListEntry(off, fn)
	}
	return fmt.Errorf("%s: %w: location attribute of class %v", cu.f.Path, ErrBadDWARF, field.Class)
}

func (cu *CU) badLoc(format string, args ...any) error {
	return fmt.Errorf("%s: %w: unit at %#x: %s", cu.f.Path, ErrBadDWARF, cu.hdr.off, fmt.Sprintf(format, args...))
}

// eachLocEntry walks a DWARF 2-4 .debug_loc list.
func (cu *CU) eachLocEntry(off uint64, fn func(LocEntry, []byte) bool) error {
	sec := cu.f.Section(".debug_loc")
	size := int(cu.hdr.AddrSize)
	base := cu.lowPC
	maxAddr := ^uint64(0)
	if size == 4 {
		maxAddr = 0xffffffff
	}
	if off > uint64(len(sec)) {
		return cu.badLoc(".debug_loc offset %#x out of range", off)
	}
	r := dwbuf.Cursor{Data: sec, Pos: int(off), Big: cu.big()}
	for {
		begin, end := r.Uint(size), r.Uint(size)
		if r.Err() != nil {
			return cu.badLoc("truncated .debug_loc list at %#x", off)
		}
		switch {
		case begin == 0 && end == 0:
			return nil
		case begin == maxAddr:
			base = end
			continue
		}
		n := int(r.U16())
		if r.Err() != nil {
			return cu.badLoc("truncated .debug_loc list at %#x", off)
		}
		if r.Pos+n > len(sec) {
			return cu.badLoc("truncated .debug_loc expression at %#x", r.Pos)
		}
		if !fn(LocEntry{Begin: base + begin, End: base + end}, sec[r.Pos:r.Pos+n]) {
			return nil
		}
		r.Pos += n
	}
}

// big reports a big-endian file.
func (cu *CU) big() bool { return cu.f.big() }

// loclistxOffset resolves a DW_FORM_loclistx index through the unit's
// DW_AT_loclists_base offset table.
func (cu *CU) loclistxOffset(idx uint64) (uint64, error) {
	sec := cu.f.Section(".debug_loclists")
	w := uint64(cu.hdr.OffsetSize())
	at := cu.loclistsBase + idx*w
	if at+w > uint64(len(sec)) {
		return 0, cu.badLoc("loclistx %d out of range", idx)
	}
	r := dwbuf.Cursor{Data: sec, Pos: int(at), Big: cu.big()}
	return cu.loclistsBase + r.Offset(cu.hdr.Dwarf64), nil
}

// address reads entry idx of the unit's .debug_addr table.
func (cu *CU) address(idx uint64) (uint64, error) {
	sec := cu.f.Section(".debug_addr")
	size := uint64(cu.hdr.AddrSize)
	at := cu.addrBase + idx*size
	if at+size > uint64(len(sec)) {
		return 0, cu.badLoc(".debug_addr index %d out of range", idx)
	}
	r := dwbuf.Cursor{Data: sec, Pos: int(at), Big: cu.big()}
	return r.Uint(int(size)), nil
}

// eachLocListEntry walks a DWARF 5 .debug_loclists list.
func (cu *CU) eachLocListEntry(off uint64, fn func(LocEntry, []byte) bool) error {
	sec := cu.f.Section(".debug_loclists")
	if off >= uint64(len(sec)) {
		return cu.badLoc(".debug_loclists offset %#x out of range", off)
	}
	r := dwbuf.Cursor{Data: sec, Pos: int(off), Big: cu.big()}
	size := int(cu.hdr.AddrSize)
	base := cu.lowPC
	for {
		kind := r.U8()
		var begin, end uint64
		var err error
		switch kind {
		case lleEndOfList:
			if r.Err() != nil {
				return cu.badLoc("truncated .debug_loclists list at %#x", off)
			}
			return nil
		case lleBaseAddressx:
			if base, err = cu.address(r.Uleb()); err != nil {
				return err
			}
			continue
		case lleBaseAddress:
			base = r.Uint(size)
			continue
		case lleStartxEndx:
			if begin, err = cu.address(r.Uleb()); err == nil {
				end, err = cu.address(r.Uleb())
			}
		case lleStartxLength:
			if begin, err = cu.address(r.Uleb()); err == nil {
				end = begin + r.Uleb()
			}
		case lleOffsetPair:
			begin = base + r.Uleb()
			end = base + r.Uleb()
		case lleDefaultLocation:
			end = ^uint64(0)
		case lleStartEnd:
			begin = r.Uint(size)
			end = r.Uint(size)
		case lleStartLength:
			begin = r.Uint(size)
			end = begin + r.Uleb()
		default:
			return cu.badLoc("unknown location list entry %#x at %#x", kind, r.Pos-1)
		}
		if err != nil {
			return err
		}
		n := int(r.Uleb())
		if r.Err() != nil || n < 0 || r.Pos+n > len(r.Data) {
			return cu.badLoc("truncated .debug_loclists list at %#x", off)
		}
		expr := r.Data[r.Pos : r.Pos+n]
		r.Pos += n
		if !fn(LocEntry{Begin: begin, End: end, Default: kind == lleDefaultLocation}, expr) {
			return nil
		}
	}
}

// HasLocationLists reports whether some variable or parameter of the unit
// has a location list (DW_FORM_sec_offset), perf's test for a unit built
// with optimization.
func (cu *CU) HasLocationLists() (found bool, err error) {
	defer cu.recoverInto(&err)
	d, err := cu.unitData()
	if err != nil {
		return false, err
	}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return false, fmt.Errorf("%s: %w: unit at %#x: %v", cu.f.Path, ErrBadDWARF, cu.hdr.off, err)
		}
		if e == nil {
			return false, nil
		}
		if e.Tag == dwarf.TagVariable || e.Tag == dwarf.TagFormalParameter {
			if fl := e.AttrField(dwarf.AttrLocation); fl != nil && fl.Class == dwarf.ClassLocListPtr {
				return true, nil
			}
		}
	}
}
