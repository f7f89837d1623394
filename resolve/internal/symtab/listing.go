package symtab

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"unsafe"
)

// Listing is a sorted list of names kept as bytes (DSOFunctions keeps a
// DSO's demangled -F listing with the image), front-coded: each name is
// the length of the prefix it shares with the one before it and the rest
// (C++ names share long prefixes: a third of libstdc++'s listing's bytes).
//
//	magic [8]byte "gpfns\x00\x00\x02"
//	n     uint32  the number of names
//	crc   uint32  CRC-32C of what follows
//	n times: shared uvarint, len uvarint, then len bytes
//
// little-endian throughout.
type Listing struct {
	n    int
	body []byte
}

var listingMagic = [8]byte{'g', 'p', 'f', 'n', 's', 0, 0, 2}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeListing encodes names (in their order; sorted names share the
// most).
func EncodeListing(names []string) []byte {
	// Sized first: grown by appending, a listing of libjvm's 58,000
	// names would leave its outgrown copies behind.
	size := 16
	prev := ""
	for _, n := range names {
		shared := sharedPrefix(prev, n)
		size += uvarintLen(uint64(shared)) + uvarintLen(uint64(len(n)-shared)) + len(n) - shared
		prev = n
	}
	b := make([]byte, 16, size)
	copy(b, listingMagic[:])
	binary.LittleEndian.PutUint32(b[8:], uint32(len(names)))
	prev = ""
	for _, n := range names {
		shared := sharedPrefix(prev, n)
		b = binary.AppendUvarint(b, uint64(shared))
		b = binary.AppendUvarint(b, uint64(len(n)-shared))
		b = append(b, n[shared:]...)
		prev = n
	}
	binary.LittleEndian.PutUint32(b[12:], crc32.Checksum(b[16:], castagnoli))
	return b
}

// sharedPrefix is the length of the prefix a and b share.
func sharedPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// uvarintLen is the length of v in binary.AppendUvarint's encoding.
func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// DecodeListing reads what EncodeListing wrote; ok is false for anything
// else (another format, a damaged copy). The Listing aliases b.
func DecodeListing(b []byte) (l Listing, ok bool) {
	if len(b) < 16 || !bytes.Equal(b[:8], listingMagic[:]) {
		return Listing{}, false
	}
	if crc32.Checksum(b[16:], castagnoli) != binary.LittleEndian.Uint32(b[12:]) {
		return Listing{}, false
	}
	l = Listing{n: int(binary.LittleEndian.Uint32(b[8:])), body: b[16:]}
	// Walk it once: every entry must fit.
	count := 0
	if !l.walk(func([]byte) bool { count++; return true }) || count != l.n {
		return Listing{}, false
	}
	return l, true
}

// walk calls fn with each name (a buffer reused for the next one) until
// fn returns false; it reports whether the entries were sound.
func (l Listing) walk(fn func([]byte) bool) bool {
	var name []byte
	p := l.body
	for len(p) > 0 {
		shared, n1 := binary.Uvarint(p)
		if n1 <= 0 || shared > uint64(len(name)) {
			return false
		}
		rest, n2 := binary.Uvarint(p[n1:])
		if n2 <= 0 || rest > uint64(len(p)-n1-n2) {
			return false
		}
		p = p[n1+n2:]
		name = append(name[:shared], p[:rest]...)
		p = p[rest:]
		if !fn(name) {
			return true
		}
	}
	return true
}

// Len is the number of names.
func (l Listing) Len() int { return l.n }

// Each calls fn with each name match keeps, in order, until fn returns
// false. A name is valid during the call only.
func (l Listing) Each(match func(string) bool, fn func(string) bool) {
	l.walk(func(b []byte) bool {
		name := unsafe.String(unsafe.SliceData(b), len(b))
		return !match(name) || fn(name)
	})
}
