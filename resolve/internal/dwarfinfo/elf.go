// Package dwarfinfo opens an ELF image with DWARF and answers the questions
// the resolver asks, without reading more of the file than needed.
//
// The file is mapped, never copied: debug sections are slices of the mapping
// (compressed sections are inflated once, into the index cache's copy or
// a scratch file, and read from there; see compress.go).
// Finding a function walks compile units with a small allocation-free DIE
// scanner that descends only into scopes, or, with an index cache
// (resolve/dwarfindex), looks the name up in the index the first walk
// wrote (see index.go); a matching unit is then decoded in full
// (debug/dwarf over that unit's bytes) into a lines.Unit. The scanner, like
// the other hand-written decoders here (range and location lists, call
// frame information, .debug_aranges), reads bytes and attribute forms
// through internal/dwbuf.
package dwarfinfo

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gprobe/gprobe/resolve/dwarfindex"
)

// Sentinel errors. Errors returned by this package wrap one of them.
var (
	// ErrNoDWARF means the file has no usable .debug_info.
	ErrNoDWARF = errors.New("no DWARF debug information")
	// ErrBadDWARF means the debug information is malformed.
	ErrBadDWARF = errors.New("malformed DWARF")
	// ErrNotELF means the file is not an ELF image gprobe can read.
	ErrNotELF = errors.New("not a readable ELF file")
)

// File is an open ELF image. It is safe for concurrent use once opened.
type File struct {
	Path    string
	ELF     *elf.File
	Order   binary.ByteOrder
	Machine elf.Machine
	Type    elf.Type

	mm         []byte
	sections   map[string][]byte             // plain sections: slices of mm
	compressed map[string]*compressedSection // by .debug_ name (.zdebug_ too)

	infMu      sync.Mutex
	inflations map[string]*inflation

	cache   *dwarfindex.Cache // nil: no index cache
	key     dwarfindex.Key
	warn    func(string)
	idx     index
	derived derived

	unitsOnce sync.Once
	units     []unitHeader
	unitsErr  error

	lastMu sync.Mutex
	last   *CU // the unit Unit decoded last

	fd *os.File // kept open for pread-based scans

	cfiOnce sync.Once
	cfiErr  error
	cfiSecs []*cfiSection // .eh_frame, then .debug_frame

	rel *relocState // ET_REL: section layout and debug relocations

	unitRangesOnce sync.Once
	unitRanges     []unitRange // UnitCovering's table without .debug_aranges
	unitRangesErr  error

	// exec is the binary a separate debug file describes (OpenSeparate):
	// its code, which the debug file does not carry.
	exec *File
}

// Options tune Open.
type Options struct {
	// Cache, when set, keeps what one run learns about the image (see
	// resolve/dwarfindex) and inflated copies of its compressed sections
	// for the next run, under the image's build-id and size. An image
	// without a build-id is not cached.
	Cache *dwarfindex.Cache
	// Warn receives one line when a cache file is damaged and is rebuilt.
	Warn func(string)
}

// Open maps path and parses its ELF headers, without a cache. See
// OpenWith.
func Open(path string) (*File, error) { return OpenWith(path, Options{}) }

