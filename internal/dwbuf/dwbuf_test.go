package dwbuf

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/leb128"
)

func TestUleb(t *testing.T) {
	ff9 := bytes.Repeat([]byte{0xff}, 9)
	for _, c := range []struct {
		in   []byte
		want uint64
		n    int // bytes consumed
	}{
		{[]byte{0}, 0, 1},
		{[]byte{0x7f}, 127, 1},
		{[]byte{0x80, 0x01}, 128, 2},
		{[]byte{0xe5, 0x8e, 0x26, 0xaa}, 624485, 3},
		{[]byte{0x80, 0x00}, 0, 2}, // padded zero
		{append(ff9, 0x01), math.MaxUint64, 10},
		{append(ff9, 0x7f), math.MaxUint64, 10},                    // bits past 64 dropped
		{append(bytes.Repeat([]byte{0x80}, 9), 0x01), 1 << 63, 10}, // 10-byte value
		{append(bytes.Repeat([]byte{0x80}, 11), 0x01), 0, 12},      // overlong: all bits past 64
		{append([]byte{0x85}, append(bytes.Repeat([]byte{0x80}, 14), 0x00)...), 5, 16},
	} {
		r := Cursor{Data: c.in}
		if got := r.Uleb(); got != c.want || r.Pos != c.n || r.Err() != nil {
			t.Errorf("Uleb(% x) = %#x at %d (%v), want %#x at %d", c.in, got, r.Pos, r.Err(), c.want, c.n)
		}
	}
	for _, in := range [][]byte{nil, {0x80}, append(ff9, 0xff)} {
		r := Cursor{Data: in}
		if got := r.Uleb(); got != 0 || !errors.Is(r.Err(), ErrTruncated) || r.Pos != len(in) {
			t.Errorf("Uleb(% x) = %#x at %d (%v), want truncated", in, got, r.Pos, r.Err())
		}
	}
}

func TestSleb(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want int64
		n    int
	}{
		{[]byte{0x02}, 2, 1},
		{[]byte{0x7e}, -2, 1},
		{[]byte{0x3f}, 63, 1},
		{[]byte{0x40}, -64, 1},
		{[]byte{0xff, 0x00}, 127, 2},
		{[]byte{0x81, 0x7f}, -127, 2},
		{[]byte{0x80, 0x01}, 128, 2},
		{[]byte{0x80, 0x7f}, -128, 2},
		{append(bytes.Repeat([]byte{0xff}, 8), 0x3f), 1<<62 - 1, 9},      // largest 9-byte (63-bit) value
		{append(bytes.Repeat([]byte{0x80}, 8), 0x40), -1 << 62, 9},       // smallest 9-byte value
		{append(bytes.Repeat([]byte{0xff}, 9), 0x7f), -1, 10},            // 10-byte -1
		{append(bytes.Repeat([]byte{0xff}, 9), 0x00), math.MaxInt64, 10}, // 10-byte MaxInt64
		{append(bytes.Repeat([]byte{0x80}, 9), 0x7f), math.MinInt64, 10}, // 10-byte MinInt64
		{append(bytes.Repeat([]byte{0x80}, 11), 0x7f), 0, 12},            // overlong: sign past 64 dropped
	} {
		r := Cursor{Data: c.in}
		if got := r.Sleb(); got != c.want || r.Pos != c.n || r.Err() != nil {
			t.Errorf("Sleb(% x) = %d at %d (%v), want %d at %d", c.in, got, r.Pos, r.Err(), c.want, c.n)
		}
	}
	for _, in := range [][]byte{nil, {0xc0}, bytes.Repeat([]byte{0xff}, 12)} {
		r := Cursor{Data: in}
		if got := r.Sleb(); got != 0 || !errors.Is(r.Err(), ErrTruncated) || r.Pos != len(in) {
			t.Errorf("Sleb(% x) = %d at %d (%v), want truncated", in, got, r.Pos, r.Err())
		}
	}
}

