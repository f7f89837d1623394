package dwbuf

import (
	"bytes"
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
)

// The form tests build a one-unit .debug_info whose first DIE holds one
// attribute of the form under test followed by a DW_FORM_data1 sentinel,
// then a second, attribute-less DIE. debug/dwarf decodes the same bytes:
// its value, the sentinel and the second DIE's offset pin what Value
// returns and how many bytes it consumes.

// layouts are the unit headers tried: versions, address and offset sizes,
// byte orders (debug/dwarf cannot guess the byte order of 64-bit
// big-endian units).
var layouts = []struct {
	f   Format
	big bool
}{
	{Format{Version: 2, AddrSize: 4}, false},
	{Format{Version: 3, AddrSize: 8}, false},
	{Format{Version: 4, AddrSize: 8}, false},
	{Format{Version: 5, AddrSize: 8}, false},
	{Format{Version: 5, AddrSize: 8, Dwarf64: true}, false},
	{Format{Version: 4, AddrSize: 4, Dwarf64: true}, false},
	{Format{Version: 4, AddrSize: 4}, true},
	{Format{Version: 5, AddrSize: 8}, true},
}

// oracleForms are the forms debug/dwarf decodes too (not the GNU index
// forms, nor DW_FORM_indirect, which Value leaves to its caller).
var oracleForms = []uint32{
	FormAddr, FormBlock2, FormBlock4, FormData2, FormData4, FormData8, FormString,
	FormBlock, FormBlock1, FormData1, FormFlag, FormSdata, FormStrp, FormUdata,
	FormRefAddr, FormRef1, FormRef2, FormRef4, FormRef8, FormRefUdata, FormSecOffset,
	FormExprloc, FormFlagPresent, FormStrx, FormAddrx, FormRefSup4, FormStrpSup,
	FormData16, FormLineStrp, FormRefSig8, FormImplicitConst, FormLoclistx,
	FormRnglistx, FormRefSup8, FormStrx1, FormStrx2, FormStrx3, FormStrx4,
	FormAddrx1, FormAddrx2, FormAddrx3, FormAddrx4, FormGNURefAlt, FormGNUStrpAlt,
}

const (
	implicitValue = -5
	sentinel      = 0x5a
)

// Sections the forms refer to.
var (
	strSec     = []byte("\x00producer\x00name\x00")
	lineStrSec = []byte("\x00/comp/dir\x00file.c\x00")
	addrSec    = bytes.Repeat([]byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}, 8)
	strOffsSec = make([]byte, 64) // every index names ""
	rnglists   = make([]byte, 64)
)