// OpenWith maps path and parses its ELF headers. Returns an error wrapping
// ErrNotELF if the file is not ELF, and a *os.PathError if it cannot be
// read.
func OpenWith(path string, o Options) (f *File, err error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if f == nil {
			fd.Close()
		}
	}()
	st, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file", path, ErrNotELF)
	}
	if st.Size() < 64 {
		return nil, fmt.Errorf("%s: %w: file too short", path, ErrNotELF)
	}
	mm, err := syscall.Mmap(int(fd.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	// Random access keeps the kernel from mapping pages around each fault,
	// so resident memory stays proportional to what is actually read.
	_ = syscall.Madvise(mm, syscall.MADV_RANDOM)
	defer func() {
		if r := recover(); r != nil {
			syscall.Munmap(mm)
			f, err = nil, fmt.Errorf("%s: %w: %v", path, ErrNotELF, r)
		}
	}()
	ef, err := elf.NewFile(bytes.NewReader(mm))
	if err != nil {
		syscall.Munmap(mm)
		return nil, fmt.Errorf("%s: %w: %v", path, ErrNotELF, err)
	}
	f = &File{Path: path, ELF: ef, Order: ef.ByteOrder, Machine: ef.Machine, Type: ef.Type,
		mm: mm, sections: map[string][]byte{}, compressed: map[string]*compressedSection{}, fd: fd,
		warn: o.Warn}
	if f.warn == nil {
		f.warn = func(string) {}
	}
	for _, s := range ef.Sections {
		if s.Type == elf.SHT_NOBITS {
			continue
		}
		if s.Flags&elf.SHF_COMPRESSED != 0 || strings.HasPrefix(s.Name, ".zdebug_") {
			c, err := f.parseCompressed(s)
			if err != nil {
				continue // unreadable: the section is absent
			}
			name := s.Name
			if strings.HasPrefix(name, ".zdebug_") {
				name = ".debug_" + name[len(".zdebug_"):]
			}
			f.compressed[name] = c
			continue
		}
		if s.Offset+s.Size > uint64(len(mm)) || s.Offset+s.Size < s.Offset {
			continue
		}
		f.sections[s.Name] = mm[s.Offset : s.Offset+s.Size]
	}
	if ef.Type == elf.ET_REL {
		f.initReloc()
	}
	if o.Cache != nil {
		if report, err := o.Cache.Refused(); err != nil {
			if report {
				f.warn(fmt.Sprintf("gprobe: %v; not using it", err))
			}
		} else if id := f.BuildID(); id != "" {
			f.cache, f.key = o.Cache, dwarfindex.Key{BuildID: id, Size: st.Size()}
			f.loadIndex()
		}
	}
	f.prefetch()
	return f, nil
}

// wholeSections are read through end to end by most resolutions.
var wholeSections = []string{".debug_abbrev", ".symtab", ".strtab", ".debug_str", ".debug_frame", ".debug_line_str", ".debug_str_offsets"}

// prefetch asks the kernel to read wholeSections ahead, in large requests:
// under MADV_RANDOM each first touch of a page would otherwise be its own
// synchronous 4 KiB read, thousands of them on a cold cache. The pages go
// to the page cache, not into this process's resident set. Their mapping
// is made MADV_NORMAL again, so that a fault maps the neighbouring cached
// pages too (fault-around) instead of one page per fault: a page fault
// costs tens of microseconds on some virtual machines.
func (f *File) prefetch() {
	const page = 4096
	for _, name := range wholeSections {
		s := f.ELF.Section(name)
		if s == nil || f.sections[name] == nil {
			continue
		}
		start := s.Offset &^ (page - 1)
		_ = unix.Madvise(f.mm[start:s.Offset+s.Size], unix.MADV_NORMAL)
		_ = unix.Madvise(f.mm[start:s.Offset+s.Size], unix.MADV_WILLNEED)
	}
}

// Close unmaps the file. Slices obtained from the File become invalid.
// Inflated sections being copied into the cache are finished first.
func (f *File) Close() error {
	if f.mm == nil {
		return nil
	}
	if f.exec != nil {
		f.exec.Close()
	}
	f.infMu.Lock()
	for _, in := range f.inflations {
		in.close()
	}
	f.inflations = nil
	f.infMu.Unlock()
	if f.idx.x != nil {
		f.idx.x.Close()
	}
	f.unmapDerived()
	err := syscall.Munmap(f.mm)
	f.mm = nil
	if cerr := f.fd.Close(); err == nil {
		err = cerr
	}
	return err
}

// Section returns the contents of the named section, or nil if absent.
// A compressed section (SHF_COMPRESSED or .zdebug) is inflated in full
// first. In a relocatable file, a debug section with relocations is a
// private copy with them applied (nil if they cannot be applied).
func (f *File) Section(name string) []byte {
	if b, ok := f.sections[name]; ok {
		return b
	}
	if b, ok, _ := f.relocatedSection(name); ok {
		return b
	}
	c := f.compressed[name]
	if c == nil {
		return nil
	}
	b, err := f.inflation(name, c).bytes(0, c.size)
	if err != nil {
		return nil
	}
	return b
}

// hasSection reports whether the file has the named section with its
// contents (compressed or not; a .zdebug_ section by its .debug_ name): a
// SHT_NOBITS section, as in a separate debug file, is none.
func (f *File) hasSection(name string) bool {
	return f.sectionSize(name) > 0
}

// sectionSize is the (inflated) size of a section, 0 if absent.
func (f *File) sectionSize(name string) uint64 {
	if c := f.compressed[name]; c != nil {
		return c.size
	}
	if s := f.ELF.Section(name); s != nil && s.Type != elf.SHT_NOBITS {
		return s.Size
	}
	return 0
}

// sectionRange returns [start, end) of a section without copying it: from
// the mapping, or once that much of a compressed section is inflated.
func (f *File) sectionRange(name string, start, end uint64) ([]byte, error) {
	if c := f.compressed[name]; c != nil && f.rel == nil {
		if start > end || end > c.size {
			return nil, fmt.Errorf("%s: %w: %s range past its end", f.Path, ErrBadDWARF, name)
		}
		return f.inflation(name, c).bytes(start, end)
	}
	sec := f.Section(name)
	if start > end || end > uint64(len(sec)) {
		return nil, fmt.Errorf("%s: %w: %s range past its end", f.Path, ErrBadDWARF, name)
	}
	return sec[start:end:end], nil
}

// readSection copies [start, end) of a section into dst (grown as needed)
// with pread, so that scanning a large section does not make its pages
// resident in this process. A compressed section is read as soon as that
// much of it is inflated.
func (f *File) readSection(name string, start, end uint64, dst []byte) ([]byte, error) {
	if start > end {
		return nil, fmt.Errorf("%s: %w: %s range past its end", f.Path, ErrBadDWARF, name)
	}
	if c := f.compressed[name]; c != nil {
		if _, ok, err := f.relocatedSection(name); ok {
			if err != nil {
				return nil, err
			}
			sec := f.Section(name)
			if end > uint64(len(sec)) {
				return nil, fmt.Errorf("%s: %w: %s range past its end", f.Path, ErrBadDWARF, name)
			}
			return append(dst[:0], sec[start:end]...), nil
		}
		if end > c.size {
			return nil, fmt.Errorf("%s: %w: %s range past its end", f.Path, ErrBadDWARF, name)
		}
		b, err := f.inflation(name, c).read(start, end, dst)
		if err != nil {
			return nil, fmt.Errorf("%s: read %s: %w", f.Path, name, err)
		}
		return b, nil
	}
	s := f.ELF.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, fmt.Errorf("%s: %w: no %s section", f.Path, ErrBadDWARF, name)
	}
	n := int(end - start)
	if cap(dst) < n {
		dst = make([]byte, n, n+n/4)
	}
	dst = dst[:n]
	if end > s.Size {
		return nil, fmt.Errorf("%s: %w: %s range past its end", f.Path, ErrBadDWARF, name)
	}
	if _, err := f.fd.ReadAt(dst, int64(s.Offset+start)); err != nil {
		return nil, fmt.Errorf("%s: read %s: %w", f.Path, name, err)
	}
	if err := f.relocateRange(name, dst, start, s.Size); err != nil {
		return nil, err
	}
	return dst, nil
}

