package dwarfinfo

import (
	"debug/elf"
	"errors"
	"fmt"
	"sort"
	"sync"
)

// ErrRelocation means a relocatable file's debug sections could not be
// relocated (an unsupported relocation type, an undefined symbol, or a
// relocation outside its section).
var ErrRelocation = errors.New("cannot relocate debug information")

// Relocatable objects (kernel modules, .o files) have section-relative
// addresses: every SHF_ALLOC section starts at 0, and the debug sections
// hold zeros where .rela.debug_* entries supply the values. Like libdwfl
// (dwfl_report_offline, __libdwfl_elf_address_range), gprobe lays the
// allocated sections out one after the other from 0x10000 and applies the
// debug relocations against that layout, so that addresses are unique
// across .text, .text.unlikely, .init.text and .exit.text, and equal the
// addresses perf works with.

// relBase is libdwfl's OFFLINE_REDZONE: where the first offline module is
// placed.
const relBase = 0x10000

// relMinAlign is libdwfl's REL_MIN_ALIGN.
const relMinAlign = 0x100

// relocState is the layout and relocation tables of an ET_REL file.
type relocState struct {
	secAddr []uint64       // per section index: layout address (0 when not allocated)
	tables  map[string]int // debug section name -> index of its SHT_RELA section

	symOnce sync.Once
	symAddr []uint64 // per symbol index: S (section base + value)
	symDef  []bool   // symbol is defined (not SHN_UNDEF/SHN_COMMON)
	symErr  error

	mu     sync.Mutex
	copies map[string][]byte // fully relocated private copies
	errs   map[string]error
	tabs   map[string]*relaTable
}

// IsRelocatable reports whether the file is ET_REL (a kernel module or an
// object file), whose addresses are those of gprobe's section layout.
func (f *File) IsRelocatable() bool { return f.rel != nil }

// SectionAddr returns the address of the named section: its sh_addr, or
// for a relocatable file its place in the layout. ok is false when there
// is no such section.
func (f *File) SectionAddr(name string) (addr uint64, ok bool) {
	for i, s := range f.ELF.Sections {
		if s.Name == name {
			return f.sectionAddr(i), true
		}
	}
	return 0, false
}

func (f *File) sectionAddr(i int) uint64 {
	if f.rel != nil {
		if i < len(f.rel.secAddr) {
			return f.rel.secAddr[i]
		}
		return 0
	}
	return f.ELF.Sections[i].Addr
}

// initReloc lays out an ET_REL file's allocated sections and indexes the
// relocation sections that apply to debug sections. The debug sections
// they patch are removed from the plain (mapped) section map: they are
// served relocated, by Section (a private copy) or readSection (patched
// per read range).
func (f *File) initReloc() {
	st := &relocState{tables: map[string]int{}, copies: map[string][]byte{}, errs: map[string]error{},
		tabs: map[string]*relaTable{}}
	st.secAddr = layoutSections(f.ELF.Sections)
	for i, s := range f.ELF.Sections {
		if s.Type != elf.SHT_RELA && s.Type != elf.SHT_REL {
			continue
		}
		if int(s.Info) <= 0 || int(s.Info) >= len(f.ELF.Sections) {
			continue
		}
		t := f.ELF.Sections[s.Info]
		if !isDebugSection(t.Name) || t.Type == elf.SHT_NOBITS || t.Size == 0 {
			continue
		}
		name := t.Name
		if len(name) > 8 && name[:8] == ".zdebug_" {
			name = ".debug_" + name[8:]
		}
		st.tables[name] = i
		delete(f.sections, t.Name)
	}
	f.rel = st
}

// isDebugSection is libebl's default debugscn_p: the sections whose
// relocations libdwfl applies when it loads DWARF.
func isDebugSection(name string) bool {
	return len(name) >= 6 && name[:6] == ".debug" || len(name) >= 7 && name[:7] == ".zdebug" ||
		name == ".gdb_index" || name == ".gnu_debugaltlink"
}

// layoutSections is libdwfl's ET_REL case of __libdwfl_elf_address_range
// with base OFFLINE_REDZONE: allocated sections in section-header order,
// each at the next address aligned to its sh_addralign. Sections that
// already have addresses keep them (libdwfl then only computes a bias;
// gprobe does not shift them).
func layoutSections(secs []*elf.Section) []uint64 {
	addrs := make([]uint64, len(secs))
	base := uint64((relBase + relMinAlign - 1) &^ (relMinAlign - 1))
	start, end := base, base
	var bias uint64
	first := true
	for i := 0; i < len(secs); i++ {
		s := secs[i]
		if s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		align := alignOf(s)
		next := (end + align - 1) &^ (align - 1)
		if s.Addr == 0 || (bias == 0 && end > start && end != next) {
			addrs[i] = next
			if end == base {
				start, base = next, next
			} else if base&(align-1) != 0 {
				// A section needs more alignment than the base has:
				// restart the layout from a better-aligned base.
				base = (base + align - 1) &^ (align - 1)
				start, end = base, base
				for j := 0; j <= i; j++ {
					p := secs[j]
					if p.Flags&elf.SHF_ALLOC == 0 {
						continue
					}
					pa := alignOf(p)
					addrs[j] = (end + pa - 1) &^ (pa - 1)
					end = addrs[j] + p.Size
				}
				continue // as libdwfl: first stays as it was
			}
			end = addrs[i] + s.Size
		} else {
			addrs[i] = s.Addr
			if first || end < s.Addr+s.Size {
				end = s.Addr + s.Size
			}
			if first || bias > s.Addr {
				bias = s.Addr
			}
		}
		first = false
	}
	return addrs
}

