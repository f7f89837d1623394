package ringbuf

import (
	"encoding/binary"
	"testing"
)

// benchPage is a full 4 kB page of 3-word events (a syscall tracepoint's
// size) with a time extend every 32 events.
func benchPage() []byte {
	var recs [][]uint32
	n := 0
	for i := 0; ; i++ {
		r := []uint32{3 | 100<<5, 1, 2, 3}
		if i%32 == 31 {
			r = []uint32{typeTimeExtend | 5<<5, 1}
		}
		if n+4*len(r) > 4080 {
			break
		}
		n += 4 * len(r)
		recs = append(recs, r)
	}
	return testPage(recs, 0, 0)
}

// BenchmarkCount is record's cost per page drained.
func BenchmarkCount(b *testing.B) {
	p := benchPage()
	d := NewDecoder(layout64, binary.NativeEndian)
	b.SetBytes(int64(len(p)))
	for i := 0; i < b.N; i++ {
		d.Decode(p, nil)
	}
}

// BenchmarkDecode is analyze's, without its work per record.
func BenchmarkDecode(b *testing.B) {
	p := benchPage()
	d := NewDecoder(layout64, binary.NativeEndian)
	n := 0
	b.SetBytes(int64(len(p)))
	for i := 0; i < b.N; i++ {
		d.Decode(p, func(Record) { n++ })
	}
}