// TestLibdwLEB128 pins elfutils' caps: 10 bytes for ULEB, 9 for SLEB, and
// an unterminated number is the maximum, not an error.
func TestLibdwLEB128(t *testing.T) {
	long := bytes.Repeat([]byte{0x80}, 12)
	r := Cursor{Data: long}
	if v := r.UlebLibdw(); v != math.MaxUint64 || r.Pos != 10 || r.Err() != nil {
		t.Errorf("UlebLibdw(12 continuation bytes) = %#x at %d (%v)", v, r.Pos, r.Err())
	}
	r = Cursor{Data: long}
	if v := r.SlebLibdw(); v != math.MaxInt64 || r.Pos != 9 || r.Err() != nil {
		t.Errorf("SlebLibdw(12 continuation bytes) = %#x at %d (%v)", v, r.Pos, r.Err())
	}
	r = Cursor{Data: []byte{0x80, 0x80}}
	if v := r.UlebLibdw(); v != math.MaxUint64 || r.Pos != 2 || r.Err() != nil {
		t.Errorf("UlebLibdw(unterminated at end) = %#x at %d (%v)", v, r.Pos, r.Err())
	}
	r = Cursor{Data: append(bytes.Repeat([]byte{0xff}, 9), 0x01)}
	if v := r.UlebLibdw(); v != math.MaxUint64 || r.Pos != 10 || r.Err() != nil {
		t.Errorf("UlebLibdw(10-byte max) = %#x at %d (%v)", v, r.Pos, r.Err())
	}
	r = Cursor{Data: append(bytes.Repeat([]byte{0x80}, 8), 0x7f)}
	if v := r.SlebLibdw(); v != -1<<56 || r.Pos != 9 || r.Err() != nil {
		t.Errorf("SlebLibdw(9 bytes) = %d at %d (%v)", v, r.Pos, r.Err())
	}
	for _, read := range []func(*Cursor){func(c *Cursor) { c.UlebLibdw() }, func(c *Cursor) { c.SlebLibdw() }} {
		r = Cursor{Data: []byte{1}, Pos: 1}
		if read(&r); !errors.Is(r.Err(), ErrTruncated) {
			t.Errorf("libdw LEB128 at the end: %v", r.Err())
		}
	}
}

func TestFixed(t *testing.T) {
	data := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}
	for _, c := range []struct {
		big  bool
		read func(*Cursor) uint64
		want uint64
		n    int
	}{
		{false, func(c *Cursor) uint64 { return uint64(c.U8()) }, 0x01, 1},
		{false, func(c *Cursor) uint64 { return uint64(c.U16()) }, 0x0201, 2},
		{true, func(c *Cursor) uint64 { return uint64(c.U16()) }, 0x0102, 2},
		{false, func(c *Cursor) uint64 { return c.Uint(3) }, 0x030201, 3},
		{true, func(c *Cursor) uint64 { return c.Uint(3) }, 0x010203, 3},
		{false, func(c *Cursor) uint64 { return uint64(c.U32()) }, 0x04030201, 4},
		{true, func(c *Cursor) uint64 { return uint64(c.U32()) }, 0x01020304, 4},
		{false, func(c *Cursor) uint64 { return c.Uint(5) }, 0x0504030201, 5},
		{true, func(c *Cursor) uint64 { return c.Uint(7) }, 0x01020304050607, 7},
		{false, func(c *Cursor) uint64 { return c.U64() }, 0x0807060504030201, 8},
		{true, func(c *Cursor) uint64 { return c.Uint(8) }, 0x0102030405060708, 8},
		{false, func(c *Cursor) uint64 { return c.Offset(false) }, 0x04030201, 4},
		{true, func(c *Cursor) uint64 { return c.Offset(true) }, 0x0102030405060708, 8},
		{false, func(c *Cursor) uint64 { return c.Uint(0) }, 0, 0},
	} {
		r := Cursor{Data: data, Big: c.big}
		if got := c.read(&r); got != c.want || r.Pos != c.n || r.Err() != nil {
			t.Errorf("big=%v: %#x at %d (%v), want %#x at %d", c.big, got, r.Pos, r.Err(), c.want, c.n)
		}
		// Every width fails cleanly one byte short.
		if c.n > 0 {
			r = Cursor{Data: data[:c.n-1], Big: c.big}
			if got := c.read(&r); got != 0 || !errors.Is(r.Err(), ErrTruncated) || r.Pos != c.n-1 {
				t.Errorf("big=%v, %d bytes short: %#x at %d (%v)", c.big, c.n, got, r.Pos, r.Err())
			}
		}
	}
	r := Cursor{Data: data}
	if r.Uint(9); !errors.Is(r.Err(), ErrTooWide) {
		t.Errorf("Uint(9): %v", r.Err())
	}
	r = Cursor{Data: data, Pos: len(data) + 3}
	if r.U16(); !errors.Is(r.Err(), ErrTruncated) || r.Pos != len(data) {
		t.Errorf("U16 past the end: %v at %d", r.Err(), r.Pos)
	}
}

