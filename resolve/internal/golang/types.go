package golang

import (
	"debug/dwarf"
	"fmt"

	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// Kind is a Go type's kind, numbered as reflect.Kind and as the Go
// compiler writes it in DW_AT_go_kind.
type Kind uint8

// The kinds.
const (
	Invalid Kind = iota
	Bool
	Int
	Int8
	Int16
	Int32
	Int64
	Uint
	Uint8
	Uint16
	Uint32
	Uint64
	Uintptr
	Float32
	Float64
	Complex64
	Complex128
	Array
	Chan
	Func
	Interface
	Map
	Pointer
	Slice
	String
	Struct
	UnsafePointer
)

var kindNames = [...]string{"invalid", "bool", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
	"uintptr", "float32", "float64", "complex64", "complex128", "array", "chan", "func", "interface", "map", "pointer", "slice",
	"string", "struct", "unsafe.Pointer"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// integer reports an integer kind (bool included: one byte, 0 or 1).
func (k Kind) integer() bool { return k >= Bool && k <= Uintptr }

// signed reports a signed integer kind.
func (k Kind) signed() bool { return k >= Int && k <= Int64 }

// float reports a floating-point or complex kind.
func (k Kind) float() bool { return k >= Float32 && k <= Complex128 }

// pointerShaped reports a kind held in one pointer: pointers, maps,
// channels, functions.
func (k Kind) pointerShaped() bool {
	return k == Pointer || k == UnsafePointer || k == Map || k == Chan || k == Func
}

// DWARF attributes the Go compiler adds (cmd/internal/dwarf).
const (
	attrGoKind = dwarf.Attr(0x2900)
	attrGoElem = dwarf.Attr(0x2902)
)

// Type is a Go type as the program's DWARF describes it. Fields, Elem
// and Len are those of the DWARF type after typedefs: a string is the
// struct {str *uint8; len int}, a slice {array *T; len, cap int}, an
// interface runtime.iface {tab, data} (or runtime.eface {_type, data}
// for one without methods); a map, channel or function is a pointer.
type Type struct {
	Off  uint64 // the DIE first read (the typedef a variable names)
	Name string // as the program's DWARF names it: "int", "main.T", "error", "[]string"
	Kind Kind
	Size int64
	// Fields are a struct's members (and a string's, slice's, interface's).
	Fields []Field
	// Elem is the DIE of a pointer's, array's or slice's element type
	// (0 when there is none, as for unsafe.Pointer).
	Elem uint64
	// Len is an array's length.
	Len int64
}

// Field is a struct member.
type Field struct {
	Name string
	Off  int64  // byte offset in the struct
	Type uint64 // its type's DIE
}

// Field returns the member named name.
func (t *Type) Field(name string) (Field, bool) {
	for _, f := range t.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Align is the type's alignment, by Go's rules (the DWARF does not say):
// a scalar's size up to 8, a struct's or array's largest member's.
func (ts *Types) Align(t *Type) (int64, error) {
	switch {
	case t.Kind == Complex64:
		return 4, nil
	case t.Kind == Complex128:
		return 8, nil
	case t.Kind == Array:
		if t.Len == 0 || t.Elem == 0 {
			return 1, nil
		}
		e, err := ts.At(t.Elem)
		if err != nil {
			return 0, err
		}
		return ts.Align(e)
	case t.Kind == Struct:
		a := int64(1)
		for _, f := range t.Fields {
			ft, err := ts.At(f.Type)
			if err != nil {
				return 0, err
			}
			fa, err := ts.Align(ft)
			if err != nil {
				return 0, err
			}
			a = max(a, fa)
		}
		return a, nil
	case t.Kind == String || t.Kind == Slice || t.Kind == Interface:
		return 8, nil
	}
	return max(1, min(t.Size, 8)), nil
}

// Types reads Go types from a program's DWARF, each DIE once.
type Types struct {
	cu    *dwarfinfo.CU
	cache map[uint64]*Type
}

// NewTypes reads types through cu (any unit of the program: DIEs of other
// units are followed).
func NewTypes(cu *dwarfinfo.CU) *Types {
	return &Types{cu: cu, cache: map[uint64]*Type{}}
}

// At returns the type whose DIE is at off.
func (ts *Types) At(off uint64) (*Type, error) {
	if t, ok := ts.cache[off]; ok {
		return t, nil
	}
	t, err := ts.read(off)
	if err != nil {
		return nil, err
	}
	ts.cache[off] = t
	return t, nil
}

// TypeOf returns the type of the DIE e (a variable, a parameter, a
// member; the concrete instance of an inlined function's parameter takes
// it from its abstract origin).
func (ts *Types) TypeOf(e *dwarf.Entry) (*Type, error) {
	e, err := ts.origin(e, dwarf.AttrType)
	if err != nil {
		return nil, err
	}
	off, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
	if !ok {
		return nil, fmt.Errorf("%w: %s has no type", ErrUnsupported, ts.Name(e))
	}
	return ts.At(uint64(off))
}

// Name is the DW_AT_name of e, or of its abstract origin.
func (ts *Types) Name(e *dwarf.Entry) string {
	if o, err := ts.origin(e, dwarf.AttrName); err == nil {
		if n, ok := o.Val(dwarf.AttrName).(string); ok {
			return n
		}
	}
	return fmt.Sprintf("the DIE at %#x", e.Offset)
}

// origin follows DW_AT_abstract_origin from e to the DIE that has attr.
func (ts *Types) origin(e *dwarf.Entry, attr dwarf.Attr) (*dwarf.Entry, error) {
	for i := 0; i < 8 && e.Val(attr) == nil; i++ {
		o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			break
		}
		var err error
		if e, err = ts.cu.DIE(uint64(o)); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// read follows typedefs from off to the type they name: the name is the
// first one met, the kind the first DW_AT_go_kind (error is a typedef of
// kind interface of a typedef of runtime.iface, a struct).
func (ts *Types) read(off uint64) (*Type, error) {
	t := &Type{Off: off}
	cur := off
	for hops := 0; ; hops++ {
		if hops == 16 {
			return nil, fmt.Errorf("%w: typedef chain from %#x too long", dwarfinfo.ErrBadDWARF, off)
		}
		e, err := ts.cu.DIE(cur)
		if err != nil {
			return nil, err
		}
		if t.Name == "" {
			t.Name, _ = e.Val(dwarf.AttrName).(string)
		}
		if k, ok := e.Val(attrGoKind).(int64); ok && t.Kind == Invalid {
			t.Kind = Kind(k)
		}
		if e.Tag == dwarf.TagTypedef {
			next, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
			if !ok {
				return nil, fmt.Errorf("%w: typedef %s names no type", dwarfinfo.ErrBadDWARF, t.Name)
			}
			cur = uint64(next)
			continue
		}
		return t, ts.fill(t, e)
	}
}

// DWARF base type encodings.
const (
	ateBoolean  = 0x02
	ateComplex  = 0x03
	ateFloat    = 0x04
	ateSigned   = 0x05
	ateUnsigned = 0x07
	ateUchar    = 0x08
)

// fill completes t from the DIE e its typedefs lead to.
func (ts *Types) fill(t *Type, e *dwarf.Entry) error {
	if sz, ok := e.Val(dwarf.AttrByteSize).(int64); ok {
		t.Size = sz
	}
	elem, _ := e.Val(dwarf.AttrType).(dwarf.Offset)
	switch e.Tag {
	case dwarf.TagBaseType:
		if t.Kind == Invalid {
			enc, _ := e.Val(dwarf.AttrEncoding).(int64)
			t.Kind = baseKind(enc, t.Size)
		}
	case dwarf.TagPointerType:
		t.Elem = uint64(elem)
		if t.Size == 0 {
			t.Size = 8
		}
		if t.Kind == Invalid || t.Kind == Struct {
			t.Kind = Pointer
		}
	case dwarf.TagStructType, dwarf.TagUnionType:
		if t.Kind == Invalid {
			t.Kind = Struct
		}
		kids, err := ts.cu.Children(uint64(e.Offset))
		if err != nil {
			return err
		}
		for _, k := range kids {
			if k.Tag != dwarf.TagMember {
				continue
			}
			off, _ := k.Val(dwarf.AttrDataMemberLoc).(int64)
			typ, _ := k.Val(dwarf.AttrType).(dwarf.Offset)
			name, _ := k.Val(dwarf.AttrName).(string)
			t.Fields = append(t.Fields, Field{Name: name, Off: off, Type: uint64(typ)})
		}
		if t.Kind == Slice {
			if ge, ok := e.Val(attrGoElem).(dwarf.Offset); ok {
				t.Elem = uint64(ge)
			}
		}
	case dwarf.TagArrayType:
		t.Kind = Array
		t.Elem = uint64(elem)
		kids, err := ts.cu.Children(uint64(e.Offset))
		if err != nil {
			return err
		}
		for _, k := range kids {
			if k.Tag != dwarf.TagSubrangeType {
				continue
			}
			if n, ok := k.Val(dwarf.AttrCount).(int64); ok {
				t.Len = n
			} else if ub, ok := k.Val(dwarf.AttrUpperBound).(int64); ok {
				t.Len = ub + 1
			}
		}
	case dwarf.TagSubroutineType:
		// a func value: a pointer to its closure
		t.Kind, t.Size = Func, 8
	default:
		if t.Kind == Invalid {
			return fmt.Errorf("%w: %s is a %v", ErrUnsupported, t.Name, e.Tag)
		}
	}
	if t.Kind == Slice && t.Elem == 0 {
		// the slice header's array member points to the element
		if f, ok := t.Field("array"); ok {
			p, err := ts.At(f.Type)
			if err != nil {
				return err
			}
			t.Elem = p.Elem
		}
	}
	return nil
}

// baseKind is the kind of a DWARF base type without DW_AT_go_kind.
func baseKind(enc, size int64) Kind {
	switch enc {
	case ateBoolean:
		return Bool
	case ateFloat:
		if size == 4 {
			return Float32
		}
		return Float64
	case ateComplex:
		if size == 8 {
			return Complex64
		}
		return Complex128
	case ateSigned:
		return [...]Kind{1: Int8, 2: Int16, 4: Int32, 8: Int64}[min(max(size, 0), 8)]
	case ateUnsigned, ateUchar:
		return [...]Kind{1: Uint8, 2: Uint16, 4: Uint32, 8: Uint64}[min(max(size, 0), 8)]
	}
	return Invalid
}
