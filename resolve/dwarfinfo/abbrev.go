package dwarfinfo

import (
	"fmt"
)

// DWARF constants used by the scanner (DWARF 5, sections 7.5-7.7).
const (
	tagCompileUnit       = 0x11
	tagSubprogram        = 0x2e
	tagInlinedSubroutine = 0x1d
	tagLexicalBlock      = 0x0b
	tagPartialUnit       = 0x3c
	tagSkeletonUnit      = 0x4a

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

	formAddr          = 0x01
	formBlock2        = 0x03
	formBlock4        = 0x04
	formData2         = 0x05
	formData4         = 0x06
	formData8         = 0x07
	formString        = 0x08
	formBlock         = 0x09
	formBlock1        = 0x0a
	formData1         = 0x0b
	formFlag          = 0x0c
	formSdata         = 0x0d
	formStrp          = 0x0e
	formUdata         = 0x0f
	formRefAddr       = 0x10
	formRef1          = 0x11
	formRef2          = 0x12
	formRef4          = 0x13
	formRef8          = 0x14
	formRefUdata      = 0x15
	formIndirect      = 0x16
	formSecOffset     = 0x17
	formExprloc       = 0x18
	formFlagPresent   = 0x19
	formStrx          = 0x1a
	formAddrx         = 0x1b
	formRefSup4       = 0x1c
	formStrpSup       = 0x1d
	formData16        = 0x1e
	formLineStrp      = 0x1f
	formRefSig8       = 0x20
	formImplicitConst = 0x21
	formLoclistx      = 0x22
	formRnglistx      = 0x23
	formRefSup8       = 0x24
	formStrx1         = 0x25
	formStrx2         = 0x26
	formStrx3         = 0x27
	formStrx4         = 0x28
	formAddrx1        = 0x29
	formAddrx2        = 0x2a
	formAddrx3        = 0x2b
	formAddrx4        = 0x2c
	formGNUAddrIndex  = 0x1f01
	formGNUStrIndex   = 0x1f02
	formGNURefAlt     = 0x1f20
	formGNUStrpAlt    = 0x1f21
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
	r := reader{b: sec, pos: int(off)}
	for {
		code := r.uleb()
		if r.bad || code == 0 {
			break
		}
		a := abbrev{tag: uint32(r.uleb()), children: r.u8() != 0, valid: true}
		start := len(t.attrs)
		fixed := 0
		for {
			at, fm := r.uleb(), r.uleb()
			if r.bad || at == 0 && fm == 0 {
				break
			}
			s := attrSpec{attr: uint32(at), form: uint32(fm)}
			if fm == formImplicitConst {
				s.implicit = r.sleb()
			}
			if at == atSibling {
				a.hasSibling = true
			}
			t.attrs = append(t.attrs, s)
			if n := fixedSize(uint32(fm), u); n >= 0 && fixed >= 0 {
				fixed += n
			} else {
				fixed = -1
			}
		}
		a.fixed = fixed
		t.spans = append(t.spans, abbrevSpan{code, a, start, len(t.attrs)})
	}
	if r.bad {
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

// fixedSize is the encoded size of a form when it does not depend on the
// data, or -1.
func fixedSize(form uint32, u *unitHeader) int {
	off := 4
	if u.dwarf64 {
		off = 8
	}
	switch form {
	case formAddr:
		return int(u.addrSize)
	case formData1, formRef1, formFlag, formStrx1, formAddrx1:
		return 1
	case formData2, formRef2, formStrx2, formAddrx2:
		return 2
	case formStrx3, formAddrx3:
		return 3
	case formData4, formRef4, formRefSup4, formStrx4, formAddrx4:
		return 4
	case formData8, formRef8, formRefSig8, formRefSup8:
		return 8
	case formData16:
		return 16
	case formFlagPresent, formImplicitConst:
		return 0
	case formStrp, formLineStrp, formSecOffset, formStrpSup, formGNURefAlt, formGNUStrpAlt:
		return off
	case formRefAddr:
		if u.version <= 2 {
			return int(u.addrSize)
		}
		return off
	}
	return -1
}

// reader is the scanner's byte reader: no allocation, a sticky bad flag.
type reader struct {
	b   []byte
	pos int
	bad bool
}

func (r *reader) u8() byte {
	if r.pos >= len(r.b) {
		r.bad = true
		return 0
	}
	r.pos++
	return r.b[r.pos-1]
}

func (r *reader) uleb() uint64 {
	var v uint64
	var shift uint
	for r.pos < len(r.b) {
		c := r.b[r.pos]
		r.pos++
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c < 0x80 {
			return v
		}
	}
	r.bad = true
	return 0
}

func (r *reader) sleb() int64 {
	var v int64
	var shift uint
	for r.pos < len(r.b) {
		c := r.b[r.pos]
		r.pos++
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c < 0x80 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
	r.bad = true
	return 0
}

// uint reads an n-byte little- or big-endian unsigned value.
func (r *reader) uint(n int, big bool) uint64 {
	if n < 0 || r.pos+n > len(r.b) || r.pos+n < r.pos {
		r.bad = true
		r.pos = len(r.b)
		return 0
	}
	var v uint64
	p := r.b[r.pos : r.pos+n]
	if big {
		for _, c := range p {
			v = v<<8 | uint64(c)
		}
	} else {
		for i := n - 1; i >= 0; i-- {
			v = v<<8 | uint64(p[i])
		}
	}
	r.pos += n
	return v
}

func (r *reader) skip(n uint64) {
	if n > uint64(len(r.b)-r.pos) {
		r.bad = true
		r.pos = len(r.b)
		return
	}
	r.pos += int(n)
}
