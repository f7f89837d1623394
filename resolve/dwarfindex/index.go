// Package dwarfindex is gprobe's on-disk cache for one debug image, keyed by
// its GNU build-id and file size: an index of what a full pass over the
// image's DWARF and symbols learned (unit headers, function names, source
// files, the symbol table in address order), so that the next run goes
// straight to the compile units it needs, and inflated copies of the
// image's compressed debug sections, so that no run inflates a section
// twice.
//
// The package owns the formats and the directory layout; what the entries
// mean is resolve/dwarfinfo's business. Every file is written to a
// temporary name and renamed into place, so concurrent runs see a whole
// file or none; every file is checksummed over all its contents (the
// index as a whole when it is loaded, a section copy chunk by chunk as it
// is read), and a file that fails its checks is reported as damaged
// (ErrDamaged) and is rebuilt by the caller. A cache directory another
// user could change is refused (ErrUnsafe).
package dwarfindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"sort"
)

// Sentinel errors. Errors returned by this package wrap one of them (or an
// *os.PathError).
var (
	// ErrDamaged means a cache file exists but is truncated, corrupted, of
	// another format version, or describes another image.
	ErrDamaged = errors.New("damaged index")
	// ErrNotFound means the cache holds nothing for the image.
	ErrNotFound = errors.New("not in the index cache")
	// ErrUnsafe means the cache directory, or the image's directory in
	// it, could be changed by another user: it is not used.
	ErrUnsafe = errors.New("index cache refused")
)

// Key identifies an image: its GNU build-id (hex) and its size in bytes.
// The size tells apart files that share a build-id but not their bytes
// (a vmlinux and its objcopy'd, compressed twin).
type Key struct {
	BuildID string
	Size    int64
}

