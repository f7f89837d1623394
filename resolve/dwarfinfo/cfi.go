package dwarfinfo

import (
	"debug/elf"
	"fmt"
	"sort"

	"github.com/go-delve/delve/pkg/dwarf/frame"
)

// cfiRanges are the [begin, end) address ranges covered by call frame
// information, sorted.
type cfiRanges [][2]uint64

func (c cfiRanges) covers(addr uint64) bool {
	i := sort.Search(len(c), func(i int) bool { return c[i][1] > addr })
	return i < len(c) && c[i][0] <= addr
}

// HasCFI reports whether the image has call frame information
// (.eh_frame or .debug_frame), as libdw's dwarf_getcfi(_elf) would find it:
// a separate debug file's .eh_frame is SHT_NOBITS, which libdw takes for
// none.
func (f *File) HasCFI() bool {
	return f.cfiSection(".eh_frame") != nil || f.cfiSection(".debug_frame") != nil
}

// cfiSection is the named section when it has contents in the file.
func (f *File) cfiSection(name string) *elf.Section {
	if s := f.ELF.Section(name); s != nil && s.Type != elf.SHT_NOBITS {
		return s
	}
	return nil
}

// CFICovers reports whether some FDE of .eh_frame or .debug_frame covers
// addr: perf needs one to turn DW_OP_call_frame_cfa into a register, and
// gives up on the address otherwise.
func (f *File) CFICovers(addr uint64) (bool, error) {
	f.cfiOnce.Do(func() { f.cfi, f.cfiErr = f.loadCFI() })
	if f.cfiErr != nil {
		return false, f.cfiErr
	}
	return f.cfi.covers(addr), nil
}

// CFA returns the canonical frame address rule at addr as register +
// offset, the way libdw's dwarf_frame_cfa presents a def_cfa rule
// (DW_OP_bregx reg off), searching .eh_frame before .debug_frame as perf
// does. ok is false when no FDE covers addr or the rule is not
// register-based (an expression).
func (f *File) CFA(addr uint64) (reg uint64, off int64, ok bool, err error) {
	f.cfiOnce.Do(func() { f.cfi, f.cfiErr = f.loadCFI() })
	if f.cfiErr != nil {
		return 0, 0, false, f.cfiErr
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: %w: call frame information at %#x: %v", f.Path, ErrBadDWARF, addr, p)
		}
	}()
	for _, fdes := range f.fdes {
		fde, e := fdes.FDEForPC(addr)
		if e != nil {
			continue
		}
		ptr := 8
		if f.ELF.Class == 1 {
			ptr = 4
		}
		rule, e := cfaAt(fde, addr, f.Order, ptr)
		if e != nil {
			return 0, 0, false, fmt.Errorf("%s: %w: call frame information at %#x: %v", f.Path, ErrBadDWARF, addr, e)
		}
		if rule.expr {
			return 0, 0, false, nil
		}
		return rule.reg, rule.off, true, nil
	}
	return 0, 0, false, nil
}

func (f *File) loadCFI() (r cfiRanges, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("%s: %w: call frame information: %v", f.Path, ErrBadDWARF, p)
		}
	}()
	ptr := 8
	if f.ELF.Class == 1 { // ELFCLASS32
		ptr = 4
	}
	for _, name := range []string{".eh_frame", ".debug_frame"} {
		s := f.cfiSection(name)
		if s == nil {
			continue
		}
		var ehAddr uint64
		if name == ".eh_frame" {
			ehAddr = s.Addr
			if ehAddr == 0 {
				ehAddr = 1 // frame.Parse treats 0 as .debug_frame format
			}
		}
		fdes, err := frame.Parse(f.Section(name), f.Order, 0, ptr, ehAddr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %s: %v", f.Path, ErrBadDWARF, name, err)
		}
		// FDEForPC needs them sorted (notes P10).
		f.fdes = append(f.fdes, frame.FrameDescriptionEntries{}.Append(fdes))
		for _, fde := range fdes {
			if fde.End() > fde.Begin() {
				r = append(r, [2]uint64{fde.Begin(), fde.End()})
			}
		}
	}
	sort.Slice(r, func(i, j int) bool { return r[i][0] < r[j][0] })
	return r, nil
}