func alignOf(s *elf.Section) uint64 {
	if s.Addralign == 0 {
		return 1
	}
	return s.Addralign
}

// loadRelocSymbols reads the symbol values relocations add: each
// symbol's section base plus its value.
func (f *File) loadRelocSymbols() {
	st := f.rel
	st.symOnce.Do(func() {
		n := f.SymbolCount()
		st.symAddr = make([]uint64, 1, n+1)
		st.symDef = make([]bool, 1, n+1)
		st.symErr = f.Symbols(func(s Symbol) {
			// s.Value is already the layout address (symbolTable.at).
			def := s.Sect != elf.SHN_UNDEF && s.Sect != elf.SHN_COMMON
			st.symAddr = append(st.symAddr, s.Value)
			st.symDef = append(st.symDef, def)
		})
	})
}

// relocSize is libebl's reloc_simple_type for the machines gprobe reads:
// the width of the value a relocation type writes, 0 for R_*_NONE, -1 for
// types libdwfl does not apply.
func relocSize(m elf.Machine, typ uint32) int {
	switch m {
	case elf.EM_X86_64:
		switch elf.R_X86_64(typ) {
		case elf.R_X86_64_NONE:
			return 0
		case elf.R_X86_64_64:
			return 8
		case elf.R_X86_64_32, elf.R_X86_64_32S:
			return 4
		case elf.R_X86_64_16:
			return 2
		case elf.R_X86_64_8:
			return 1
		}
	case elf.EM_AARCH64:
		switch elf.R_AARCH64(typ) {
		case elf.R_AARCH64_NONE, elf.R_AARCH64_NULL:
			return 0
		case elf.R_AARCH64_ABS64:
			return 8
		case elf.R_AARCH64_ABS32:
			return 4
		case elf.R_AARCH64_ABS16:
			return 2
		}
	}
	return -1
}

// relaTable is one SHT_RELA section, decoded in place from the mapping.
type relaTable struct {
	f      *File
	target string
	data   []byte
	n      int
	sorted bool
}

// relaTable returns the decoded relocation table for a debug section,
// built once.
func (f *File) relaTable(name string) (*relaTable, error) {
	st := f.rel
	st.mu.Lock()
	t, ok := st.tabs[name]
	st.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := f.newRelaTable(name)
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	st.tabs[name] = t
	st.mu.Unlock()
	return t, nil
}

func (f *File) newRelaTable(name string) (*relaTable, error) {
	i, ok := f.rel.tables[name]
	if !ok {
		return nil, nil
	}
	s := f.ELF.Sections[i]
	if s.Type == elf.SHT_REL {
		// Only i386 and 32-bit ARM use REL for debug sections.
		return nil, fmt.Errorf("%s: %w: %s uses SHT_REL relocations", f.Path, ErrRelocation, name)
	}
	if f.ELF.Class != elf.ELFCLASS64 {
		return nil, fmt.Errorf("%s: %w: 32-bit relocatable files are not supported", f.Path, ErrRelocation)
	}
	data := f.Section(s.Name)
	if data == nil || uint64(len(data)) < s.Size {
		return nil, fmt.Errorf("%s: %w: %s is unreadable", f.Path, ErrRelocation, s.Name)
	}
	t := &relaTable{f: f, target: name, data: data, n: len(data) / 24, sorted: true}
	for k := 1; k < t.n; k++ {
		if t.offset(k) < t.offset(k-1) {
			t.sorted = false
			break
		}
	}
	return t, nil
}

func (t *relaTable) offset(k int) uint64 { return t.f.Order.Uint64(t.data[k*24:]) }

