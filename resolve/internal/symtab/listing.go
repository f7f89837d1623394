package symtab

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"unsafe"
)

// Listing is a sorted list of names kept as bytes (DSOFunctions keeps a
// DSO's demangled -F listing with the image):
//
//	magic [8]byte   "gpfns\x00\x00\x01"
//	n     uint32    the number of names
//	crc   uint32    CRC-32C of what follows
//	ends  [n]uint32 the end of each name in names
//	names []byte    the names, one after another
//
// little-endian throughout.
type Listing struct {
	ends  []byte
	names []byte
}

var listingMagic = [8]byte{'g', 'p', 'f', 'n', 's', 0, 0, 1}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeListing encodes names (in their order).
func EncodeListing(names []string) []byte {
	size := 16 + 4*len(names)
	for _, n := range names {
		size += len(n)
	}
	b := make([]byte, 16, size)
	copy(b, listingMagic[:])
	binary.LittleEndian.PutUint32(b[8:], uint32(len(names)))
	end := 0
	for _, n := range names {
		end += len(n)
		b = binary.LittleEndian.AppendUint32(b, uint32(end))
	}
	for _, n := range names {
		b = append(b, n...)
	}
	binary.LittleEndian.PutUint32(b[12:], crc32.Checksum(b[16:], castagnoli))
	return b
}

// DecodeListing reads what EncodeListing wrote; ok is false for anything
// else (another format, a damaged copy). The Listing aliases b.
func DecodeListing(b []byte) (l Listing, ok bool) {
	if len(b) < 16 || !bytes.Equal(b[:8], listingMagic[:]) {
		return Listing{}, false
	}
	n := uint64(binary.LittleEndian.Uint32(b[8:]))
	if 16+4*n > uint64(len(b)) || crc32.Checksum(b[16:], castagnoli) != binary.LittleEndian.Uint32(b[12:]) {
		return Listing{}, false
	}
	l = Listing{ends: b[16 : 16+4*n], names: b[16+4*n:]}
	prev := uint32(0)
	for i := 0; i < len(l.ends); i += 4 {
		end := binary.LittleEndian.Uint32(l.ends[i:])
		if end < prev || uint64(end) > uint64(len(l.names)) {
			return Listing{}, false
		}
		prev = end
	}
	return l, uint64(prev) == uint64(len(l.names))
}

// Len is the number of names.
func (l Listing) Len() int { return len(l.ends) / 4 }

// Each calls fn with each name match keeps, in order, until fn returns
// false. The names alias the Listing's bytes: valid during the call.
func (l Listing) Each(match func(string) bool, fn func(string) bool) {
	start := uint32(0)
	for i := 0; i < len(l.ends); i += 4 {
		end := binary.LittleEndian.Uint32(l.ends[i:])
		var name string
		if end > start {
			name = unsafe.String(&l.names[start], end-start)
		}
		start = end
		if match(name) && !fn(name) {
			return
		}
	}
}
