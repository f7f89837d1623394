package golang

import (
	"fmt"
	"strings"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/resolve/internal/dwarfexpr"
	"github.com/gprobe/gprobe/resolve/spec"
)

// Loc is where some bytes of a value are at the probe: the low bytes of
// a register, or memory at the address Base fetches plus Mem, or nowhere
// (the compiler did not keep them).
type Loc struct {
	Off, Size int64 // the bytes of the value: [Off, Off+Size); Size 0 is "the rest"
	Reg       string
	Float     bool // Reg is a floating-point register, which a probe cannot read
	Base      probe.Fetch
	Mem       int64
	None      bool
}

func (l Loc) inMemory() bool { return l.Base != nil }

// Place is where a whole value is: its parts in order.
type Place []Loc

// PlaceOfPieces turns a variable of type t's DWARF location
// (dwarfexpr.Pieces) into a Place. Go writes one piece per scalar of the
// value, without the padding between them (a struct {p *T; b uint8; n
// int} in registers is three pieces of 8, 1 and 8 bytes, where n is at
// offset 16): when the pieces match the type's scalars one for one, they
// take the scalars' offsets, else they follow one another.
func (ts *Types) PlaceOfPieces(t *Type, ps []dwarfexpr.Piece) (Place, error) {
	var leaves [][2]int64
	if len(ps) > 1 {
		var err error
		if leaves, err = ts.leaves(t, 0, nil); err != nil {
			return nil, err
		}
		if len(leaves) != len(ps) {
			leaves = nil
		}
		for i := range leaves {
			if leaves[i][1] != ps[i].Size {
				leaves = nil
				break
			}
		}
	}
	var pl Place
	off := int64(0)
	for i, p := range ps {
		if leaves != nil {
			off = leaves[i][0]
		}
		l := Loc{Off: off, Size: p.Size}
		switch {
		case p.Unreadable != "":
			l.Reg, l.Float = p.Unreadable, true
		case p.Loc == nil:
			l.None = true
		case p.Loc.IsAddress:
			m, ok := p.Loc.Fetch.(probe.Mem)
			if !ok {
				return nil, fmt.Errorf("%w: a Go value at %s", ErrUnsupported, dwarfexpr.Format(p.Loc))
			}
			l.Base, l.Mem = m.Inner, m.Off
		default:
			r, ok := p.Loc.Fetch.(probe.Reg)
			if !ok {
				return nil, fmt.Errorf("%w: a Go value at %s", ErrUnsupported, dwarfexpr.Format(p.Loc))
			}
			l.Reg = string(r)
		}
		pl = append(pl, l)
		off += p.Size
	}
	return pl, nil
}

// leaves lists the scalars of t at offset off, in order: [offset, size].
func (ts *Types) leaves(t *Type, off int64, out [][2]int64) ([][2]int64, error) {
	switch {
	case t.Kind == Complex64 || t.Kind == Complex128:
		return append(out, [2]int64{off, t.Size / 2}, [2]int64{off + t.Size/2, t.Size / 2}), nil
	case t.Kind == String || t.Kind == Slice || t.Kind == Interface || t.Kind == Struct:
		for _, f := range t.Fields {
			ft, err := ts.At(f.Type)
			if err != nil {
				return nil, err
			}
			if out, err = ts.leaves(ft, off+f.Off, out); err != nil {
				return nil, err
			}
		}
		return out, nil
	case t.Kind == Array:
		if t.Len == 0 {
			return out, nil
		}
		et, err := ts.At(t.Elem)
		if err != nil {
			return nil, err
		}
		for i := int64(0); i < t.Len && len(out) < 64; i++ {
			if out, err = ts.leaves(et, off+i*et.Size, out); err != nil {
				return nil, err
			}
		}
		return out, nil
	case t.Size == 0:
		return out, nil
	}
	return append(out, [2]int64{off, t.Size}), nil
}

// PlaceOfParts turns the ABI's parts of a value (Assign) into a Place,
// at a function's entry or return, where the stack-assigned area starts
// 8 bytes above the stack pointer.
func PlaceOfParts(isa arch.Arch, parts []Part) Place {
	var pl Place
	for _, p := range parts {
		l := Loc{Off: p.Off, Size: p.Size, Reg: p.Reg, Float: p.Float}
		if p.Stack {
			l = Loc{Off: p.Off, Size: p.Size, Base: probe.Reg(isa.StackPointer()), Mem: 8 + p.StackOff}
		}
		pl = append(pl, l)
	}
	return pl
}

