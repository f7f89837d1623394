package dwarfindex

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// FuzzDecode: no input makes Decode or the accessors of what it returns
// panic, and an error comes with no index. Inputs get a valid checksum
// half of the time, so that the fuzzer reaches the part decoders.
func FuzzDecode(f *testing.F) {
	f.Add(sample().Encode(), false)
	f.Add((&Index{Key: testKey}).Encode(), false)
	f.Add([]byte("gpidx\x00\x00\x01"), true)
	f.Fuzz(func(t *testing.T, b []byte, fixCRC bool) {
		if fixCRC && len(b) >= 12 {
			binary.LittleEndian.PutUint32(b[8:], crc32.Checksum(b[12:], castagnoli))
		}
		x, err := Decode(b)
		if err != nil {
			if x != nil {
				t.Fatal("an index with an error")
			}
			return
		}
		_ = dump(x)
		for _, n := range []*Names{x.Funcs, x.Files} {
			if n == nil {
				continue
			}
			for i := 0; i < n.Len(); i++ {
				n.Find(n.Name(i))
			}
			n.Find([]byte("zzz"))
		}
		for _, t := range []*FDEs{x.EHFrame, x.DebugFrame} {
			if t != nil {
				t.Find(0)
				t.Find(^uint64(0))
			}
		}
		Decode(x.Encode())
	})
}