// BuildID returns the hex GNU build-id, or "" if the file has none.
func (f *File) BuildID() string {
	for _, s := range f.ELF.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		if id := NoteBuildID(f.sections[s.Name], f.Order); id != "" {
			return id
		}
	}
	return ""
}

// big reports a big-endian file.
func (f *File) big() bool { return f.Order == binary.BigEndian }

// NoteBuildID returns the hex GNU build-id (NT_GNU_BUILD_ID) among ELF
// notes (a note section, or the kernel's /sys/kernel/notes and
// /sys/module/NAME/notes/.note.gnu.build-id), or "".
func NoteBuildID(data []byte, order binary.ByteOrder) string {
	for len(data) >= 12 {
		nsz, dsz, typ := order.Uint32(data), order.Uint32(data[4:]), order.Uint32(data[8:])
		nameEnd := 12 + align4(nsz)
		descEnd := nameEnd + align4(dsz)
		if uint64(descEnd) > uint64(len(data)) {
			break
		}
		if typ == 3 && nsz == 4 && string(data[12:15]) == "GNU" {
			return hex.EncodeToString(data[nameEnd : nameEnd+int(dsz)])
		}
		data = data[descEnd:]
	}
	return ""
}

func align4(n uint32) int { return int((uint64(n) + 3) &^ 3) }