// at returns the Place of bytes [off, off+size) of the value, when they
// lie in one part (a register holds one whole scalar) or in memory; a
// range over several parts (a string field of a struct held in
// registers) keeps those parts.
func (pl Place) at(off, size int64) (Place, bool) {
	var out Place
	for _, l := range pl {
		end := l.Off + l.Size
		if l.Size == 0 {
			end = off + size // the whole rest (one piece without DW_OP_piece)
		}
		if end <= off || l.Off >= off+size {
			continue
		}
		switch {
		case l.inMemory():
			lo := max(off, l.Off)
			hi := min(off+size, end)
			out = append(out, Loc{Off: lo - off, Size: hi - lo, Base: l.Base, Mem: l.Mem + lo - l.Off})
		case l.Off >= off && end <= off+size:
			l.Off -= off
			out = append(out, l)
		case l.Off == off && !l.None:
			// the low bytes of a register holding more (a smaller field
			// at the start of a piece)
			l.Off, l.Size = 0, size
			out = append(out, l)
		default:
			return nil, false
		}
	}
	if len(out) == 0 {
		return nil, false
	}
	return out, true
}

// scalar returns the fetch of a value of size bytes at the start of pl.
func (pl Place) scalar(name string, size int64) (probe.Fetch, error) {
	p, ok := pl.at(0, size)
	if !ok || len(p) != 1 {
		return nil, fmt.Errorf("%w: %s is split across registers and memory", ErrUnsupported, name)
	}
	l := p[0]
	switch {
	case l.None:
		return nil, fmt.Errorf("%w: %s is not kept anywhere at this address (optimized out)", ErrUnsupported, name)
	case l.Float:
		return nil, fmt.Errorf("%w: %s is in %%%s, a floating-point register, which a probe cannot read", ErrUnsupported, name, l.Reg)
	case l.inMemory():
		return probe.Mem{Off: l.Mem, Inner: l.Base}, nil
	}
	return probe.Reg(l.Reg), nil
}

// Request is one argument asked of a Go value: the value's name (the
// argument's NAME, or perf's default), the fields after it and the cast.
type Request struct {
	Name    string
	Label   string // how the user wrote it, for messages ("t.Name")
	Fields  []spec.Field
	Type    string // the cast, "" for none
	HasType bool
	// Hex prints unsigned numbers and pointers in hex (x64), as perf does
	// when the kernel has hex types; else they are u64.
	Hex bool
}

// Fetch turns a Go value of type t at pl into fetch arguments: through
// the fields of r (Go's own rules: "." and "->" both reach a field
// through any number of pointers, [N] indexes an array, a slice or a
// string's bytes; a string's or slice's len and cap, a slice's array, an
// interface's tab (or _type) and data are its fields; len of a map is its
// element count), then the value itself:
//
//   - a number, bool or pointer (map, channel, func): one argument, typed
//     from its kind (s64, u8, x64 ...) unless cast;
//   - a string: NAME_str (x64) and NAME_len (s64); cast to string
//     (s:string), NAME is its text and NAME_len its length: the kernel
//     reads a string up to a NUL, which a Go string does not end with, so
//     readers cut NAME at NAME_len (gprobe analyze and export do);
//   - a slice: NAME_array, NAME_len, NAME_cap ([]byte cast to string as a
//     string);
//   - an interface: NAME_tab (NAME_type for interface{}) and NAME_data.
//
// Floating-point values, structs and arrays as a whole are refused with
// the reason.
func (ts *Types) Fetch(t *Type, pl Place, r Request) ([]probe.FetchArg, error) {
	label := r.Label
	if label == "" {
		label = r.Name
	}
	for _, f := range r.Fields {
		var err error
		if t, pl, err = ts.field(t, pl, f, label); err != nil {
			return nil, err
		}
		if f.IsIndex {
			label += f.Name
		} else {
			label += "." + f.Name
		}
	}
	return ts.final(t, pl, r, label)
}