// TestSticky: a failure ends the data and stays; later reads return zero
// even where they would fit; Fail replaces it.
func TestSticky(t *testing.T) {
	r := Cursor{Data: []byte{1, 2, 3}}
	r.U32()
	if r.Pos != 3 || !errors.Is(r.Err(), ErrTruncated) {
		t.Fatalf("after a short read: pos %d, %v", r.Pos, r.Err())
	}
	r.Pos = 0
	r.Uint(9)
	if !errors.Is(r.Err(), ErrTruncated) {
		t.Errorf("the first error must stay, got %v", r.Err())
	}
	if v := r.U8(); v != 0 {
		t.Errorf("read after failure = %d", v)
	}
	bad := errors.New("bad opcode")
	r.Fail(bad)
	if r.Err() != bad {
		t.Errorf("Fail: %v", r.Err())
	}
	r = Cursor{Data: []byte{1, 2, 3}}
	if r.Skip(2); r.Pos != 2 || r.Err() != nil {
		t.Errorf("Skip(2): %d %v", r.Pos, r.Err())
	}
	if r.Skip(math.MaxUint64); r.Pos != 3 || !errors.Is(r.Err(), ErrTruncated) {
		t.Errorf("Skip(huge): %d %v", r.Pos, r.Err())
	}
	r = Cursor{Data: []byte{7}}
	if r.Peek() != 7 || r.Pos != 0 || r.U8() != 7 || r.Peek() != 0 || !errors.Is(r.Err(), ErrTruncated) {
		t.Errorf("Peek: %d %v", r.Pos, r.Err())
	}
}

func TestStrings(t *testing.T) {
	r := Cursor{Data: []byte("ab\x00\x00c")}
	if s := r.CString(); string(s) != "ab" || r.Pos != 3 {
		t.Errorf("CString = %q at %d", s, r.Pos)
	}
	if s := r.CString(); s == nil || len(s) != 0 || r.Pos != 4 {
		t.Errorf("empty CString = %q at %d", s, r.Pos)
	}
	if s := r.CString(); s != nil || !errors.Is(r.Err(), ErrTruncated) || r.Pos != 5 {
		t.Errorf("unterminated CString = %q at %d (%v)", s, r.Pos, r.Err())
	}
	sec := []byte("\x00name\x00tail")
	for _, c := range []struct {
		off  uint64
		want []byte
	}{{0, []byte{}}, {1, []byte("name")}, {3, []byte("me")}, {6, nil}, {10, nil}, {1 << 63, nil}} {
		if got := CStringAt(sec, c.off); !bytes.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("CStringAt(%d) = %q, want %q", c.off, got, c.want)
		}
	}
}

func TestInitialLength(t *testing.T) {
	for _, c := range []struct {
		in      []byte
		big     bool
		n       uint64
		dwarf64 bool
		pos     int
		err     error
	}{
		{[]byte{0x10, 0, 0, 0}, false, 0x10, false, 4, nil},
		{[]byte{0, 0, 0, 0x10}, true, 0x10, false, 4, nil},
		{[]byte{0xef, 0xff, 0xff, 0xff}, false, 0xffffffef, false, 4, nil},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x20, 0, 0, 0, 0, 0, 0, 0}, false, 0x20, true, 12, nil},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 0}, true, 1 << 32, true, 12, nil},
		{[]byte{0xf0, 0xff, 0xff, 0xff, 0, 0, 0, 0}, false, 0, false, 8, ErrReservedLength},
		{[]byte{0xfe, 0xff, 0xff, 0xff}, false, 0, false, 4, ErrReservedLength},
		{[]byte{0xff, 0xff, 0xff, 0xff, 1}, false, 0, true, 5, ErrTruncated},
		{[]byte{1, 0}, false, 0, false, 2, ErrTruncated},
	} {
		r := Cursor{Data: c.in, Big: c.big}
		n, d64 := r.InitialLength()
		if n != c.n || d64 != c.dwarf64 || r.Pos != c.pos || !errors.Is(r.Err(), c.err) || (c.err == nil) != (r.Err() == nil) {
			t.Errorf("InitialLength(% x) = %#x, %v at %d (%v)", c.in, n, d64, r.Pos, r.Err())
		}
	}
}