// maxNote bounds what ReaderBuildID reads of one note section or segment.
const maxNote = 1 << 20

// ReaderBuildID returns the hex GNU build-id of the ELF file r (its note
// sections, else its PT_NOTE segments; "" when it has none), or an error
// when r is not ELF. It reads at most 1 MiB of each note and never
// panics on a damaged file: the one reader of a build-id from a file that
// is not opened as a File (a download, a cache entry).
func ReaderBuildID(r io.ReaderAt) (id string, err error) {
	defer func() {
		if p := recover(); p != nil {
			id, err = "", fmt.Errorf("unreadable ELF headers: %v", p)
		}
	}()
	ef, err := elf.NewFile(r)
	if err != nil {
		return "", err
	}
	read := func(rd io.Reader) []byte {
		b, _ := io.ReadAll(io.LimitReader(rd, maxNote))
		return b
	}
	for _, s := range ef.Sections {
		if s.Type == elf.SHT_NOTE {
			if id := NoteBuildID(read(s.Open()), ef.ByteOrder); id != "" {
				return id, nil
			}
		}
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_NOTE {
			if id := NoteBuildID(read(p.Open()), ef.ByteOrder); id != "" {
				return id, nil
			}
		}
	}
	return "", nil
}

// HasDWARF reports whether the file carries .debug_info.
func (f *File) HasDWARF() bool {
	return f.sectionSize(".debug_info") > 0
}

// Symbol is an ELF symbol-table entry. Its name bytes alias the mapped
// file: they are valid until [File.Close]; Name copies them.
type Symbol struct {
	RawName []byte
	// Value is st_value; in a relocatable file, the symbol's address in
	// the section layout (its section's address plus st_value).
	Value uint64
	Size  uint64
	Type  elf.SymType
	Bind  elf.SymBind
	Vis   elf.SymVis
	Sect  elf.SectionIndex
}

// Name returns a copy of the symbol's name.
func (s Symbol) Name() string { return string(s.RawName) }

// Symbols calls fn for each entry of .symtab (or .dynsym when there is
// no .symtab) in table order, decoded straight from the mapping; nothing is
// retained. fn's Symbol.RawName aliases the mapping.
func (f *File) Symbols(fn func(Symbol)) error {
	t, err := f.symtab()
	if err != nil || t == nil {
		return err
	}
	for i := 1; i < t.n; i++ { // entry 0 is the null symbol
		fn(t.at(i))
	}
	return nil
}

// DynamicSymbols calls fn for each entry of .dynsym, in table order, when
// the file has a .symtab too (Symbols walks .dynsym otherwise): perf 6.1
// loads a user binary's .dynsym after its .symtab, so -F lists each
// exported name twice. fn's Symbol.RawName aliases the mapping.
func (f *File) DynamicSymbols(fn func(Symbol)) error {
	if t, err := f.table(elf.SHT_SYMTAB); t == nil || err != nil {
		return err
	}
	t, err := f.table(elf.SHT_DYNSYM)
	if err != nil || t == nil {
		return err
	}
	for i := 1; i < t.n; i++ {
		fn(t.at(i))
	}
	return nil
}