// field steps from a value to one of its fields or elements.
func (ts *Types) field(t *Type, pl Place, f spec.Field, label string) (*Type, Place, error) {
	// Go reaches a field through pointers: so does a probe argument.
	for t.Kind == Pointer && !f.IsIndex {
		if t.Elem == 0 {
			return nil, nil, fmt.Errorf("%w: %s is an untyped pointer", ErrNoField, label)
		}
		var err error
		if t, pl, err = ts.deref(t, pl, label); err != nil {
			return nil, nil, err
		}
	}
	switch {
	case f.IsIndex:
		return ts.index(t, pl, f.Index, label)
	case t.Kind == Map && (f.Name == "len" || f.Name == "count"):
		// the map header's element count: hmap.count (before go1.24),
		// the swiss map's used (go1.24 on); both its first word
		h, hpl, err := ts.deref(t, pl, label)
		if err != nil {
			return nil, nil, err
		}
		for _, name := range []string{"used", "count"} {
			if m, ok := h.Field(name); ok {
				return ts.member(h, hpl, m, label)
			}
		}
		return nil, nil, fmt.Errorf("%w: the map header %s has no element count", ErrNoField, h.Name)
	case t.Kind == Map:
		h, hpl, err := ts.deref(t, pl, label)
		if err != nil {
			return nil, nil, err
		}
		t, pl = h, hpl
	}
	if t.Fields == nil {
		return nil, nil, fmt.Errorf("%w: %s is a %s (%s), which has no field %s", ErrNoField, label, t.Kind, t.Name, f.Name)
	}
	m, ok := t.Field(f.Name)
	if !ok && f.Name == "type" && t.Kind == Interface {
		m, ok = t.Field("_type")
	}
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s (%s) has no field %s", ErrNoField, label, t.Name, f.Name)
	}
	return ts.member(t, pl, m, label)
}

func (ts *Types) member(t *Type, pl Place, m Field, label string) (*Type, Place, error) {
	mt, err := ts.At(m.Type)
	if err != nil {
		return nil, nil, err
	}
	mpl, ok := pl.at(m.Off, mt.Size)
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s.%s is not kept anywhere at this address", ErrUnsupported, label, m.Name)
	}
	return mt, mpl, nil
}

// deref follows the pointer t at pl to the value it points to.
func (ts *Types) deref(t *Type, pl Place, label string) (*Type, Place, error) {
	p, err := pl.scalar(label, 8)
	if err != nil {
		return nil, nil, err
	}
	et, err := ts.At(t.Elem)
	if err != nil {
		return nil, nil, err
	}
	return et, Place{{Off: 0, Size: et.Size, Base: p}}, nil
}

// index steps to element i of an array, a slice, a string or what a
// pointer points to.
func (ts *Types) index(t *Type, pl Place, i int64, label string) (*Type, Place, error) {
	var base Place
	var elem uint64
	switch t.Kind {
	case Array:
		et, err := ts.At(t.Elem)
		if err != nil {
			return nil, nil, err
		}
		if i < 0 || i >= t.Len {
			return nil, nil, fmt.Errorf("%w: index %d out of %s's %d elements", ErrNoField, i, label, t.Len)
		}
		epl, ok := pl.at(i*et.Size, et.Size)
		if !ok {
			return nil, nil, fmt.Errorf("%w: %s[%d] is not kept anywhere at this address", ErrUnsupported, label, i)
		}
		return et, epl, nil
	case Slice, String:
		word := "array"
		if t.Kind == String {
			word = "str"
		}
		f, ok := t.Field(word)
		if !ok {
			return nil, nil, fmt.Errorf("%w: %s (%s) has no %s", ErrNoField, label, t.Name, word)
		}
		ptr, ppl, err := ts.member(t, pl, f, label)
		if err != nil {
			return nil, nil, err
		}
		base, elem = ppl, ptr.Elem
	case Pointer:
		base, elem = pl, t.Elem
	default:
		return nil, nil, fmt.Errorf("%w: %s is a %s (%s): it has no elements", ErrNoField, label, t.Kind, t.Name)
	}
	p, err := base.scalar(label, 8)
	if err != nil {
		return nil, nil, err
	}
	et, err := ts.At(elem)
	if err != nil {
		return nil, nil, err
	}
	return et, Place{{Off: 0, Size: et.Size, Base: p, Mem: i * et.Size}}, nil
}

