package dwarfinfo

import (
	"debug/dwarf"
	"fmt"

	"github.com/gprobe/gprobe/lines"
)

// CU is one fully decoded compile unit.
type CU struct {
	Index int
	// Base is the unit's offset in .debug_info.
	Base uint64
	// Lines is the unit as the line walkers see it. Scope offsets in it are
	// absolute .debug_info offsets.
	Lines *lines.Unit
	// Scopes maps absolute DIE offsets to every subprogram, inlined
	// subroutine and lexical block of the unit.
	Scopes map[uint64]*lines.Scope
	// Language is DW_AT_language.
	Language int64
	AddrSize int

	f                      *File
	hdr                    unitHeader
	lowPC                  uint64 // base address of location lists
	addrBase, loclistsBase uint64
	data                   *dwarf.Data // lazily, see unitData
	dataErr                error
	// tab is the unit's abbreviations (read when an entry has references)
	// and hasRefAddr whether any uses DW_FORM_ref_addr.
	tab                 abbrevTable
	tabRead, hasRefAddr bool
	// foreign holds the units DW_FORM_ref_addr references lead to, by
	// offset, shared by all of them.
	foreign map[uint64]*CU
}

// Unit decodes unit idx (an index from [File.FindFuncs]). Units are not
// cached: a kernel-sized unit holds megabytes, and callers walk them once.
func (f *File) Unit(idx int) (*CU, error) {
	units, err := f.unitHeaders()
	if err != nil {
		return nil, err
	}
	if idx < 0 || idx >= len(units) {
		return nil, fmt.Errorf("%s: unit index %d out of range", f.Path, idx)
	}
	return f.decodeScopesSafe(idx, &units[idx])
}

// decodeScopesSafe runs decodeScopes, turning a panic on malformed input
// into an error.
func (f *File) decodeScopesSafe(idx int, u *unitHeader) (cu *CU, err error) {
	defer func() {
		if r := recover(); r != nil {
			cu, err = nil, fmt.Errorf("%s: %w: unit at %#x: %v", f.Path, ErrBadDWARF, u.off, r)
		}
	}()
	return f.decodeScopes(idx, u)
}