// Runtime is the file the loader maps: the binary a separate debug file
// describes (OpenSeparate), whose .dynsym, relocations and PLT the debug
// file has only as SHT_NOBITS placeholders; f itself otherwise.
func (f *File) Runtime() *File {
	if f.exec != nil {
		return f.exec
	}
	return f
}

// DynamicSymbol decodes entry i of .dynsym (0 is the null symbol); ok is
// false when there is no such entry. Its RawName aliases the mapping.
func (f *File) DynamicSymbol(i int) (s Symbol, ok bool) {
	t, err := f.table(elf.SHT_DYNSYM)
	if err != nil || t == nil || i < 0 || i >= t.n {
		return Symbol{}, false
	}
	return t.at(i), true
}

// SortedSymbols is the symbol table Symbols walks, in address order
// (Symbol.Value), entries with one address in table order, with random
// access. Nothing is decoded until asked for.
type SortedSymbols struct {
	t     *symbolTable
	order *dwarfindex.Uint32s
}

// SortedSymbols returns the symbol table in address order (nil if the file
// has none). With a cache, the order comes from the image's index.
func (f *File) SortedSymbols() (*SortedSymbols, error) {
	t, err := f.symtab()
	if err != nil || t == nil {
		return nil, err
	}
	order := f.symbolOrder(t)
	for i := 0; i < order.Len(); i++ {
		if j := order.At(i); j == 0 || int(j) >= t.n {
			return nil, fmt.Errorf("%s: the index's symbol order does not fit the symbol table", f.Path)
		}
	}
	return &SortedSymbols{t: t, order: order}, nil
}

// Len is the number of entries.
func (s *SortedSymbols) Len() int { return s.order.Len() }

// At decodes entry i. Its RawName aliases the mapping.
func (s *SortedSymbols) At(i int) Symbol { return s.t.at(int(s.order.At(i))) }

// Value is entry i's Symbol.Value.
func (s *SortedSymbols) Value(i int) uint64 { return s.t.value(int(s.order.At(i))) }

