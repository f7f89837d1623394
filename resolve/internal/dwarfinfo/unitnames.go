package dwarfinfo

import (
	"sort"

	"github.com/gprobe/gprobe/internal/dwbuf"
)

// UnitsNamed returns the indexes (for [File.Unit]) of the units whose
// DW_AT_name is name, reading only each unit's root DIE. Go's linker
// names a unit after its package and puts every type of the program in a
// unit named "runtime"; this finds such a unit without decoding the
// others.
func (f *File) UnitsNamed(name string) (out []int, err error) {
	units, err := f.unitHeaders()
	if err != nil {
		return nil, err
	}
	s := f.newScanner()
	for i := range units {
		ua, ok, err := s.unitDIE(&units[i])
		if err != nil {
			return nil, err
		}
		if ok && ua.name == name {
			out = append(out, i)
		}
	}
	return out, nil
}

// UnitCovering returns the unit whose code holds addr, or -1: by
// .debug_aranges as UnitForAddr (libdw's dwarf_addrdie), and when the
// image has no .debug_aranges (Go's linker writes none, nor does clang by
// default) by the units' own DW_AT_low_pc/high_pc or DW_AT_ranges, read
// once per File.
func (f *File) UnitCovering(addr uint64) (int, error) {
	if f.hasSection(".debug_aranges") {
		return f.UnitForAddr(addr)
	}
	f.unitRangesOnce.Do(func() { f.unitRanges, f.unitRangesErr = f.readUnitRanges() })
	if f.unitRangesErr != nil {
		return -1, f.unitRangesErr
	}
	rs := f.unitRanges
	i := sort.Search(len(rs), func(i int) bool { return rs[i].hi > addr })
	for ; i < len(rs) && rs[i].lo <= addr; i++ {
		if addr < rs[i].hi {
			return rs[i].unit, nil
		}
	}
	return -1, nil
}

// unitRange is one address range of a unit.
type unitRange struct {
	lo, hi uint64
	unit   int
}

// readUnitRanges reads every unit's root DIE's address ranges, sorted by
// end address (ranges of distinct units do not overlap).
func (f *File) readUnitRanges() ([]unitRange, error) {
	units, err := f.unitHeaders()
	if err != nil {
		return nil, err
	}
	s := f.newScanner()
	var out []unitRange
	for i := range units {
		ua, ok, err := s.unitDIE(&units[i])
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		d := scopeDecoder{s: s, ua: &ua}
		ua.lowPC = d.addr(ua.lowForm, ua.lowVal)
		switch {
		case ua.hasRanges:
			rs, err := d.ranges(ua.rangesForm, ua.ranges)
			if err != nil {
				return nil, err
			}
			for _, r := range rs {
				if r[1] > r[0] {
					out = append(out, unitRange{r[0], r[1], i})
				}
			}
		case ua.highForm != 0 && ua.lowForm != 0:
			hi := ua.highVal
			if isAddrx(ua.highForm) || ua.highForm == dwbuf.FormAddr {
				hi = d.addr(ua.highForm, hi)
			} else {
				hi += ua.lowPC // a DWARF 4+ length
			}
			if hi > ua.lowPC {
				out = append(out, unitRange{ua.lowPC, hi, i})
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].hi < out[b].hi })
	return out, nil
}
