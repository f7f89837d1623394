package tracefmt

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

var errShort = errors.New("unexpected end of data")

// cursor reads numbers and strings sequentially from a ReaderAt or a byte
// slice. The first error sticks; later reads return zero values.
type cursor struct {
	r     io.ReaderAt
	data  []byte
	size  int64
	off   int64
	order binary.ByteOrder
	err   error
	// ahead holds the bytes of r from aheadOff on: headers are read a
	// few bytes at a time, a system call each would cost more than the
	// parsing (thousands of formats in a v6 file).
	ahead    []byte
	aheadOff int64
}

// readAhead is how much a cursor over a ReaderAt reads at once.
const readAhead = 64 << 10

// left is how many bytes remain after off: -1 for a cursor placed
// outside the data (at an offset read from a damaged file), where no read,
// not even of no bytes, succeeds.
func (c *cursor) left() int64 {
	if c.off < 0 || c.off > c.size {
		return -1
	}
	return c.size - c.off
}

func (c *cursor) bytes(n int) []byte {
	if c.err != nil {
		return make([]byte, max(n, 0))
	}
	if n < 0 || int64(n) > c.left() {
		c.err = errShort
		return make([]byte, max(n, 0))
	}
	var b []byte
	if c.data != nil {
		b = c.data[c.off : c.off+int64(n)]
	} else {
		b = make([]byte, n)
		switch {
		case n > readAhead:
			if got, err := c.r.ReadAt(b, c.off); got < n {
				c.err = cmp.Or(err, errShort)
			}
		case c.off < c.aheadOff || c.off+int64(n) > c.aheadOff+int64(len(c.ahead)):
			c.fill(n)
			fallthrough
		default:
			if c.err == nil {
				copy(b, c.ahead[c.off-c.aheadOff:])
			}
		}
	}
	c.off += int64(n)
	return b
}

// borrow is blob without the copy when it can: the bytes are only valid
// until the cursor's next read.
func (c *cursor) borrow(n uint64) []byte {
	if c.err == nil && (c.left() < 0 || n > uint64(c.left())) {
		c.err = errShort
	}
	if c.err != nil {
		return nil
	}
	if c.data != nil || n > readAhead {
		return c.bytes(int(n))
	}
	if c.off < c.aheadOff || c.off+int64(n) > c.aheadOff+int64(len(c.ahead)) {
		if c.fill(int(n)); c.err != nil {
			return nil
		}
	}
	b := c.ahead[c.off-c.aheadOff : c.off-c.aheadOff+int64(n)]
	c.off += int64(n)
	return b
}

// fill reads ahead from off, at least n (at most readAhead) bytes within
// size.
func (c *cursor) fill(n int) {
	want := min(readAhead, c.size-c.off)
	if c.ahead == nil {
		c.ahead = make([]byte, readAhead)
	}
	got, err := c.r.ReadAt(c.ahead[:want], c.off)
	c.ahead, c.aheadOff = c.ahead[:got], c.off
	switch {
	case err != nil && err != io.EOF:
		c.err = err
	case got < n:
		c.err = errShort
	}
}

// blob reads n bytes after checking n against what is left, so that a
// damaged size never causes a huge allocation.
func (c *cursor) blob(n uint64) []byte {
	if c.err == nil && (c.left() < 0 || n > uint64(c.left())) {
		c.err = errShort
	}
	if c.err != nil {
		return nil
	}
	return c.bytes(int(n))
}

func (c *cursor) skip(n uint64) {
	if c.err == nil && (c.left() < 0 || n > uint64(c.left())) {
		c.err = errShort
	}
	if c.err == nil {
		c.off += int64(n)
	}
}

func (c *cursor) u16() uint16 {
	b := c.bytes(2)
	if c.err != nil {
		return 0
	}
	return c.order.Uint16(b)
}

func (c *cursor) u32() uint32 {
	b := c.bytes(4)
	if c.err != nil {
		return 0
	}
	return c.order.Uint32(b)
}

func (c *cursor) u64() uint64 {
	b := c.bytes(8)
	if c.err != nil {
		return 0
	}
	return c.order.Uint64(b)
}

// cstring reads a NUL-terminated string of at most limit bytes.
func (c *cursor) cstring(limit int) string {
	var out []byte
	for i := 0; i <= limit; i++ {
		b := c.bytes(1)
		if c.err != nil {
			return ""
		}
		if b[0] == 0 {
			return string(out)
		}
		out = append(out, b[0])
	}
	c.err = fmt.Errorf("string longer than %d bytes", limit)
	return ""
}
