package dwarfinfo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/gprobe/gprobe/internal/dwbuf"
	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/dwarfindex"
)

// UnitsWithFile returns, in order, the units whose line table names a file
// whose path ends with tail (perf's cu_find_realpath filter).
func (f *File) UnitsWithFile(tail string) ([]int, error) {
	units, err := f.unitHeaders()
	if err != nil {
		return nil, err
	}
	if t := f.fileIndex(units); t != nil {
		if out, ok := unitsWithFileIndexed(t, len(units), tail); ok {
			return out, nil
		}
	}
	var out []int
	err = scanUnits(f, units, func(s *scanner, _ int, u *unitHeader) ([]string, error) {
		return s.unitFiles(u)
	}, func(i int, files []string) (bool, error) {
		for _, name := range files {
			if lines.TailCmp(name, tail) {
				out = append(out, i)
				break
			}
		}
		return false, nil
	})
	return out, err
}

// unitsWithFileIndexed is UnitsWithFile through the file index; ok is false
// when the index does not fit the image.
func unitsWithFileIndexed(t *dwarfindex.Names, nunits int, tail string) ([]int, bool) {
	var refs []dwarfindex.Ref
	for i := 0; i < t.Len(); i++ {
		if !lines.TailCmp(string(t.Name(i)), tail) {
			continue
		}
		var err error
		if refs, err = t.Refs(i, refs); err != nil {
			return nil, false
		}
	}
	out := make([]int, 0, len(refs))
	for _, r := range refs {
		if int(r.Unit) >= nunits {
			return nil, false
		}
		out = append(out, int(r.Unit))
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

// unitFiles returns the file names of a unit's line table, nil for a unit
// without one.
func (s *scanner) unitFiles(u *unitHeader) ([]string, error) {
	if u.unitType != utCompile && u.unitType != utPartial {
		return nil, nil
	}
	ua, ok, err := s.unitDIE(u)
	if err != nil || !ok || !ua.hasStmt {
		return nil, err
	}
	f := s.f
	secs := lines.Sections{Line: f.Section(".debug_line"), Str: s.str, LineStr: s.lineStr, Order: f.Order}
	files, err := lines.ReadFiles(secs, ua.stmtList, ua.compDir, int(u.AddrSize))
	if err != nil {
		return nil, fmt.Errorf("%s: unit %s: %w", f.Path, ua.name, err)
	}
	return files, nil
}

// unitDIE reads just the attributes of a unit's DIE.
func (s *scanner) unitDIE(u *unitHeader) (unitAttrs, bool, error) {
	var ua unitAttrs
	s.u, s.strOffBase = u, 0
	if err := s.tab.parse(s.f.Section(".debug_abbrev"), u.abbrevOff, u); err != nil {
		return ua, false, fmt.Errorf("%s: unit at %#x: %w", s.f.Path, u.off, err)
	}
	end := u.end
	if end-u.off > 4096 {
		end = u.off + 4096 // a unit DIE is small; read a page of it
	}
	var err error
	if s.info, err = s.f.readSection(".debug_info", u.off, end, s.info); err != nil {
		return ua, false, err
	}
	r := dwbuf.Cursor{Data: s.info, Pos: int(u.dieOff - u.off), Big: s.big}
	a := s.tab.get(r.Uleb())
	if a == nil {
		return ua, false, nil
	}
	ua, _, _ = s.unitAttributes(&r, a)
	if r.Err() != nil {
		return ua, false, s.bad(r.Pos, "truncated unit DIE")
	}
	return ua, true, nil
}

// UnitForAddr returns the unit whose .debug_aranges entry covers addr
// (libdw's dwarf_addrdie), or -1.
func (f *File) UnitForAddr(addr uint64) (int, error) {
	units, err := f.unitHeaders()
	if err != nil {
		return -1, err
	}
	sec := f.Section(".debug_aranges")
	big := f.Order == binary.BigEndian
	r := dwbuf.Cursor{Data: sec, Big: big}
	for r.Pos < len(sec) && r.Err() == nil {
		start := r.Pos
		n, dwarf64 := r.InitialLength()
		next := r.Pos + int(n)
		if errors.Is(r.Err(), dwbuf.ErrReservedLength) || n > uint64(len(sec)) || next > len(sec) || next < r.Pos {
			return -1, fmt.Errorf("%s: %w: bad .debug_aranges set at %#x", f.Path, ErrBadDWARF, start)
		}
		r.U16() // version
		cuOff := r.Offset(dwarf64)
		addrSize := int(r.U8())
		r.U8() // segment selector size
		if addrSize != 4 && addrSize != 8 {
			return -1, fmt.Errorf("%s: %w: bad address size in .debug_aranges", f.Path, ErrBadDWARF)
		}
		// Tuples start at a multiple of twice the address size.
		if rem := (r.Pos - start) % (2 * addrSize); rem != 0 {
			r.Pos += 2*addrSize - rem
		}
		for r.Pos+2*addrSize <= next {
			lo, ln := r.Uint(addrSize), r.Uint(addrSize)
			if lo == 0 && ln == 0 {
				break
			}
			if addr >= lo && addr < lo+ln {
				i := sort.Search(len(units), func(i int) bool { return units[i].off >= cuOff })
				if i < len(units) && units[i].off == cuOff {
					return i, nil
				}
				return -1, nil
			}
		}
		r.Pos = next
	}
	return -1, nil
}