// apply patches dst, which holds the target section's bytes at
// [start, start+len(dst)), with every relocation that touches that range
// (a relocation straddling an edge patches the bytes inside).
func (t *relaTable) apply(dst []byte, start uint64, secSize uint64) error {
	f := t.f
	f.loadRelocSymbols()
	if f.rel.symErr != nil {
		return f.rel.symErr
	}
	end := start + uint64(len(dst))
	k := 0
	if t.sorted {
		lo := uint64(0)
		if start >= 8 {
			lo = start - 8
		}
		k = sort.Search(t.n, func(i int) bool { return t.offset(i) >= lo })
	}
	var buf [8]byte
	for ; k < t.n; k++ {
		e := t.data[k*24 : k*24+24]
		off := f.Order.Uint64(e)
		if t.sorted && off >= end {
			break
		}
		info := f.Order.Uint64(e[8:])
		addend := f.Order.Uint64(e[16:])
		typ, sym := uint32(info), info>>32
		size := relocSize(f.Machine, typ)
		if size == 0 {
			continue
		}
		if off+uint64(size) <= start || off >= end {
			continue
		}
		if size < 0 {
			return fmt.Errorf("%s: %w: relocation type %d at %s+%#x", f.Path, ErrRelocation, typ, t.target, off)
		}
		if off > secSize || secSize-off < uint64(size) {
			return fmt.Errorf("%s: %w: relocation at %s+%#x is outside the section", f.Path, ErrRelocation, t.target, off)
		}
		var val uint64
		if sym != 0 {
			if sym >= uint64(len(f.rel.symAddr)) {
				return fmt.Errorf("%s: %w: relocation at %s+%#x names symbol %d of %d", f.Path, ErrRelocation, t.target, off, sym, len(f.rel.symAddr))
			}
			if !f.rel.symDef[sym] {
				// libdwfl looks the name up in other reported modules;
				// with one module there are none (DWFL_E_RELUNDEF).
				return fmt.Errorf("%s: %w: relocation at %s+%#x refers to an undefined symbol", f.Path, ErrRelocation, t.target, off)
			}
			val = f.rel.symAddr[sym]
		}
		val += addend
		switch size {
		case 8:
			f.Order.PutUint64(buf[:], val)
		case 4:
			f.Order.PutUint32(buf[:], uint32(val))
		case 2:
			f.Order.PutUint16(buf[:], uint16(val))
		case 1:
			buf[0] = byte(val)
		}
		// Copy the part of [off, off+size) that lies in [start, end).
		from, to := off, off+uint64(size)
		if from < start {
			from = start
		}
		if to > end {
			to = end
		}
		copy(dst[from-start:to-start], buf[from-off:to-off])
	}
	return nil
}

// relocatedSection returns a private, relocated copy of a debug section
// of a relocatable file, made once; ok is false when the section needs no
// relocation.
func (f *File) relocatedSection(name string) (b []byte, ok bool, err error) {
	if f.rel == nil {
		return nil, false, nil
	}
	if _, has := f.rel.tables[name]; !has {
		return nil, false, nil
	}
	st := f.rel
	st.mu.Lock()
	b, done := st.copies[name]
	err = st.errs[name]
	st.mu.Unlock()
	if done {
		return b, true, err
	}
	// Two goroutines may both relocate the first time; one copy wins.
	b, err = f.relocateWhole(name)
	if err != nil {
		b = nil
	}
	st.mu.Lock()
	if prev, done := st.copies[name]; done {
		b, err = prev, st.errs[name]
	} else {
		st.copies[name], st.errs[name] = b, err
	}
	st.mu.Unlock()
	return b, true, err
}

func (f *File) relocateWhole(name string) ([]byte, error) {
	var b []byte
	if c := f.compressed[name]; c != nil {
		// Read, not through the mapping: the relocated copy is then the
		// only one this process holds.
		b, _ = f.inflation(name, c).read(0, c.size, nil)
	} else if raw := f.rawSection(name); raw != nil {
		b = make([]byte, len(raw))
		copy(b, raw)
	}
	if b == nil {
		return nil, fmt.Errorf("%s: %w: %s is unreadable", f.Path, ErrRelocation, name)
	}
	t, err := f.relaTable(name)
	if err != nil {
		return nil, err
	}
	if err := t.apply(b, 0, uint64(len(b))); err != nil {
		return nil, err
	}
	return b, nil
}

// rawSection is the unrelocated contents of a section: the mapping, or the
// inflated bytes of a compressed section.
func (f *File) rawSection(name string) []byte {
	if c := f.compressed[name]; c != nil {
		b, err := f.inflation(name, c).bytes(0, c.size)
		if err != nil {
			return nil
		}
		return b
	}
	s := f.ELF.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS || s.Offset+s.Size > uint64(len(f.mm)) {
		return nil
	}
	return f.mm[s.Offset : s.Offset+s.Size]
}

// relocateRange patches dst, read from the plain file at [start, end) of
// section name, with the section's relocations (nothing to do when the
// file is not relocatable or the section has none).
func (f *File) relocateRange(name string, dst []byte, start uint64, secSize uint64) error {
	if f.rel == nil {
		return nil
	}
	if _, has := f.rel.tables[name]; !has {
		return nil
	}
	t, err := f.relaTable(name)
	if err != nil {
		return err
	}
	return t.apply(dst, start, secSize)
}