// symbolOrder returns the entries of t in address order: from the index,
// or sorted now (and then indexed).
func (f *File) symbolOrder(t *symbolTable) *dwarfindex.Uint32s {
	if x := f.indexed(); x != nil {
		f.idx.mu.Lock()
		order := x.SymOrder
		f.idx.mu.Unlock()
		if order != nil && order.Len() == t.n-1 {
			return order
		}
	}
	order := make([]uint32, 0, t.n-1)
	values := make([]uint64, t.n)
	for i := 1; i < t.n; i++ {
		order = append(order, uint32(i))
		values[i] = t.value(i)
	}
	slices.SortFunc(order, func(a, b uint32) int {
		if c := cmp.Compare(values[a], values[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	enc := dwarfindex.NewUint32s(order)
	if f.cache != nil {
		f.storeIndex(func(x *dwarfindex.Index) { x.SymOrder = enc })
	}
	return enc
}

// SymbolCount returns the number of entries of the symbol table Symbols
// walks (a capacity hint).
func (f *File) SymbolCount() int {
	for _, want := range []elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
		for _, s := range f.ELF.Sections {
			if s.Type == want && s.Entsize > 0 {
				return int(s.Size / s.Entsize)
			}
		}
	}
	return 0
}

// symbolTable decodes entries of a symbol table in place.
type symbolTable struct {
	f     *File
	data  []byte
	strs  []byte
	is64  bool
	esize int
	n     int
}

// symtab returns the table Symbols walks, nil if the file has none.
func (f *File) symtab() (*symbolTable, error) {
	if t, err := f.table(elf.SHT_SYMTAB); t != nil || err != nil {
		return t, err
	}
	return f.table(elf.SHT_DYNSYM)
}

// table returns the first symbol table of type typ, nil if the file has
// none.
func (f *File) table(typ elf.SectionType) (*symbolTable, error) {
	var sec *elf.Section
	for _, s := range f.ELF.Sections {
		if s.Type == typ {
			sec = s
			break
		}
	}
	if sec == nil {
		return nil, nil
	}
	if int(sec.Link) >= len(f.ELF.Sections) {
		return nil, fmt.Errorf("%s: %w: symbol table has no string table", f.Path, ErrNotELF)
	}
	t := &symbolTable{f: f, data: f.Section(sec.Name), strs: f.Section(f.ELF.Sections[sec.Link].Name),
		is64: f.ELF.Class == elf.ELFCLASS64, esize: 16}
	if t.is64 {
		t.esize = 24
	}
	t.n = len(t.data) / t.esize
	return t, nil
}

// value is entry i's Symbol.Value.
func (t *symbolTable) value(i int) uint64 {
	e := t.data[i*t.esize : (i+1)*t.esize]
	var v uint64
	var sect elf.SectionIndex
	if t.is64 {
		v, sect = t.f.Order.Uint64(e[8:]), elf.SectionIndex(t.f.Order.Uint16(e[6:]))
	} else {
		v, sect = uint64(t.f.Order.Uint32(e[4:])), elf.SectionIndex(t.f.Order.Uint16(e[14:]))
	}
	if rel := t.f.rel; rel != nil && sect < elf.SHN_LORESERVE && int(sect) < len(rel.secAddr) {
		v += rel.secAddr[sect]
	}
	return v
}

// at decodes entry i.
func (t *symbolTable) at(i int) Symbol {
	f, bo := t.f, t.f.Order
	e := t.data[i*t.esize : (i+1)*t.esize]
	var s Symbol
	var name uint32
	var info, other byte
	if t.is64 {
		name, info, other = bo.Uint32(e), e[4], e[5]
		s.Sect = elf.SectionIndex(bo.Uint16(e[6:]))
		s.Value, s.Size = bo.Uint64(e[8:]), bo.Uint64(e[16:])
	} else {
		name = bo.Uint32(e)
		s.Value, s.Size = uint64(bo.Uint32(e[4:])), uint64(bo.Uint32(e[8:]))
		info, other = e[12], e[13]
		s.Sect = elf.SectionIndex(bo.Uint16(e[14:]))
	}
	s.Type, s.Bind, s.Vis = elf.ST_TYPE(info), elf.ST_BIND(info), elf.ST_VISIBILITY(other)
	if f.rel != nil && s.Sect < elf.SHN_LORESERVE && int(s.Sect) < len(f.rel.secAddr) {
		s.Value += f.rel.secAddr[s.Sect]
	}
	if name != 0 && uint64(name) < uint64(len(t.strs)) {
		b := t.strs[name:]
		if j := bytes.IndexByte(b, 0); j >= 0 {
			s.RawName = b[:j:j]
		}
	}
	return s
}

// Code returns the bytes of the loaded image at [addr, addr+size), read
// from the section that contains them (in a separate debug file, from the
// binary it describes), or nil when they are not in the file (e.g. .bss).
func (f *File) Code(addr, size uint64) []byte {
	if f.exec != nil {
		return f.exec.Code(addr, size)
	}
	for i, s := range f.ELF.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS {
			continue
		}
		base := f.sectionAddr(i)
		if addr >= base && addr+size <= base+s.Size && addr+size >= addr {
			b := f.sections[s.Name]
			if b == nil {
				return nil
			}
			return b[addr-base : addr-base+size]
		}
	}
	return nil
}

// FileOffset converts a virtual address to a file offset through the
// program headers (uprobes take file offsets).
func (f *File) FileOffset(addr uint64) (uint64, bool) {
	for _, p := range f.ELF.Progs {
		if p.Type == elf.PT_LOAD && addr >= p.Vaddr && addr < p.Vaddr+p.Filesz {
			return addr - p.Vaddr + p.Off, true
		}
	}
	return 0, false
}
