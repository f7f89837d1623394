package lines

import (
	"encoding/binary"
	"errors"
)

var errShort = errors.New("unexpected end of data")

// buf is a bounds-checked little reader with a sticky error: after the
// first failure every read returns zero, so decoders check b.err once.
type buf struct {
	data  []byte
	pos   int
	order binary.ByteOrder
	err   error
}

func (b *buf) need(n int) bool {
	if b.err != nil {
		return false
	}
	if n < 0 || n > len(b.data)-b.pos {
		b.err = errShort
		return false
	}
	return true
}

func (b *buf) skip(n int) {
	if b.need(n) {
		b.pos += n
	}
}

func (b *buf) peek() byte {
	if !b.need(1) {
		return 0
	}
	return b.data[b.pos]
}

func (b *buf) u8() uint8 {
	if !b.need(1) {
		return 0
	}
	b.pos++
	return b.data[b.pos-1]
}

func (b *buf) u16() uint16 {
	if !b.need(2) {
		return 0
	}
	b.pos += 2
	return b.order.Uint16(b.data[b.pos-2:])
}

func (b *buf) u32() uint32 {
	if !b.need(4) {
		return 0
	}
	b.pos += 4
	return b.order.Uint32(b.data[b.pos-4:])
}

func (b *buf) u64() uint64 {
	if !b.need(8) {
		return 0
	}
	b.pos += 8
	return b.order.Uint64(b.data[b.pos-8:])
}

// uintN reads an n-byte unsigned integer (n <= 8).
func (b *buf) uintN(n int) uint64 {
	if n > 8 || !b.need(n) {
		if b.err == nil {
			b.err = errors.New("integer wider than 8 bytes")
		}
		return 0
	}
	var v uint64
	for i := 0; i < n; i++ {
		var c uint64
		if b.order == binary.BigEndian {
			c = uint64(b.data[b.pos+i]) << (8 * (n - 1 - i))
		} else {
			c = uint64(b.data[b.pos+i]) << (8 * i)
		}
		v |= c
	}
	b.pos += n
	return v
}

func (b *buf) uleb() uint64 {
	var v uint64
	var shift uint
	for {
		c := b.u8()
		if b.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			return v
		}
	}
}

func (b *buf) sleb() int64 {
	var v int64
	var shift uint
	for {
		c := b.u8()
		if b.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

func (b *buf) cstring() string {
	for i := b.pos; i < len(b.data); i++ {
		if b.data[i] == 0 {
			s := string(b.data[b.pos:i])
			b.pos = i + 1
			return s
		}
	}
	if b.err == nil {
		b.err = errShort
	}
	return ""
}

// initialLength reads a DWARF unit length, reporting 64-bit DWARF.
func (b *buf) initialLength() (uint64, bool) {
	n := b.u32()
	if n == 0xffffffff {
		return b.u64(), true
	}
	if n >= 0xfffffff0 {
		b.err = errors.New("reserved unit length")
		return 0, false
	}
	return uint64(n), false
}
