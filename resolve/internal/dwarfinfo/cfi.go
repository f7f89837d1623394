package dwarfinfo

import (
	"fmt"

	"github.com/gprobe/gprobe/internal/dwbuf"
	"github.com/gprobe/gprobe/resolve/dwarfindex"
)

// Call frame information (.eh_frame, .debug_frame) is read in two steps:
// a table of every FDE's address range, built by jumping from entry to
// entry (no instruction is decoded), then, for an address asked about, the
// one FDE that covers it and its CIE (see cfaAt). A kernel's 46,000 FDEs
// would otherwise each be decoded on every run.

// cfiSection is one call frame section.
type cfiSection struct {
	name string
	data []byte
	eh   bool   // .eh_frame format (CIE id 0, relative CIE pointers, pointer encodings)
	addr uint64 // .eh_frame's address, the base of pc-relative pointers
	fdes *dwarfindex.FDEs
}

// find returns the offset of the first FDE (by start, then section order)
// whose range holds addr.
func (s *cfiSection) find(addr uint64) (int, bool) {
	i := s.fdes.Find(addr)
	if i == s.fdes.Len() {
		return 0, false
	}
	begin, end, off := s.fdes.At(i)
	if addr-begin >= end-begin || off > uint64(len(s.data)) {
		return 0, false
	}
	return int(off), true
}

// HasCFI reports whether the image has call frame information
// (.eh_frame or .debug_frame), as libdw's dwarf_getcfi(_elf) would find it:
// a separate debug file's .eh_frame is SHT_NOBITS, which libdw takes for
// none.
func (f *File) HasCFI() bool {
	return f.hasSection(".eh_frame") || f.hasSection(".debug_frame")
}

// CFICovers reports whether some FDE of .eh_frame or .debug_frame covers
// addr: perf needs one to turn DW_OP_call_frame_cfa into a register, and
// gives up on the address otherwise.
func (f *File) CFICovers(addr uint64) (bool, error) {
	f.cfiOnce.Do(func() { f.cfiErr = f.loadCFI() })
	if f.cfiErr != nil {
		return false, f.cfiErr
	}
	for _, s := range f.cfiSecs {
		if _, ok := s.find(addr); ok {
			return true, nil
		}
	}
	return false, nil
}

// CFA returns the canonical frame address rule at addr as register +
// offset, the way libdw's dwarf_frame_cfa presents a def_cfa rule
// (DW_OP_bregx reg off), searching .eh_frame before .debug_frame as perf
// does. ok is false when no FDE covers addr or the rule is not
// register-based (an expression).
func (f *File) CFA(addr uint64) (reg uint64, off int64, ok bool, err error) {
	f.cfiOnce.Do(func() { f.cfiErr = f.loadCFI() })
	if f.cfiErr != nil {
		return 0, 0, false, f.cfiErr
	}
	for _, s := range f.cfiSecs {
		at, found := s.find(addr)
		if !found {
			continue
		}
		e, err := s.entry(at, f)
		if err != nil {
			return 0, 0, false, fmt.Errorf("%s: %w: call frame information at %#x: %v", f.Path, ErrBadDWARF, addr, err)
		}
		rule, err := cfaAt(e, addr, f)
		if err != nil {
			return 0, 0, false, fmt.Errorf("%s: %w: call frame information at %#x: %v", f.Path, ErrBadDWARF, addr, err)
		}
		if rule.expr {
			return 0, 0, false, nil
		}
		return rule.reg, rule.off, true, nil
	}
	return 0, 0, false, nil
}

// loadCFI finds the call frame sections and their FDE tables: from the
// index, or by walking the sections (and then indexing them).
func (f *File) loadCFI() error {
	x := f.indexed()
	for _, name := range []string{".eh_frame", ".debug_frame"} {
		if !f.hasSection(name) {
			continue
		}
		cs := &cfiSection{name: name, data: f.Section(name), eh: name == ".eh_frame"}
		if sec := f.ELF.Section(name); cs.eh && sec != nil {
			cs.addr = sec.Addr
			if cs.addr == 0 {
				cs.addr = 1 // as delve's parser, which gprobe used first, did
			}
		}
		var part **dwarfindex.FDEs
		if x != nil {
			part = &x.DebugFrame
			if cs.eh {
				part = &x.EHFrame
			}
			f.idx.mu.Lock()
			cs.fdes = *part
			f.idx.mu.Unlock()
		}
		if cs.fdes == nil {
			if err := cs.index(f); err != nil {
				return fmt.Errorf("%s: %w: %s: %v", f.Path, ErrBadDWARF, name, err)
			}
			if part != nil {
				f.storeIndex(func(*dwarfindex.Index) { *part = cs.fdes })
			}
		}
		f.cfiSecs = append(f.cfiSecs, cs)
	}
	return nil
}