func byteOrder(bigEndian bool) binary.AppendByteOrder {
	if bigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// buildUnit returns .debug_info and .debug_abbrev for value as the bytes
// of an attribute of form, and the offset of the DIE's first attribute.
func buildUnit(f Format, bigEndian bool, form uint32, value []byte) (info, abbrev []byte, attrs int) {
	order := byteOrder(bigEndian)
	abbrev = appendUleb(nil, 1)
	abbrev = append(appendUleb(abbrev, 0x34), 0) // DW_TAG_variable, no children
	abbrev = appendUleb(appendUleb(abbrev, 0x2001), uint64(form))
	if form == FormImplicitConst {
		abbrev = appendSleb(abbrev, implicitValue)
	}
	abbrev = appendUleb(appendUleb(abbrev, 0x2002), FormData1)
	abbrev = append(abbrev, 0, 0)
	abbrev = append(appendUleb(abbrev, 2), 0x34, 0, 0, 0, 0)

	var hdr []byte // after the length
	hdr = order.AppendUint16(hdr, f.Version)
	if f.Version >= 5 {
		hdr = append(hdr, 0x01, f.AddrSize) // DW_UT_compile
	}
	if f.Dwarf64 {
		hdr = order.AppendUint64(hdr, 0)
	} else {
		hdr = order.AppendUint32(hdr, 0)
	}
	if f.Version < 5 {
		hdr = append(hdr, f.AddrSize)
	}
	body := append(hdr, 1)
	attrsInBody := len(body)
	body = append(body, value...)
	body = append(body, sentinel, 2)
	if f.Dwarf64 {
		info = order.AppendUint32(info, 0xffffffff)
		info = order.AppendUint64(info, uint64(len(body)))
	} else {
		info = order.AppendUint32(info, uint32(len(body)))
	}
	attrs = len(info) + attrsInBody
	return append(info, body...), abbrev, attrs
}

// stdlibDecode decodes the unit with debug/dwarf: the attribute's value,
// the sentinel's, and the offset of the second DIE (-1 if none).
func stdlibDecode(info, abbrev []byte) (val, sent any, next int64, err error) {
	d, err := dwarf.New(abbrev, nil, nil, info, nil, nil, nil, strSec)
	if err != nil {
		return nil, nil, -1, err
	}
	for name, sec := range map[string][]byte{".debug_line_str": lineStrSec, ".debug_addr": addrSec,
		".debug_str_offsets": strOffsSec, ".debug_rnglists": rnglists} {
		if err := d.AddSection(name, sec); err != nil {
			return nil, nil, -1, err
		}
	}
	r := d.Reader()
	e, err := r.Next()
	if err != nil {
		return nil, nil, -1, err
	}
	if e == nil || len(e.Field) != 2 {
		return nil, nil, -1, fmt.Errorf("unexpected entry %+v", e)
	}
	next = -1
	if e2, err := r.Next(); err == nil && e2 != nil && e2.Tag == 0x34 {
		next = int64(e2.Offset)
	}
	return e.Field[0].Val, e.Field[1].Val, next, nil
}

// agree reports whether Value's result v (read at attrs in info) means
// what debug/dwarf's decoded value does. Indices are resolved through the
// sections as debug/dwarf does (bases are 0: the unit DIE names none);
// blocks are compared by length only (the sentinel and the next DIE).
func agree(f Format, bigEndian bool, form uint32, v uint64, info []byte, want any) bool {
	at := func(sec []byte, idx uint64, size int) uint64 {
		r := Cursor{Data: sec, Big: bigEndian}
		r.Skip(idx * uint64(size))
		return r.Uint(size)
	}
	switch form {
	case FormAddrx, FormAddrx1, FormAddrx2, FormAddrx3, FormAddrx4:
		return want == at(addrSec, v, int(f.AddrSize))
	case FormRnglistx:
		return want == at(rnglists, v, f.OffsetSize())
	case FormStrx, FormStrx1, FormStrx2, FormStrx3, FormStrx4:
		return want == string(CStringAt(strSec, at(strOffsSec, v, f.OffsetSize())))
	case FormString:
		return want == string(CStringAt(info, v))
	case FormStrp:
		return want == string(CStringAt(strSec, v))
	case FormLineStrp:
		return want == string(CStringAt(lineStrSec, v))
	case FormImplicitConst:
		return v == 0 && want == int64(implicitValue) // the caller's, from the abbreviation
	}
	switch w := want.(type) {
	case int64:
		return v == uint64(w)
	case uint64:
		return v == w
	case uint32:
		return v == uint64(w)
	case bool:
		return (v == 1) == w
	case dwarf.Offset: // debug/dwarf's offsets are 32-bit
		return uint32(v) == uint32(w)
	case []byte:
		return v == 0
	}
	return false
}

// resolving forms make debug/dwarf look into another section, where a
// fuzzed value may point nowhere.
func resolving(form uint32) bool {
	switch form {
	case FormStrp, FormLineStrp, FormStrx, FormStrx1, FormStrx2, FormStrx3, FormStrx4,
		FormAddrx, FormAddrx1, FormAddrx2, FormAddrx3, FormAddrx4, FormRnglistx:
		return true
	}
	return false
}

// lebForm: the value starts with a LEB128 number, which debug/dwarf reads
// as 0 without consuming anything when it is unterminated.
func lebForm(form uint32) bool {
	switch form {
	case FormSdata, FormUdata, FormRefUdata, FormStrx, FormAddrx, FormLoclistx, FormRnglistx, FormBlock, FormExprloc:
		return true
	}
	return false
}

// encode returns a well-formed value of form for f; offsets and indices
// name entries of the sections above.
func encode(f Format, bigEndian bool, form uint32) []byte {
	order := byteOrder(bigEndian)
	switch form {
	case FormFlag:
		return []byte{1}
	case FormString:
		return []byte("hello\x00")
	case FormStrp:
		return fixedBytes(bigEndian, f.OffsetSize(), 10) // "name"
	case FormLineStrp:
		return fixedBytes(bigEndian, f.OffsetSize(), 11) // "file.c"
	case FormSdata:
		return appendSleb(nil, -300)
	case FormUdata, FormRefUdata, FormStrx, FormAddrx, FormLoclistx, FormRnglistx, FormGNUAddrIndex, FormGNUStrIndex:
		return appendUleb(nil, 3)
	case FormBlock1:
		return []byte{3, 0xa, 0xb, 0xc}
	case FormBlock2:
		return append(order.AppendUint16(nil, 3), 0xa, 0xb, 0xc)
	case FormBlock4:
		return append(order.AppendUint32(nil, 3), 0xa, 0xb, 0xc)
	case FormBlock, FormExprloc:
		return append(appendUleb(nil, 130), make([]byte, 130)...)
	case FormStrx1, FormAddrx1, FormStrx2, FormAddrx2, FormStrx3, FormAddrx3, FormStrx4, FormAddrx4:
		return fixedBytes(bigEndian, f.FixedSize(form), 2)
	}
	if n := f.FixedSize(form); n >= 0 {
		return fixedBytes(bigEndian, n, 0x0102030405060708)
	}
	panic(fmt.Sprintf("form %#x", form))
}

func TestValueMatchesStdlib(t *testing.T) {
	for _, l := range layouts {
		for _, form := range oracleForms {
			value := encode(l.f, l.big, form)
			name := fmt.Sprintf("v%d/addr%d/64=%v/big=%v/form%#x", l.f.Version, l.f.AddrSize, l.f.Dwarf64, l.big, form)
			info, abbrev, attrs := buildUnit(l.f, l.big, form, value)
			want, sent, next, err := stdlibDecode(info, abbrev)
			if err != nil {
				t.Errorf("%s: debug/dwarf: %v", name, err)
				continue
			}
			r := Cursor{Data: info, Pos: attrs, Big: l.big}
			v := r.Value(form, l.f)
			if r.Pos != attrs+len(value) {
				t.Errorf("%s: consumed %d bytes, want %d", name, r.Pos-attrs, len(value))
			}
			if s := r.U8(); s != sentinel || sent != int64(sentinel) || int64(r.Pos) != next || r.Err() != nil {
				t.Errorf("%s: sentinel %#x (debug/dwarf %v), next DIE at %d (debug/dwarf %d), %v", name, s, sent, r.Pos, next, r.Err())
			}
			if !agree(l.f, l.big, form, v, info, want) {
				t.Errorf("%s: Value = %#x, debug/dwarf %#v", name, v, want)
			}
			if n := l.f.FixedSize(form); n >= 0 && n != len(value) {
				t.Errorf("%s: FixedSize = %d, value has %d bytes", name, n, len(value))
			}
		}
	}
}

// fixedBytes encodes v in n bytes (n may exceed 8: zero-extended).
func fixedBytes(bigEndian bool, n int, v uint64) []byte {
	b := append(binary.LittleEndian.AppendUint64(nil, v), make([]byte, 8)...)[:n]
	if bigEndian {
		for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
	}
	return b
}

// TestValueByHand covers what debug/dwarf does not decode.
func TestValueByHand(t *testing.T) {
	f := Format{Version: 5, AddrSize: 8}
	for _, form := range []uint32{FormGNUAddrIndex, FormGNUStrIndex} {
		r := Cursor{Data: []byte{0x80, 0x01, 0xff}}
		if v := r.Value(form, f); v != 128 || r.Pos != 2 || r.Err() != nil {
			t.Errorf("form %#x: %d at %d (%v)", form, v, r.Pos, r.Err())
		}
		if f.FixedSize(form) != -1 {
			t.Errorf("form %#x has no fixed size", form)
		}
	}
	for _, form := range []uint32{FormIndirect, 0x02, 0x2d, 0x1f03, 1 << 31} {
		r := Cursor{Data: []byte{1, 2, 3}}
		if v := r.Value(form, f); v != 0 || !errors.Is(r.Err(), ErrUnknownForm) || r.Pos != 3 {
			t.Errorf("form %#x: %d at %d (%v), want ErrUnknownForm", form, v, r.Pos, r.Err())
		}
		if f.FixedSize(form) != -1 {
			t.Errorf("form %#x: FixedSize %d", form, f.FixedSize(form))
		}
	}
	// Truncated values fail with ErrTruncated, at every form.
	for _, form := range oracleForms {
		value := encode(f, false, form)
		if len(value) == 0 {
			continue
		}
		r := Cursor{Data: value[:len(value)-1]}
		if r.Value(form, f); !errors.Is(r.Err(), ErrTruncated) {
			t.Errorf("form %#x one byte short: %v", form, r.Err())
		}
	}
}

// FuzzValue decodes fuzzed bytes as each form with Value and with
// debug/dwarf (the unit of buildUnit around them). Where both succeed they
// must agree on the value and on the bytes consumed; Value may fail alone
// only on an unterminated LEB128 (debug/dwarf reads 0 and goes on), and
// succeed alone only on a form that debug/dwarf resolves through a section.
func FuzzValue(f *testing.F) {
	for i := range oracleForms {
		f.Add(uint8(i), uint8(i), encode(layouts[i%len(layouts)].f, layouts[i%len(layouts)].big, oracleForms[i]))
	}
	f.Add(uint8(0), uint8(0), []byte{})
	f.Fuzz(func(t *testing.T, formIdx, layoutIdx uint8, value []byte) {
		form := oracleForms[int(formIdx)%len(oracleForms)]
		l := layouts[int(layoutIdx)%len(layouts)]
		info, abbrev, attrs := buildUnit(l.f, l.big, form, value)
		want, sent, next, err := stdlibDecode(info, abbrev)
		r := Cursor{Data: info, Pos: attrs, Big: l.big}
		v := r.Value(form, l.f)
		s := r.U8()
		ok := r.Err() == nil
		switch {
		case err == nil && !ok:
			if !lebForm(form) {
				t.Fatalf("form %#x % x: Value failed (%v), debug/dwarf read %#v", form, value, r.Err(), want)
			}
		case err == nil:
			if !agree(l.f, l.big, form, v, info, want) || sent != int64(s) {
				t.Fatalf("form %#x % x: Value %#x, sentinel %#x; debug/dwarf %#v, %v", form, value, v, s, want, sent)
			}
			if p := r.Pos; next >= 0 && r.Uleb() == 2 && int64(p) != next {
				t.Fatalf("form %#x % x: next DIE at %d, debug/dwarf %d", form, value, p, next)
			}
		case ok && !resolving(form):
			t.Fatalf("form %#x % x: Value read %#x, debug/dwarf failed: %v", form, value, v, err)
		}
	})
}
