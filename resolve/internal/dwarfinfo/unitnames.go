package dwarfinfo

import (
	"fmt"

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
	for i := range units {
		got, err := f.unitName(&units[i])
		if err != nil {
			return nil, err
		}
		if got == name {
			out = append(out, i)
		}
	}
	return out, nil
}

// unitName reads the DW_AT_name of u's root DIE.
func (f *File) unitName(u *unitHeader) (name string, err error) {
	defer func() {
		if r := recover(); r != nil {
			name, err = "", fmt.Errorf("%s: %w: unit at %#x: %v", f.Path, ErrBadDWARF, u.off, r)
		}
	}()
	s := f.newScanner()
	s.u = u
	if err := s.tab.parse(f.Section(".debug_abbrev"), u.abbrevOff, u); err != nil {
		return "", fmt.Errorf("%s: unit at %#x: %w", f.Path, u.off, err)
	}
	// The root DIE is at the unit's start: read a little, then all of it
	// if the DIE runs past that.
	for _, end := range []uint64{min(u.end, u.dieOff+512), u.end} {
		if s.info, err = f.readSection(".debug_info", u.off, end, s.info); err != nil {
			return "", err
		}
		r := dwbuf.Cursor{Data: s.info, Pos: int(u.dieOff - u.off), Big: s.big}
		a := s.tab.get(r.Uleb())
		if a == nil {
			return "", s.bad(r.Pos, "missing unit DIE")
		}
		ua, _, _ := s.unitAttributes(&r, a)
		if r.Err() == nil {
			return ua.name, nil
		}
	}
	return "", s.bad(int(u.dieOff-u.off), "truncated unit DIE")
}
