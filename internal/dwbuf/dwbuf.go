// Package dwbuf reads the byte-level encodings DWARF is built from: LEB128
// numbers, fixed-width integers in the file's byte order, NUL-terminated
// strings, unit initial lengths (32- and 64-bit DWARF), and attribute values
// by DW_FORM. It is the one place gprobe decodes these; the line-table
// reader (lines), the DIE scanner (resolve/internal/dwarfinfo) and the
// expression decoder (resolve/internal/dwarfexpr) all read through a
// [Cursor].
//
// The DIE scanner runs these reads over every unit of a vmlinux, so nothing
// here allocates (a Cursor is a value the caller owns, and a failed read
// only records an error), and U8, U16, U32, U64, Uleb, Sleb, Skip and Peek
// stay within the compiler's inlining budget: check with
// `go build -gcflags=-m` after changing them.
//
// delve's pkg/dwarf/leb128 is not used: it reads through an io.ByteReader
// (no inlining), panics on truncated input, and decoding from a
// *bytes.Reader was about 3.5 times slower than [Cursor.Uleb] on 1-3 byte
// numbers (BenchmarkUleb in this package's tests).
package dwbuf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
)

// Errors a Cursor records.
var (
	// ErrTruncated: a read needed bytes past the end of the data.
	ErrTruncated = errors.New("unexpected end of data")
	// ErrTooWide: a fixed-width read of more than 8 bytes.
	ErrTooWide = errors.New("integer wider than 8 bytes")
	// ErrReservedLength: an initial length in 0xfffffff0-0xfffffffe.
	ErrReservedLength = errors.New("reserved unit length")
	// ErrUnknownForm: an attribute form this package cannot size.
	ErrUnknownForm = errors.New("unknown attribute form")
)

// Cursor reads Data from Pos on. Its error is sticky: the first failed read
// records it and moves Pos to len(Data), so every later read fails too and
// returns zero; a decoder checks [Cursor.Err] once after a run of reads.
// Callers may move Pos themselves (to jump to a sibling, say; the error
// stays); a Pos past the end makes the next read fail, a negative one is a
// bug (reads panic).
type Cursor struct {
	Data []byte
	Pos  int
	// Big selects big-endian fixed-width values; the default is little.
	Big bool
	err error
}

// Err is the cursor's error, or nil.
func (c *Cursor) Err() error { return c.err }

// Fail makes err the cursor's error and ends the data, as a failed read
// does. It is for a decoder's own format errors, so unlike a read it
// replaces an earlier error: the decoder's verdict is the one reported.
func (c *Cursor) Fail(err error) {
	c.err = err
	c.Pos = len(c.Data)
}

// fail records a failed read's err, unless an error is recorded, and ends
// the data.
func (c *Cursor) fail(err error) {
	if c.err == nil {
		c.err = err
	}
	c.Pos = len(c.Data)
}

// Skip moves past n bytes.
func (c *Cursor) Skip(n uint64) {
	if n > uint64(len(c.Data)-c.Pos) || c.Pos > len(c.Data) {
		c.fail(ErrTruncated)
		return
	}
	c.Pos += int(n)
}

// Peek returns the next byte without consuming it.
func (c *Cursor) Peek() byte {
	if uint(c.Pos) >= uint(len(c.Data)) {
		c.fail(ErrTruncated)
		return 0
	}
	return c.Data[c.Pos]
}

// U8 reads one byte.
func (c *Cursor) U8() uint8 {
	if uint(c.Pos) >= uint(len(c.Data)) {
		c.fail(ErrTruncated)
		return 0
	}
	c.Pos++
	return c.Data[c.Pos-1]
}

// U16 reads a 2-byte unsigned integer.
func (c *Cursor) U16() uint16 {
	if len(c.Data)-c.Pos < 2 {
		c.fail(ErrTruncated)
		return 0
	}
	p := c.Data[c.Pos : c.Pos+2]
	c.Pos += 2
	if c.Big {
		return binary.BigEndian.Uint16(p)
	}
	return binary.LittleEndian.Uint16(p)
}

// U32 reads a 4-byte unsigned integer.
func (c *Cursor) U32() uint32 {
	if len(c.Data)-c.Pos < 4 {
		c.fail(ErrTruncated)
		return 0
	}
	p := c.Data[c.Pos : c.Pos+4]
	c.Pos += 4
	if c.Big {
		return binary.BigEndian.Uint32(p)
	}
	return binary.LittleEndian.Uint32(p)
}

// U64 reads an 8-byte unsigned integer.
func (c *Cursor) U64() uint64 {
	if len(c.Data)-c.Pos < 8 {
		c.fail(ErrTruncated)
		return 0
	}
	p := c.Data[c.Pos : c.Pos+8]
	c.Pos += 8
	if c.Big {
		return binary.BigEndian.Uint64(p)
	}
	return binary.LittleEndian.Uint64(p)
}