// cie is a common information entry.
type cie struct {
	version      uint8
	augmentation []byte
	codeAlign    uint64
	dataAlign    int64
	ptrEnc       byte // DW_EH_PE_* of FDE addresses (.eh_frame)
	hasAugData   bool // 'z': FDEs carry augmentation data
	initial      []byte
}

// fdeEntry is a decoded FDE with its CIE.
type fdeEntry struct {
	cie          *cie
	begin, size  uint64
	instructions []byte
}

// header reads an entry's length and CIE id or pointer at off: the
// entry's content ends at end; id is the raw id field, idPos where it is.
func (s *cfiSection) header(r *dwbuf.Cursor, off int) (end, idPos int, id uint64, zero bool, err error) {
	r.Pos = off
	n, dwarf64 := r.InitialLength()
	if r.Err() != nil {
		return 0, 0, 0, false, fmt.Errorf("truncated entry at %#x", off)
	}
	if n == 0 {
		return r.Pos, 0, 0, true, nil
	}
	if n > uint64(len(r.Data)-r.Pos) {
		return 0, 0, 0, false, fmt.Errorf("entry at %#x runs past the section", off)
	}
	end = r.Pos + int(n)
	idPos = r.Pos
	if dwarf64 && !s.eh {
		id = r.U64()
	} else {
		id = uint64(r.U32())
	}
	if r.Err() != nil || r.Pos > end {
		return 0, 0, 0, false, fmt.Errorf("truncated entry at %#x", off)
	}
	return end, idPos, id, false, nil
}

func (s *cfiSection) isCIE(id uint64) bool {
	if s.eh {
		return id == 0
	}
	return id == 0xffffffff || id == ^uint64(0)
}

// ciePos is where the CIE an FDE's id field points to starts.
func (s *cfiSection) ciePos(idPos int, id uint64) int {
	if s.eh {
		return idPos - int(id)
	}
	return int(id)
}

// index lists the section's FDEs with their ranges, sorted by start.
func (s *cfiSection) index(f *File) error {
	r := &dwbuf.Cursor{Data: s.data, Big: f.big()}
	cies := map[int]*cie{}
	var b dwarfindex.FDEBuilder
	b.Grow(len(s.data) / 48) // a typical FDE's size
	for off := 0; off < len(s.data); {
		end, idPos, id, zero, err := s.header(r, off)
		if err != nil {
			return err
		}
		if zero {
			off = end
			continue
		}
		if !s.isCIE(id) {
			pos := s.ciePos(idPos, id)
			c, ok := cies[pos]
			if !ok {
				if c, err = s.parseCIE(pos, f); err != nil {
					return err
				}
				cies[pos] = c
			}
			begin, size, err := s.fdeRange(r, c, end, f)
			if err != nil {
				return fmt.Errorf("FDE at %#x: %v", off, err)
			}
			if size > 0 { // an empty FDE covers nothing
				b.Add(begin, begin+size, uint64(off))
			}
		}
		off = end
	}
	s.fdes = b.Build()
	return nil
}

// fdeRange reads an FDE's initial location and address range (r is just
// past the CIE pointer).
func (s *cfiSection) fdeRange(r *dwbuf.Cursor, c *cie, end int, f *File) (begin, size uint64, err error) {
	r.Data = r.Data[:end]
	defer func() { r.Data = r.Data[:cap(r.Data)] }()
	begin = s.pointer(r, c.ptrEnc, f)
	size = s.pointer(r, c.ptrEnc&0x0f, f)
	if r.Err() != nil {
		return 0, 0, errBadCFI
	}
	return begin, size, nil
}

