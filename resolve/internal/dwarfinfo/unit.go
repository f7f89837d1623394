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

// Unit decodes unit idx (an index from [File.FindFuncs]). Only the last
// unit decoded is kept: a kernel-sized unit holds megabytes, and callers
// walk units once, except that a search that found nothing asks the same
// unit again (perf's alternative search: the point at the symbol's
// address, then the search at that point), which then costs nothing. The
// kept unit is dropped before another is decoded, so no more than one
// is held for that.
func (f *File) Unit(idx int) (*CU, error) {
	units, err := f.unitHeaders()
	if err != nil {
		return nil, err
	}
	if idx < 0 || idx >= len(units) {
		return nil, fmt.Errorf("%s: unit index %d out of range", f.Path, idx)
	}
	f.lastMu.Lock()
	defer f.lastMu.Unlock()
	if f.last != nil && f.last.Index == idx {
		return f.last, nil
	}
	f.last = nil
	cu, err := f.decodeScopesSafe(idx, &units[idx])
	if err == nil {
		f.last = cu
	}
	return cu, err
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