// final makes the fetch arguments of the value reached.
func (ts *Types) final(t *Type, pl Place, r Request, label string) ([]probe.FetchArg, error) {
	cast := r.Type
	if !r.HasType {
		cast = ""
	}
	switch {
	case t.Kind == String || t.Kind == Slice:
		if cast == "string" || cast == "ustring" {
			if t.Kind == Slice {
				if et, err := ts.At(t.Elem); err != nil || et.Size != 1 {
					return nil, fmt.Errorf("%w: %s is a %s: only a string or a []byte reads as a string", ErrUnsupported, label, t.Name)
				}
			}
			return ts.text(t, pl, r.Name, label, cast)
		}
		if cast != "" {
			return nil, fmt.Errorf("%w: %s is a Go %s (%s), several words: cast one of its fields, or cast it to string", ErrUnsupported, label, t.Kind, t.Name)
		}
		return ts.words(t, pl, r.Name, label, r.Hex)
	case t.Kind == Interface:
		if cast != "" {
			return nil, fmt.Errorf("%w: %s is an interface (%s), two words: cast one of its fields", ErrUnsupported, label, t.Name)
		}
		return ts.words(t, pl, r.Name, label, r.Hex)
	case t.Kind.integer() || t.Kind.pointerShaped():
		typ, err := scalarType(t, cast, label, r.Hex)
		if err != nil {
			return nil, err
		}
		f, err := pl.scalar(label, t.Size)
		if err != nil {
			return nil, err
		}
		if cast == "string" || cast == "ustring" {
			f = probe.Mem{Inner: f}
		}
		return []probe.FetchArg{{Name: r.Name, Expr: f, Type: typ}}, nil
	case t.Kind.float():
		if cast == "" || cast == "string" || cast == "ustring" {
			f, err := pl.scalar(label, t.Size)
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %s is a %s at %s, and the kernel's fetch types are integers: cast it (%s:x%d) to read its bits", ErrUnsupported, label, t.Kind, f, label, 8*t.Size)
		}
		f, err := pl.scalar(label, t.Size)
		if err != nil {
			return nil, err
		}
		return []probe.FetchArg{{Name: r.Name, Expr: f, Type: cast}}, nil
	}
	what := "its fields"
	if t.Kind == Array {
		what = "its elements"
	}
	return nil, fmt.Errorf("%w: %s is a %s (%s): fetch %s", ErrUnsupported, label, t.Kind, t.Name, what)
}

// scalarType is the fetch type of a scalar: the cast when there is one
// (perf's bare s, u, x take the value's size), else by kind as perf types
// a C value: signed integers sN, the rest xN with hex, else uN.
func scalarType(t *Type, cast, label string, hex bool) (string, error) {
	bits := 8 * t.Size
	switch cast {
	case "":
	case "s", "u", "x":
		return fmt.Sprintf("%s%d", cast, bits), nil
	case "string", "ustring":
		if t.Kind != Pointer {
			return "", fmt.Errorf("%w: %s is a %s (%s), not a string", ErrUnsupported, label, t.Kind, t.Name)
		}
		return cast, nil
	default:
		return cast, nil
	}
	switch {
	case t.Kind.signed():
		return fmt.Sprintf("s%d", bits), nil
	case hex:
		return fmt.Sprintf("x%d", bits), nil
	}
	return fmt.Sprintf("u%d", bits), nil
}

// words fetches each word of a string, slice or interface header as
// NAME_FIELD.
func (ts *Types) words(t *Type, pl Place, name, label string, hex bool) ([]probe.FetchArg, error) {
	var out []probe.FetchArg
	for _, f := range t.Fields {
		ft, fpl, err := ts.member(t, pl, f, label)
		if err != nil {
			return nil, err
		}
		typ, err := scalarType(ft, "", label+"."+f.Name, hex)
		if err != nil {
			return nil, err
		}
		fe, err := fpl.scalar(label+"."+f.Name, ft.Size)
		if err != nil {
			return nil, err
		}
		out = append(out, probe.FetchArg{Name: name + "_" + strings.TrimPrefix(f.Name, "_"), Expr: fe, Type: typ})
	}
	return out, nil
}

// text fetches a string's (or []byte's) bytes as text and its length.
func (ts *Types) text(t *Type, pl Place, name, label, cast string) ([]probe.FetchArg, error) {
	word := "str"
	if t.Kind == Slice {
		word = "array"
	}
	pf, ok := t.Field(word)
	lf, ok2 := t.Field("len")
	if !ok || !ok2 {
		return nil, fmt.Errorf("%w: %s (%s) has no %s and len", ErrNoField, label, t.Name, word)
	}
	_, ppl, err := ts.member(t, pl, pf, label)
	if err != nil {
		return nil, err
	}
	p, err := ppl.scalar(label+"."+word, 8)
	if err != nil {
		return nil, err
	}
	lt, lpl, err := ts.member(t, pl, lf, label)
	if err != nil {
		return nil, err
	}
	n, err := lpl.scalar(label+".len", lt.Size)
	if err != nil {
		return nil, err
	}
	return []probe.FetchArg{
		{Name: name, Expr: probe.Mem{Inner: p}, Type: cast},
		{Name: name + probe.LenSuffix, Expr: n, Type: fmt.Sprintf("s%d", 8*lt.Size)},
	}, nil
}
