package dwarfinfo

import (
	"fmt"

	"github.com/gprobe/gprobe/internal/dwbuf"
)

// DWARF constants used by the scanner (DWARF 5, sections 7.5-7.7).
const (
	tagCompileUnit       = 0x11
	tagSubprogram        = 0x2e
	tagInlinedSubroutine = 0x1d
	tagLexicalBlock      = 0x0b
	tagPartialUnit       = 0x3c
	tagSkeletonUnit      = 0x4a
	tagClassType         = 0x02
	tagStructureType     = 0x13
	tagModule            = 0x1e
	tagNamespace         = 0x39

	langC89 = 0x01
	langC   = 0x02
	langC99 = 0x0c
	langC11 = 0x1d

	atSibling        = 0x01
	atName           = 0x03
	atLowPC          = 0x11
	atHighPC         = 0x12
	atLanguage       = 0x13
	atCompDir        = 0x1b
	atInline         = 0x20
	atAbstractOrigin = 0x31
	atDeclaration    = 0x3c
	atDeclFile       = 0x3a
	atDeclLine       = 0x3b
	atSpecification  = 0x47
	atEntryPC        = 0x52
	atRanges         = 0x55
	atCallFile       = 0x58
	atCallLine       = 0x59
	atLinkageName    = 0x6e
	atStrOffsetsBase = 0x72
	atAddrBase       = 0x73
	atRnglistsBase   = 0x74
	atLoclistsBase   = 0x8c
	atMIPSLinkage    = 0x2007
	atStmtList       = 0x10
	atFrameBase      = 0x40
	opCallFrameCFA   = 0x9c
)

type attrSpec struct {
	attr     uint32
	form     uint32
	implicit int64
}

type abbrev struct {
	tag      uint32
	children bool
	attrs    []attrSpec
	// fixed is the byte size of all attributes when every form has a size
	// known from the unit header alone, else -1.
	fixed int
	// hasSibling reports a DW_AT_sibling attribute.
	hasSibling bool
	valid      bool
}

// abbrevTable is one unit's abbreviation table. Its storage is reused from
// unit to unit by a scanner, so it allocates only when it grows.
type abbrevTable struct {
	dense  []abbrev // by code, when codes are small
	sparse map[uint64]*abbrev
	attrs  []attrSpec
	spans  []abbrevSpan // scratch for parse
}

// abbrevSpan is a parsed abbreviation whose attributes are
// attrs[start:end] (slices are taken once attrs stops growing).
type abbrevSpan struct {
	code       uint64
	a          abbrev
	start, end int
}

func (t *abbrevTable) get(code uint64) *abbrev {
	if code < uint64(len(t.dense)) {
		if a := &t.dense[code]; a.valid {
			return a
		}
		return nil
	}
	return t.sparse[code]
}

// parse fills t with the table at off of sec, for a unit whose offset and
// address sizes fix the size of some forms.
func (t *abbrevTable) parse(sec []byte, off uint64, u *unitHeader) error {
	if off >= uint64(len(sec)) {
		return fmt.Errorf("%w: abbrev offset %#x out of range", ErrBadDWARF, off)
	}
	for i := range t.dense {
		t.dense[i] = abbrev{}
	}
	t.dense, t.sparse, t.attrs, t.spans = t.dense[:0], nil, t.attrs[:0], t.spans[:0]
	r := dwbuf.Cursor{Data: sec, Pos: int(off)}
	for {
		code := r.Uleb()
		if r.Err() != nil || code == 0 {
			break
		}
		a := abbrev{tag: uint32(r.Uleb()), children: r.U8() != 0, valid: true}
		start := len(t.attrs)
		fixed := 0
		for {
			at, fm := r.Uleb(), r.Uleb()
			if r.Err() != nil || at == 0 && fm == 0 {
				break
			}
			s := attrSpec{attr: uint32(at), form: uint32(fm)}
			if fm == dwbuf.FormImplicitConst {
				s.implicit = r.Sleb()
			}
			if at == atSibling {
				a.hasSibling = true
			}
			t.attrs = append(t.attrs, s)
			if n := u.FixedSize(uint32(fm)); n >= 0 && fixed >= 0 {
				fixed += n
			} else {
				fixed = -1
			}
		}
		a.fixed = fixed
		t.spans = append(t.spans, abbrevSpan{code, a, start, len(t.attrs)})
	}
	if r.Err() != nil {
		return fmt.Errorf("%w: truncated abbrev table at %#x", ErrBadDWARF, off)
	}
	// Slices into t.attrs are taken only now that it stopped growing.
	for _, sp := range t.spans {
		a := sp.a
		a.attrs = t.attrs[sp.start:sp.end:sp.end]
		if sp.code < 1<<16 {
			for uint64(len(t.dense)) <= sp.code {
				t.dense = append(t.dense, abbrev{})
			}
			t.dense[sp.code] = a
		} else {
			if t.sparse == nil {
				t.sparse = map[uint64]*abbrev{}
			}
			ac := a
			t.sparse[sp.code] = &ac
		}
	}
	return nil
}