// appendUleb and appendSleb encode minimally, for round trips.
func appendUleb(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendSleb(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// lebOracle decodes the LEB128 number at the start of b with arbitrary
// precision, then keeps its low 64 bits: what both decoders must give.
func lebOracle(b []byte, signed bool) (u uint64, n int, ok bool) {
	v := new(big.Int)
	for i, c := range b {
		v.Or(v, new(big.Int).Lsh(big.NewInt(int64(c&0x7f)), uint(7*i)))
		if c < 0x80 {
			if signed && c&0x40 != 0 {
				v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(7*(i+1))))
			}
			mod := new(big.Int).Lsh(big.NewInt(1), 64)
			v.Mod(v, mod) // two's complement low 64 bits
			return v.Uint64(), i + 1, true
		}
	}
	return 0, len(b), false
}

// FuzzLEB128 checks Uleb and Sleb against an arbitrary-precision decoder
// and delve's leb128 (on terminated input: delve panics otherwise), and
// round-trips the minimal encodings of the number the input spells.
func FuzzLEB128(f *testing.F) {
	f.Add([]byte{0xe5, 0x8e, 0x26})
	f.Add(append(bytes.Repeat([]byte{0xff}, 9), 0x01))
	f.Add(append(bytes.Repeat([]byte{0x80}, 11), 0x7f))
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, signed := range []bool{false, true} {
			want, n, ok := lebOracle(b, signed)
			r := Cursor{Data: b}
			var got uint64
			if signed {
				got = uint64(r.Sleb())
			} else {
				got = r.Uleb()
			}
			if !ok {
				if r.Err() == nil || got != 0 || r.Pos != len(b) {
					t.Fatalf("signed=%v % x: unterminated, got %#x at %d (%v)", signed, b, got, r.Pos, r.Err())
				}
				continue
			}
			if got != want || r.Pos != n || r.Err() != nil {
				t.Fatalf("signed=%v % x: got %#x at %d (%v), want %#x at %d", signed, b, got, r.Pos, r.Err(), want, n)
			}
			var dv uint64
			var dn uint32
			if signed {
				var s int64
				s, dn = leb128.DecodeSigned(bytes.NewReader(b))
				dv = uint64(s)
			} else {
				dv, dn = leb128.DecodeUnsigned(bytes.NewReader(b))
			}
			if dv != got || int(dn) != n {
				t.Fatalf("signed=%v % x: delve %#x (%d bytes), dwbuf %#x (%d)", signed, b, dv, dn, got, n)
			}
			var enc []byte
			if signed {
				enc = appendSleb(nil, int64(got))
			} else {
				enc = appendUleb(nil, got)
			}
			r = Cursor{Data: enc}
			var back uint64
			if signed {
				back = uint64(r.Sleb())
			} else {
				back = r.Uleb()
			}
			if back != got || r.Pos != len(enc) {
				t.Fatalf("signed=%v: %#x round-trips to %#x", signed, got, back)
			}
		}
		// The libdw variants agree with the general ones on a number
		// that ends within their cap.
		if _, n, ok := lebOracle(b, false); ok && n <= 10 {
			r, w := Cursor{Data: b}, Cursor{Data: b}
			if r.UlebLibdw() != w.Uleb() || r.Pos != w.Pos {
				t.Fatalf("% x: UlebLibdw differs", b)
			}
		}
		if _, n, ok := lebOracle(b, true); ok && n <= 9 {
			r, w := Cursor{Data: b}, Cursor{Data: b}
			if r.SlebLibdw() != w.Sleb() || r.Pos != w.Pos {
				t.Fatalf("% x: SlebLibdw differs", b)
			}
		}
	})
}

// BenchmarkUleb compares Cursor.Uleb with delve's leb128.DecodeUnsigned,
// the alternative considered, on the lengths DWARF mostly has.
func BenchmarkUleb(b *testing.B) {
	var data []byte
	for i := 0; i < 4096; i++ {
		data = appendUleb(data, uint64(i*i*i)%(1<<21)) // 1 to 3 bytes
	}
	b.Run("dwbuf", func(b *testing.B) {
		var sum uint64
		for b.Loop() {
			r := Cursor{Data: data}
			for r.Pos < len(r.Data) {
				sum += r.Uleb()
			}
		}
		_ = sum
	})
	b.Run("delve", func(b *testing.B) {
		var sum uint64
		for b.Loop() {
			br := bytes.NewReader(data)
			for br.Len() > 0 {
				v, _ := leb128.DecodeUnsigned(br)
				sum += v
			}
		}
		_ = sum
	})
}
