// Package dwarfinfo opens an ELF image with DWARF and answers the questions
// the resolver asks, without reading more of the file than needed.
//
// The file is mapped, never copied: debug sections are slices of the mapping
// (compressed sections are the exception and are inflated on first use).
// Finding a function walks compile units with a small allocation-free DIE
// scanner that descends only into scopes; a matching unit is then decoded
// in full (debug/dwarf over that unit's bytes) into a lines.Unit. The
// scanner, like the other hand-written decoders here (range and location
// lists, CFA programs, .debug_aranges), reads bytes and attribute forms
// through internal/dwbuf.
package dwarfinfo

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/go-delve/delve/pkg/dwarf/frame"
	"golang.org/x/sys/unix"
	"os"
	"sync"
	"syscall"
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

	mm       []byte
	sections map[string][]byte
	inflated sync.Map // name -> []byte for compressed sections

	unitsOnce sync.Once
	units     []unitHeader
	unitsErr  error

	fd *os.File // kept open for pread-based scans

	cfiOnce sync.Once
	cfi     cfiRanges
	cfiErr  error
	fdes    []frame.FrameDescriptionEntries // .eh_frame, then .debug_frame

	rel *relocState // ET_REL: section layout and debug relocations
}

// Open maps path and parses its ELF headers. Returns an error wrapping
// ErrNotELF if the file is not ELF, and a *os.PathError if it cannot be
// read.
func Open(path string) (f *File, err error) {
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
		mm: mm, sections: map[string][]byte{}, fd: fd}
	for _, s := range ef.Sections {
		if s.Type == elf.SHT_NOBITS || s.Offset+s.Size > uint64(len(mm)) || s.Offset+s.Size < s.Offset {
			continue
		}
		if s.Flags&elf.SHF_COMPRESSED != 0 {
			continue // inflated on demand by Section
		}
		f.sections[s.Name] = mm[s.Offset : s.Offset+s.Size]
	}
	if ef.Type == elf.ET_REL {
		f.initReloc()
	}
	f.prefetch()
	return f, nil
}

// wholeSections are read through end to end by most resolutions.
var wholeSections = []string{".debug_abbrev", ".symtab", ".strtab", ".debug_str", ".debug_frame", ".debug_line_str", ".debug_str_offsets"}

// prefetch asks the kernel to read wholeSections ahead, in large requests:
// under MADV_RANDOM each first touch of a page would otherwise be its own
// synchronous 4 KiB read, thousands of them on a cold cache. The pages go
// to the page cache, not into this process's resident set.
func (f *File) prefetch() {
	const page = 4096
	for _, name := range wholeSections {
		s := f.ELF.Section(name)
		if s == nil || s.Type == elf.SHT_NOBITS || s.Flags&elf.SHF_COMPRESSED != 0 || s.Offset+s.Size > uint64(len(f.mm)) {
			continue
		}
		start := s.Offset &^ (page - 1)
		_ = unix.Madvise(f.mm[start:s.Offset+s.Size], unix.MADV_WILLNEED)
	}
}

// Close unmaps the file. Slices obtained from the File become invalid.
func (f *File) Close() error {
	if f.mm == nil {
		return nil
	}
	err := syscall.Munmap(f.mm)
	f.mm = nil
	if cerr := f.fd.Close(); err == nil {
		err = cerr
	}
	return err
}

// Section returns the contents of the named section, or nil if absent.
// Compressed sections (SHF_COMPRESSED or .zdebug) are inflated once. In a
// relocatable file, a debug section with relocations is a private copy
// with them applied (nil if they cannot be applied).
func (f *File) Section(name string) []byte {
	if b, ok := f.sections[name]; ok {
		return b
	}
	if b, ok, _ := f.relocatedSection(name); ok {
		return b
	}
	if b, ok := f.inflated.Load(name); ok {
		return b.([]byte)
	}
	s := f.ELF.Section(name)
	if s == nil && len(name) > 7 && name[:7] == ".debug_" {
		s = f.ELF.Section(".zdebug_" + name[7:])
	}
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil
	}
	b, err := s.Data()
	if err != nil {
		return nil
	}
	f.inflated.Store(name, b)
	return b
}

// readSection copies [start, end) of a section into dst (grown as needed)
// with pread, so that scanning a large section does not make its pages
// resident in this process. Compressed sections are served from memory.
func (f *File) readSection(name string, start, end uint64, dst []byte) ([]byte, error) {
	n := int(end - start)
	if cap(dst) < n {
		dst = make([]byte, n, n+n/4)
	}
	dst = dst[:n]
	s := f.ELF.Section(name)
	if s == nil || s.Flags&elf.SHF_COMPRESSED != 0 {
		if _, ok, err := f.relocatedSection(name); ok && err != nil {
			return nil, err
		}
		sec := f.Section(name)
		if end > uint64(len(sec)) {
			return nil, fmt.Errorf("%s: %w: %s range past its end", f.Path, ErrBadDWARF, name)
		}
		copy(dst, sec[start:end])
		return dst, nil
	}
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

// HasDWARF reports whether the file carries .debug_info.
func (f *File) HasDWARF() bool {
	s := f.ELF.Section(".debug_info")
	if s == nil {
		s = f.ELF.Section(".zdebug_info")
	}
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size == 0 {
		return false
	}
	if s.Flags&elf.SHF_COMPRESSED != 0 || s.Name != ".debug_info" {
		return len(f.Section(".debug_info")) > 0
	}
	return true
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
	return f.readSymbols(fn)
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

func (f *File) readSymbols(fn func(Symbol)) error {
	var sec *elf.Section
	for _, want := range []elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
		for _, s := range f.ELF.Sections {
			if s.Type == want {
				sec = s
				break
			}
		}
		if sec != nil {
			break
		}
	}
	if sec == nil {
		return nil
	}
	data := f.Section(sec.Name)
	if int(sec.Link) >= len(f.ELF.Sections) {
		return fmt.Errorf("%s: %w: symbol table has no string table", f.Path, ErrNotELF)
	}
	strs := f.Section(f.ELF.Sections[sec.Link].Name)
	is64 := f.ELF.Class == elf.ELFCLASS64
	size := 16
	if is64 {
		size = 24
	}
	n := len(data) / size
	bo := f.Order
	for i := 1; i < n; i++ { // entry 0 is the null symbol
		e := data[i*size : (i+1)*size]
		var s Symbol
		var name uint32
		var info, other byte
		if is64 {
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
		if name != 0 && uint64(name) < uint64(len(strs)) {
			b := strs[name:]
			if j := bytes.IndexByte(b, 0); j >= 0 {
				s.RawName = b[:j:j]
			}
		}
		fn(s)
	}
	return nil
}

// Code returns the bytes of the loaded image at [addr, addr+size), read
// from the section that contains them, or nil when they are not in the
// file (e.g. .bss).
func (f *File) Code(addr, size uint64) []byte {
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