// Uint reads an n-byte unsigned integer, 0 <= n <= 8 (wider fails with
// ErrTooWide): addresses, DW_FORM_strx3, section offsets.
func (c *Cursor) Uint(n int) uint64 {
	switch n {
	case 1:
		return uint64(c.U8())
	case 2:
		return uint64(c.U16())
	case 4:
		return uint64(c.U32())
	case 8:
		return c.U64()
	}
	if n < 0 || n > 8 {
		c.fail(ErrTooWide)
		return 0
	}
	if len(c.Data)-c.Pos < n {
		c.fail(ErrTruncated)
		return 0
	}
	var v uint64
	p := c.Data[c.Pos : c.Pos+n]
	if c.Big {
		for _, b := range p {
			v = v<<8 | uint64(b)
		}
	} else {
		for i := n - 1; i >= 0; i-- {
			v = v<<8 | uint64(p[i])
		}
	}
	c.Pos += n
	return v
}

// Offset reads a section offset: 8 bytes in 64-bit DWARF, else 4.
func (c *Cursor) Offset(dwarf64 bool) uint64 {
	if dwarf64 {
		return c.U64()
	}
	return uint64(c.U32())
}

// Uleb reads an unsigned LEB128 number of any length; bits beyond 64 are
// dropped. An unterminated number fails with ErrTruncated.
func (c *Cursor) Uleb() uint64 {
	var v uint64
	var shift uint
	for c.Pos < len(c.Data) {
		b := c.Data[c.Pos]
		c.Pos++
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		shift += 7
		if b < 0x80 {
			return v
		}
	}
	c.fail(ErrTruncated)
	return 0
}

// Sleb reads a signed LEB128 number of any length; bits beyond 64 are
// dropped. An unterminated number fails with ErrTruncated.
func (c *Cursor) Sleb() int64 {
	var v int64
	var shift uint
	for c.Pos < len(c.Data) {
		b := c.Data[c.Pos]
		c.Pos++
		if shift < 64 {
			v |= int64(b&0x7f) << shift
		}
		shift += 7
		if b < 0x80 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
	if c.err == nil { // fail without its Pos update keeps Sleb inlinable
		c.err = ErrTruncated
	}
	return 0
}

// UlebLibdw reads an unsigned LEB128 number the way elfutils'
// __libdw_get_uleb128 does, for results byte-identical to libdw's
// consumers (perf): at most 10 bytes are read, and a number still
// unterminated after them, or at the end of the data, is math.MaxUint64,
// not an error. Only a read at the end of the data fails.
func (c *Cursor) UlebLibdw() uint64 {
	if c.Pos >= len(c.Data) {
		c.fail(ErrTruncated)
		return 0
	}
	w := Cursor{Data: c.Data[c.Pos:min(len(c.Data), c.Pos+10)]}
	v := w.Uleb()
	c.Pos += w.Pos
	if w.err != nil {
		return math.MaxUint64
	}
	return v
}

// SlebLibdw is UlebLibdw for signed numbers (elfutils'
// __libdw_get_sleb128): at most 9 bytes, math.MaxInt64 when unterminated.
func (c *Cursor) SlebLibdw() int64 {
	if c.Pos >= len(c.Data) {
		c.fail(ErrTruncated)
		return 0
	}
	w := Cursor{Data: c.Data[c.Pos:min(len(c.Data), c.Pos+9)]}
	v := w.Sleb()
	c.Pos += w.Pos
	if w.err != nil {
		return math.MaxInt64
	}
	return v
}

// CString reads a NUL-terminated string and returns it without the NUL,
// as a slice of Data. A missing NUL fails with ErrTruncated.
func (c *Cursor) CString() []byte {
	if c.Pos > len(c.Data) {
		c.fail(ErrTruncated)
		return nil
	}
	i := bytes.IndexByte(c.Data[c.Pos:], 0)
	if i < 0 {
		c.fail(ErrTruncated)
		return nil
	}
	s := c.Data[c.Pos : c.Pos+i]
	c.Pos += i + 1
	return s
}

// CStringAt returns the NUL-terminated string at off of sec (a string
// section), without the NUL, or nil when off is out of range or the string
// unterminated.
func CStringAt(sec []byte, off uint64) []byte {
	if off >= uint64(len(sec)) {
		return nil
	}
	s := sec[off:]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		return s[:i:i]
	}
	return nil
}

// InitialLength reads a unit's initial length and reports 64-bit DWARF
// (an escape of 0xffffffff followed by an 8-byte length). A reserved value
// fails with ErrReservedLength.
func (c *Cursor) InitialLength() (length uint64, dwarf64 bool) {
	n := c.U32()
	if n == 0xffffffff {
		return c.U64(), true
	}
	if n >= 0xfffffff0 {
		c.fail(ErrReservedLength)
		return 0, false
	}
	return uint64(n), false
}