// entry decodes the FDE at off.
func (s *cfiSection) entry(off int, f *File) (*fdeEntry, error) {
	r := &dwbuf.Cursor{Data: s.data, Big: f.big()}
	end, idPos, id, zero, err := s.header(r, off)
	if err != nil || zero || s.isCIE(id) {
		return nil, fmt.Errorf("no FDE at %#x", off)
	}
	c, err := s.parseCIE(s.ciePos(idPos, id), f)
	if err != nil {
		return nil, err
	}
	e := &fdeEntry{cie: c}
	if e.begin, e.size, err = s.fdeRange(r, c, end, f); err != nil {
		return nil, err
	}
	if c.hasAugData {
		r.Data = r.Data[:end]
		r.Skip(r.Uleb())
		r.Data = r.Data[:cap(r.Data)]
	}
	if r.Err() != nil || r.Pos > end {
		return nil, errBadCFI
	}
	e.instructions = s.data[r.Pos:end]
	return e, nil
}

// parseCIE decodes the CIE at pos.
func (s *cfiSection) parseCIE(pos int, f *File) (*cie, error) {
	if pos < 0 || pos >= len(s.data) {
		return nil, fmt.Errorf("CIE pointer %#x out of range", pos)
	}
	r := &dwbuf.Cursor{Data: s.data, Big: f.big()}
	end, _, id, zero, err := s.header(r, pos)
	if err != nil {
		return nil, err
	}
	if zero || !s.isCIE(id) {
		return nil, fmt.Errorf("no CIE at %#x", pos)
	}
	r.Data = r.Data[:end]
	c := &cie{version: r.U8(), augmentation: r.CString()}
	if !s.eh && c.version >= 4 {
		r.U8() // address_size
		r.U8() // segment_selector_size
	}
	c.codeAlign = r.Uleb()
	c.dataAlign = r.Sleb()
	if c.version == 1 {
		r.U8() // return address register
	} else {
		r.Uleb()
	}
	if s.eh && len(c.augmentation) > 0 && c.augmentation[0] == 'z' {
		c.hasAugData = true
		n := r.Uleb()
		augEnd := r.Pos + int(n)
		if n > uint64(len(r.Data)-r.Pos) {
			return nil, fmt.Errorf("CIE at %#x: truncated augmentation", pos)
		}
		for _, ch := range c.augmentation[1:] {
			switch ch {
			case 'R':
				c.ptrEnc = r.U8()
			case 'L':
				r.U8()
			case 'P':
				enc := r.U8()
				s.pointer(r, enc&^0x80, f)
			}
		}
		r.Pos = augEnd
	} else if s.eh && len(c.augmentation) > 0 {
		return nil, fmt.Errorf("CIE at %#x: unsupported augmentation %q", pos, c.augmentation)
	}
	if r.Err() != nil || r.Pos > end {
		return nil, fmt.Errorf("truncated CIE at %#x", pos)
	}
	c.initial = s.data[r.Pos:end]
	return c, nil
}

// DW_EH_PE pointer encodings.
const (
	pePtr    = 0x00
	peUleb   = 0x01
	peUdata2 = 0x02
	peUdata4 = 0x03
	peUdata8 = 0x04
	peSigned = 0x08
	peSleb   = 0x09
	peSdata2 = 0x0a
	peSdata4 = 0x0b
	peSdata8 = 0x0c
	pePCRel  = 0x10
	peOmit   = 0xff
)

// pointer reads a pointer in encoding enc (always pePtr in
// .debug_frame); pc-relative ones are made absolute.
func (s *cfiSection) pointer(r *dwbuf.Cursor, enc byte, f *File) uint64 {
	if enc == peOmit {
		return 0
	}
	at := s.addr + uint64(r.Pos)
	addrSize := 8
	if f.ELF.Class == 1 { // ELFCLASS32
		addrSize = 4
	}
	var v uint64
	switch enc & 0x0f {
	case pePtr, peSigned:
		v = r.Uint(addrSize)
	case peUleb:
		v = r.Uleb()
	case peUdata2:
		v = r.Uint(2)
	case peSdata2:
		v = uint64(int16(r.Uint(2)))
	case peUdata4:
		v = r.Uint(4)
	case peSdata4:
		v = uint64(int32(r.Uint(4)))
	case peUdata8, peSdata8:
		v = r.Uint(8)
	case peSleb:
		v = uint64(r.Sleb())
	default:
		r.Fail(errBadCFI)
	}
	if enc&0x70 == pePCRel {
		v += at
	}
	return v
}
