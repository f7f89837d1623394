package dwarfindex

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
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

// FuzzSectionCopy: no file under a section copy's name makes Section or
// Verify panic, and bytes Verify accepts are the bytes a copy of them
// would hold (a flipped bit is never verified). Inputs get a sound tail
// half of the time, so that the fuzzer reaches the chunk checks.
func FuzzSectionCopy(f *testing.F) {
	f.Add([]byte("dwarf bytes"), true, uint16(0))
	f.Add([]byte{}, true, uint16(3))
	f.Add([]byte("gpsec\x00\x00\x02"), false, uint16(1))
	dir := f.TempDir()
	c := New(dir)
	f.Fuzz(func(t *testing.T, b []byte, soundTail bool, flip uint16) {
		path := filepath.Join(filepath.Dir(c.IndexPath(testKey)), "debug_str-v2")
		os.MkdirAll(filepath.Dir(path), 0o755)
		file := b
		var want []byte
		if soundTail {
			want = b
			if len(b) > 0 && flip != 0 {
				want = append([]byte(nil), b...)
				want[int(flip)%len(b)] ^= byte(flip>>8) | 1
			}
			var sums []uint32
			for off := 0; off < len(b); off += chunkSize {
				sums = append(sums, crc32.Checksum(b[off:min(off+chunkSize, len(b))], castagnoli))
			}
			file = append(append([]byte(nil), want...), tail(testKey, ".debug_str", uint64(len(b)), sums)...)
		}
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		sc, err := c.Section(testKey, ".debug_str")
		if err != nil {
			return
		}
		defer sc.Close()
		err = sc.Verify(0, sc.Size())
		if soundTail && (err == nil) != bytes.Equal(want, b) {
			t.Fatalf("Verify of %d bytes, changed %v: %v", len(b), !bytes.Equal(want, b), err)
		}
		sc.Verify(sc.Size()/2, sc.Size()+1)
	})
}
