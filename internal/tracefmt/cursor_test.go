package tracefmt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// TestCursorOutside: a cursor placed outside the data, at an offset a
// damaged file gave (past the end, or a 64-bit offset negative as int64),
// fails every read with errShort, through the mapping and through a
// ReaderAt, and never panics.
func TestCursorOutside(t *testing.T) {
	data := make([]byte, 100)
	for _, off := range []int64{-1, math.MinInt64, math.MinInt64 + 28, 101, math.MaxInt64} {
		for _, mapped := range []bool{true, false} {
			c := &cursor{r: bytes.NewReader(data), size: int64(len(data)), order: binary.LittleEndian, off: off}
			if mapped {
				c.data = data
			}
			reads := []func(){
				func() { c.u16() },
				func() { c.u64() },
				func() { c.bytes(0) },
				func() { c.blob(1) },
				func() { c.borrow(1) },
				func() { c.skip(0) },
			}
			for i, read := range reads {
				c.err = nil
				read()
				if !errors.Is(c.err, errShort) {
					t.Errorf("off %d mapped %v read %d: err %v, want %v", off, mapped, i, c.err, errShort)
				}
			}
		}
	}
}