// valid reports a key usable as a directory name: lower-case hex, of a
// plausible length.
func (k Key) valid() bool {
	if len(k.BuildID) < 2 || len(k.BuildID) > 128 || len(k.BuildID)%2 != 0 || k.Size <= 0 {
		return false
	}
	for i := 0; i < len(k.BuildID); i++ {
		c := k.BuildID[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Unit is a .debug_info unit header.
type Unit struct {
	Off, End  uint64 // [start of the length field, one past the last byte)
	DIEOff    uint64 // the unit DIE, absolute
	AbbrevOff uint64
	Version   uint16
	Type      uint8 // DW_UT_*
	AddrSize  uint8
	Dwarf64   bool
}

// Ref is a place in the DWARF: a unit, by its index in .debug_info order,
// and an offset in .debug_info (a DIE), or 0.
type Ref struct {
	Unit uint32
	Off  uint64
}

// Index is what one image's cache file holds. A nil part was not computed
// yet.
type Index struct {
	Key Key
	// Units are the .debug_info unit headers, in order.
	Units []Unit
	// Funcs maps each name under which a subprogram definition is found to
	// the definitions, in unit then DIE order.
	Funcs *Names
	// Files maps each file name of a unit's line table to the units
	// naming it (Off is 0).
	Files *Names
	// SymOrder lists the symbol table's entries (by their index in the
	// table) in address order, entries at one address in table order.
	SymOrder *Uint32s
	// EHFrame and DebugFrame are the FDEs of .eh_frame and .debug_frame.
	EHFrame, DebugFrame *FDEs

	release func() // unmaps the file the parts alias
}

// Close releases the file a loaded index was read from; its parts are
// then invalid.
func (x *Index) Close() {
	if x.release != nil {
		x.release()
		x.release = nil
	}
}

// Uint32s is an array of uint32, read in place.
type Uint32s struct{ raw []byte }

// NewUint32s encodes v.
func NewUint32s(v []uint32) *Uint32s {
	raw := make([]byte, 0, 4*len(v))
	for _, x := range v {
		raw = binary.LittleEndian.AppendUint32(raw, x)
	}
	return &Uint32s{raw: raw}
}

// Len is the number of elements.
func (a *Uint32s) Len() int { return len(a.raw) / 4 }

// At returns element i.
func (a *Uint32s) At(i int) uint32 { return binary.LittleEndian.Uint32(a.raw[4*i:]) }

// FDEs are a call frame section's frame description entries: each one's
// address range and offset in the section, sorted by start address; read
// in place.
type FDEs struct{ raw []byte }

const fdeRecord = 24

// FDEBuilder collects FDEs.
type FDEBuilder struct{ raw []byte }

// Add records an FDE at off covering [begin, end).
func (b *FDEBuilder) Add(begin, end, off uint64) {
	le := binary.LittleEndian
	b.raw = le.AppendUint64(le.AppendUint64(le.AppendUint64(b.raw, begin), end), off)
}

// Grow makes room for n more FDEs.
func (b *FDEBuilder) Grow(n int) { b.raw = slices.Grow(b.raw, n*fdeRecord) }

// Build sorts the FDEs by start address, keeping the order of FDEs that
// start together.
func (b *FDEBuilder) Build() *FDEs {
	t := &FDEs{raw: b.raw}
	n := t.Len()
	sorted := true
	for i := 1; i < n && sorted; i++ {
		sorted = t.begin(i-1) <= t.begin(i)
	}
	if !sorted {
		recs := make([][fdeRecord]byte, n)
		for i := range recs {
			copy(recs[i][:], t.raw[i*fdeRecord:])
		}
		slices.SortStableFunc(recs, func(a, b [fdeRecord]byte) int {
			return cmpU64(binary.LittleEndian.Uint64(a[:]), binary.LittleEndian.Uint64(b[:]))
		})
		for i := range recs {
			copy(t.raw[i*fdeRecord:], recs[i][:])
		}
	}
	return t
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Len is the number of FDEs.
func (t *FDEs) Len() int { return len(t.raw) / fdeRecord }

func (t *FDEs) begin(i int) uint64 { return binary.LittleEndian.Uint64(t.raw[i*fdeRecord:]) }

// At returns FDE i: its range [begin, end) and its offset in its section.
func (t *FDEs) At(i int) (begin, end, off uint64) {
	r := t.raw[i*fdeRecord:]
	le := binary.LittleEndian
	return le.Uint64(r), le.Uint64(r[8:]), le.Uint64(r[16:])
}

// Find returns the first FDE, in start order, for which begin <= addr <
// end or begin >= addr, or Len() (the search delve's FDEForPC makes).
func (t *FDEs) Find(addr uint64) int {
	return sort.Search(t.Len(), func(i int) bool {
		b, e, _ := t.At(i)
		return addr-b < e-b || b >= addr
	})
}

// Format: a header, then the parts, little-endian throughout.
//
//	magic   [8]byte  "gpidx\x00\x00\x03" (the last byte is the version)
//	crc     uint32   CRC-32C of everything after this field
//	size    uint64   Key.Size
//	idlen   uint32   then idlen bytes of Key.BuildID
//	parts   uint32   then per part: kind uint32, length uint64, payload
var magic = [8]byte{'g', 'p', 'i', 'd', 'x', 0, 0, formatVersion}

// formatVersion is the index format's version, in its magic and its file
// name: indexes of other versions (other gprobe releases sharing the cache)
// are never read, so never taken for damaged ones.
//
// Version 3: the function names of a unit that is not C's include those
// of functions inside namespaces, classes and structures (Rust's).
const formatVersion = 3

// indexFile is the name of the index file in an image's cache directory.
var indexFile = fmt.Sprintf("index-v%d", formatVersion)

// Part kinds.
const (
	partUnits    = 1
	partFuncs    = 2
	partFiles    = 3
	partSymOrder = 4
	partEHFrame  = 5
	partDbgFrame = 6
)

const unitRecord = 8*4 + 2 + 1 + 1 + 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode returns the index in its file format.
func (x *Index) Encode() []byte {
	le := binary.LittleEndian
	b := append([]byte{}, magic[:]...)
	b = le.AppendUint32(b, 0) // crc, filled in below
	b = le.AppendUint64(b, uint64(x.Key.Size))
	b = le.AppendUint32(b, uint32(len(x.Key.BuildID)))
	b = append(b, x.Key.BuildID...)
	var parts [][]byte
	var kinds []uint32
	if x.Units != nil {
		p := le.AppendUint32(nil, uint32(len(x.Units)))
		for _, u := range x.Units {
			p = le.AppendUint64(p, u.Off)
			p = le.AppendUint64(p, u.End)
			p = le.AppendUint64(p, u.DIEOff)
			p = le.AppendUint64(p, u.AbbrevOff)
			p = le.AppendUint16(p, u.Version)
			dw64 := byte(0)
			if u.Dwarf64 {
				dw64 = 1
			}
			p = append(p, u.Type, u.AddrSize, dw64)
		}
		parts, kinds = append(parts, p), append(kinds, partUnits)
	}
	if x.Funcs != nil {
		parts, kinds = append(parts, x.Funcs.encode()), append(kinds, partFuncs)
	}
	if x.Files != nil {
		parts, kinds = append(parts, x.Files.encode()), append(kinds, partFiles)
	}
	if x.SymOrder != nil {
		parts, kinds = append(parts, x.SymOrder.raw), append(kinds, partSymOrder)
	}
	if x.EHFrame != nil {
		parts, kinds = append(parts, x.EHFrame.raw), append(kinds, partEHFrame)
	}
	if x.DebugFrame != nil {
		parts, kinds = append(parts, x.DebugFrame.raw), append(kinds, partDbgFrame)
	}
	b = le.AppendUint32(b, uint32(len(parts)))
	for i, p := range parts {
		b = le.AppendUint32(b, kinds[i])
		b = le.AppendUint64(b, uint64(len(p)))
		b = append(b, p...)
	}
	le.PutUint32(b[8:], crc32.Checksum(b[12:], castagnoli))
	return b
}

// Decode reads an index file. The Names parts alias b. Returns an error
// wrapping ErrDamaged for anything but a well-formed file of this format
// version.
func Decode(b []byte) (*Index, error) {
	le := binary.LittleEndian
	if len(b) < 12 || !bytes.Equal(b[:8], magic[:]) {
		return nil, fmt.Errorf("%w: not an index of this version", ErrDamaged)
	}
	if crc32.Checksum(b[12:], castagnoli) != le.Uint32(b[8:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrDamaged)
	}
	r := reader{b: b, pos: 12}
	x := &Index{}
	x.Key.Size = int64(r.u64())
	x.Key.BuildID = string(r.bytes(uint64(r.u32())))
	n := r.u32()
	if r.err != nil {
		return nil, r.err
	}
	for i := uint32(0); i < n; i++ {
		kind := r.u32()
		p := r.bytes(r.u64())
		if r.err != nil {
			return nil, r.err
		}
		var err error
		switch kind {
		case partUnits:
			x.Units, err = decodeUnits(p)
		case partFuncs:
			x.Funcs, err = decodeNames(p)
		case partFiles:
			x.Files, err = decodeNames(p)
		case partSymOrder:
			if len(p)%4 != 0 {
				err = fmt.Errorf("%w: bad symbol order", ErrDamaged)
			}
			x.SymOrder = &Uint32s{raw: p}
		case partEHFrame, partDbgFrame:
			t := &FDEs{raw: p}
			if len(p)%fdeRecord != 0 {
				err = fmt.Errorf("%w: bad frame table", ErrDamaged)
			}
			for i := 1; err == nil && i < t.Len(); i++ {
				if t.begin(i-1) > t.begin(i) {
					err = fmt.Errorf("%w: frame table out of order", ErrDamaged)
				}
			}
			if kind == partEHFrame {
				x.EHFrame = t
			} else {
				x.DebugFrame = t
			}
		default:
			err = fmt.Errorf("%w: unknown part %d", ErrDamaged, kind)
		}
		if err != nil {
			return nil, err
		}
	}
	if r.pos != len(b) {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrDamaged, len(b)-r.pos)
	}
	return x, nil
}

// reader reads the fixed fields; the first error sticks.
type reader struct {
	b   []byte
	pos int
	err error
}

func (r *reader) bytes(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)-r.pos) {
		r.err = fmt.Errorf("%w: truncated", ErrDamaged)
		return nil
	}
	p := r.b[r.pos : r.pos+int(n) : r.pos+int(n)]
	r.pos += int(n)
	return p
}

func (r *reader) u32() uint32 {
	if p := r.bytes(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if p := r.bytes(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func decodeUnits(p []byte) ([]Unit, error) {
	r := reader{b: p}
	n := uint64(r.u32())
	if r.err != nil || n > uint64(len(p))/unitRecord {
		return nil, fmt.Errorf("%w: bad unit table", ErrDamaged)
	}
	units := make([]Unit, 0, n)
	var prevEnd uint64
	for i := uint64(0); i < n; i++ {
		u := Unit{Off: r.u64(), End: r.u64(), DIEOff: r.u64(), AbbrevOff: r.u64()}
		if v := r.bytes(2); v != nil {
			u.Version = binary.LittleEndian.Uint16(v)
		}
		if v := r.bytes(3); v != nil {
			u.Type, u.AddrSize, u.Dwarf64 = v[0], v[1], v[2] != 0
		}
		if r.err != nil || u.Off < prevEnd || u.Off >= u.End || u.DIEOff <= u.Off || u.DIEOff > u.End {
			return nil, fmt.Errorf("%w: bad unit %d", ErrDamaged, i)
		}
		prevEnd = u.End
		units = append(units, u)
	}
	if r.pos != len(p) {
		return nil, fmt.Errorf("%w: bad unit table", ErrDamaged)
	}
	return units, nil
}

// Names maps names to ascending lists of Refs. It is read in place from
// its encoded form:
//
//	n        uint32
//	nameEnd  [n]uint32  end of name i in the name bytes (names sorted)
//	refEnd   [n]uint32  end of name i's refs in the ref bytes
//	nameLen  uint32, then the name bytes
//	the ref bytes: per ref, uvarint unit delta, then uvarint offset
//	(a delta from the previous ref's when the unit is the same)
type Names struct {
	n       int
	nameEnd []byte
	refEnd  []byte
	names   []byte
	refs    []byte
}

func decodeNames(p []byte) (*Names, error) {
	r := reader{b: p}
	n := uint64(r.u32())
	if r.err != nil || n > uint64(len(p))/8 {
		return nil, fmt.Errorf("%w: bad name table", ErrDamaged)
	}
	t := &Names{n: int(n), nameEnd: r.bytes(4 * n), refEnd: r.bytes(4 * n)}
	t.names = r.bytes(uint64(r.u32()))
	if r.err != nil {
		return nil, r.err
	}
	t.refs = p[r.pos:]
	// Ends must not decrease and must stay inside their byte arrays, so
	// that lookups need no further checks.
	for _, c := range []struct {
		ends []byte
		size int
	}{{t.nameEnd, len(t.names)}, {t.refEnd, len(t.refs)}} {
		prev := uint32(0)
		for i := 0; i < t.n; i++ {
			e := binary.LittleEndian.Uint32(c.ends[4*i:])
			if e < prev || int64(e) > int64(c.size) {
				return nil, fmt.Errorf("%w: bad name table", ErrDamaged)
			}
			prev = e
		}
		if t.n > 0 && int(prev) != c.size {
			return nil, fmt.Errorf("%w: bad name table", ErrDamaged)
		}
	}
	return t, nil
}

// Len is the number of names.
func (t *Names) Len() int { return t.n }

func (t *Names) end(ends []byte, i int) uint32 {
	if i < 0 {
		return 0
	}
	return binary.LittleEndian.Uint32(ends[4*i:])
}

// Name returns name i (aliasing the index; do not modify).
func (t *Names) Name(i int) []byte {
	return t.names[t.end(t.nameEnd, i-1):t.end(t.nameEnd, i)]
}

// Find returns the position of name, or false.
func (t *Names) Find(name []byte) (int, bool) {
	i := sort.Search(t.n, func(i int) bool { return bytes.Compare(t.Name(i), name) >= 0 })
	return i, i < t.n && bytes.Equal(t.Name(i), name)
}

// Refs appends the refs of name i to dst. Returns an error wrapping
// ErrDamaged if they cannot be decoded.
func (t *Names) Refs(i int, dst []Ref) ([]Ref, error) {
	p := t.refs[t.end(t.refEnd, i-1):t.end(t.refEnd, i)]
	var prev Ref
	first := true
	for len(p) > 0 {
		du, n := binary.Uvarint(p)
		if n <= 0 {
			return dst, fmt.Errorf("%w: bad ref list", ErrDamaged)
		}
		p = p[n:]
		off, n := binary.Uvarint(p)
		if n <= 0 || du > uint64(^uint32(0)-prev.Unit) {
			return dst, fmt.Errorf("%w: bad ref list", ErrDamaged)
		}
		p = p[n:]
		r := Ref{Unit: prev.Unit + uint32(du), Off: off}
		if du == 0 && !first {
			r.Off = prev.Off + off
		}
		dst = append(dst, r)
		prev, first = r, false
	}
	return dst, nil
}

func (t *Names) encode() []byte {
	le := binary.LittleEndian
	p := le.AppendUint32(nil, uint32(t.n))
	p = append(p, t.nameEnd...)
	p = append(p, t.refEnd...)
	p = le.AppendUint32(p, uint32(len(t.names)))
	p = append(p, t.names...)
	return append(p, t.refs...)
}

// NamesBuilder collects (name, Ref) pairs for a Names table.
type NamesBuilder struct {
	m map[string][]Ref
}

// Add records that name leads to r. name is copied.
func (b *NamesBuilder) Add(name []byte, r Ref) {
	if b.m == nil {
		b.m = map[string][]Ref{}
	}
	if refs, ok := b.m[string(name)]; ok {
		b.m[string(name)] = append(refs, r)
		return
	}
	b.m[string(name)] = []Ref{r}
}

// Build returns the table: names sorted, each name's refs sorted and
// without duplicates.
func (b *NamesBuilder) Build() *Names {
	names := make([]string, 0, len(b.m))
	for n := range b.m {
		names = append(names, n)
	}
	sort.Strings(names)
	le := binary.LittleEndian
	t := &Names{n: len(names)}
	for _, n := range names {
		t.names = append(t.names, n...)
		t.nameEnd = le.AppendUint32(t.nameEnd, uint32(len(t.names)))
		refs := b.m[n]
		slices.SortFunc(refs, cmpRef)
		refs = slices.Compact(refs)
		var prev Ref
		for i, r := range refs {
			off := r.Off
			if i > 0 && r.Unit == prev.Unit {
				off -= prev.Off
			}
			t.refs = binary.AppendUvarint(t.refs, uint64(r.Unit-prev.Unit))
			t.refs = binary.AppendUvarint(t.refs, off)
			prev = r
		}
		t.refEnd = le.AppendUint32(t.refEnd, uint32(len(t.refs)))
	}
	return t
}

func cmpRef(a, b Ref) int {
	switch {
	case a.Unit != b.Unit:
		if a.Unit < b.Unit {
			return -1
		}
		return 1
	case a.Off < b.Off:
		return -1
	case a.Off > b.Off:
		return 1
	}
	return 0
}
