package dwarfinfo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/gprobe/gprobe/internal/dwbuf"
	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/dwarfindex"
)

// unitHeader is a .debug_info unit header.
type unitHeader struct {
	off       uint64 // start of the unit (its length field)
	end       uint64 // one past the last byte
	dieOff    uint64 // first DIE
	unitType  uint8
	abbrevOff uint64
	dwbuf.Format
}

// DWARF 5 unit types.
const (
	utCompile      = 0x01
	utType         = 0x02
	utPartial      = 0x03
	utSkeleton     = 0x04
	utSplitCompile = 0x05
	utSplitType    = 0x06
)

// unitHeaders parses every unit header of .debug_info (cheap: one jump
// per unit), or takes them from the index.
func (f *File) unitHeaders() ([]unitHeader, error) {
	f.unitsOnce.Do(func() {
		size := f.sectionSize(".debug_info")
		if size == 0 {
			f.unitsErr = fmt.Errorf("%s: %w", f.Path, ErrNoDWARF)
			return
		}
		if x := f.indexed(); x != nil && x.Units != nil {
			if f.units = unitsFromIndex(x.Units, size); f.units != nil {
				return
			}
		}
		f.units, f.unitsErr = f.readUnitHeaders(size)
		if f.unitsErr == nil && f.cache != nil {
			f.storeIndex(func(x *dwarfindex.Index) { x.Units = unitsToIndex(f.units) })
		}
	})
	return f.units, f.unitsErr
}

func (f *File) readUnitHeaders(size uint64) ([]unitHeader, error) {
	big := f.Order == binary.BigEndian
	var units []unitHeader
	// Headers are read with pread: touching one byte of each unit
	// through the mapping would fault in 64 KiB around it.
	var hdr []byte
	var off uint64
	for off < size {
		end := off + 48
		if end > size {
			end = size
		}
		var err error
		if hdr, err = f.readSection(".debug_info", off, end, hdr); err != nil {
			return nil, err
		}
		r := dwbuf.Cursor{Data: hdr, Big: big}
		h := unitHeader{off: off}
		var n uint64
		n, h.Dwarf64 = r.InitialLength()
		if errors.Is(r.Err(), dwbuf.ErrReservedLength) {
			return nil, fmt.Errorf("%s: %w: reserved unit length at %#x", f.Path, ErrBadDWARF, off)
		}
		h.end = off + uint64(r.Pos) + n
		if h.end > size || h.end < off+uint64(r.Pos) {
			return nil, fmt.Errorf("%s: %w: unit at %#x runs past .debug_info", f.Path, ErrBadDWARF, off)
		}
		h.Version = r.U16()
		switch {
		case h.Version >= 2 && h.Version <= 4:
			h.abbrevOff = r.Offset(h.Dwarf64)
			h.AddrSize = r.U8()
			h.unitType = utCompile
		case h.Version == 5:
			h.unitType = r.U8()
			h.AddrSize = r.U8()
			h.abbrevOff = r.Offset(h.Dwarf64)
			switch h.unitType {
			case utSkeleton, utSplitCompile:
				r.Skip(8)
			case utType, utSplitType:
				r.Skip(8)
				r.Skip(uint64(h.OffsetSize()))
			}
		default:
			return nil, fmt.Errorf("%s: %w: unsupported DWARF version %d at %#x", f.Path, ErrBadDWARF, h.Version, off)
		}
		if r.Err() != nil || (h.AddrSize != 4 && h.AddrSize != 8) {
			return nil, fmt.Errorf("%s: %w: bad unit header at %#x", f.Path, ErrBadDWARF, off)
		}
		h.dieOff = off + uint64(r.Pos)
		if h.dieOff > h.end {
			return nil, fmt.Errorf("%s: %w: bad unit header at %#x", f.Path, ErrBadDWARF, off)
		}
		units = append(units, h)
		off = h.end
	}
	return units, nil
}

func unitsToIndex(units []unitHeader) []dwarfindex.Unit {
	out := make([]dwarfindex.Unit, len(units))
	for i, u := range units {
		out[i] = dwarfindex.Unit{Off: u.off, End: u.end, DIEOff: u.dieOff, AbbrevOff: u.abbrevOff,
			Version: u.Version, Type: u.unitType, AddrSize: uint8(u.AddrSize), Dwarf64: u.Dwarf64}
	}
	return out
}

// unitsFromIndex converts the index's unit headers, or returns nil when
// they do not fit a .debug_info of size bytes.
func unitsFromIndex(units []dwarfindex.Unit, size uint64) []unitHeader {
	out := make([]unitHeader, len(units))
	for i, u := range units {
		if u.End > size || u.AddrSize != 4 && u.AddrSize != 8 {
			return nil
		}
		out[i] = unitHeader{off: u.Off, end: u.End, dieOff: u.DIEOff, unitType: u.Type, abbrevOff: u.AbbrevOff}
		out[i].Version, out[i].AddrSize, out[i].Dwarf64 = u.Version, u.AddrSize, u.Dwarf64
	}
	return out
}

// FuncRef identifies a subprogram DIE found by [File.FindFuncs].
type FuncRef struct {
	Unit   int    // index of the unit in .debug_info order
	Offset uint64 // DIE offset in .debug_info
}

// NameMatcher reports whether a function name matches.
type NameMatcher func(name []byte) bool

// ExactName matches one name.
func ExactName(name string) NameMatcher {
	b := []byte(name)
	return func(n []byte) bool { return bytes.Equal(n, b) }
}

// FindFuncs walks the compile units in order and returns, per unit, every
// top-level subprogram definition (perf's die_is_func_def: not a
// declaration, and inline or with code) whose name or linkage name,
// integrated through DW_AT_abstract_origin / DW_AT_specification, matches.
// With firstUnitOnly it stops after the first unit that has a match, as
// perf's -L search does. Results are in unit order, then DIE order.
//
// GNU C nested function definitions (subprograms inside subprograms) are
// not searched; the kernel has none.
func (f *File) FindFuncs(match NameMatcher, firstUnitOnly bool) ([]FuncRef, error) {
	var out []FuncRef
	err := f.EachFuncs(match, func(refs []FuncRef) (bool, error) {
		out = append(out, refs...)
		return firstUnitOnly, nil
	})
	return out, err
}

// EachFuncs is the streaming form of FindFuncs: fn receives the matches of
// each unit that has some, in unit order, while later units are still being
// scanned in the background (or, with an index, straight from it). fn
// returning stop (or an error) ends the walk early; the error is returned.
func (f *File) EachFuncs(match NameMatcher, fn func(refs []FuncRef) (stop bool, err error)) error {
	units, err := f.unitHeaders()
	if err != nil {
		return err
	}
	if t := f.storedFuncIndex(); t != nil {
		if ok, err := f.eachIndexed(t, units, match, fn); ok {
			return err
		}
	}
	if f.indexed() != nil {
		return f.eachIndexing(units, match, fn)
	}
	return scanUnits(f, units, func(s *scanner, i int, u *unitHeader) ([]FuncRef, error) {
		return s.scanUnit(i, u, match)
	}, func(_ int, refs []FuncRef) (bool, error) {
		if len(refs) == 0 {
			return false, nil
		}
		return fn(refs)
	})
}

// scanUnits runs work on every unit, on up to 8 goroutines, and hands the
// results to consume in unit order while later units are still being
// worked on. Workers stay at most a window of units ahead of consume, so a
// walk that stops early has not read (from disk, when the cache is cold)
// much more than it used. consume returning stop, or an error from either,
// ends the walk; the error is returned.
func scanUnits[T any](f *File, units []unitHeader, work func(s *scanner, i int, u *unitHeader) (T, error), consume func(i int, v T) (stop bool, err error)) error {
	workers := runtime.GOMAXPROCS(0)
	if workers > 8 {
		workers = 8
	}
	if len(units) < 64 {
		workers = 1
	}
	var (
		results  = make([]T, len(units))
		errs     = make([]error, len(units))
		done     = make([]bool, len(units))
		mu       sync.Mutex
		cond     = sync.NewCond(&mu)
		next     atomic.Int64
		cancel   atomic.Bool
		wg       sync.WaitGroup
		consumed int // the next unit consume will see
		zero     T
	)
	const batch, window = 16, 64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := f.newScanner()
			for !cancel.Load() {
				start := int(next.Add(batch)) - batch
				if start >= len(units) {
					return
				}
				mu.Lock()
				for start > consumed+window && !cancel.Load() {
					cond.Wait()
				}
				mu.Unlock()
				for i := start; i < start+batch && i < len(units); i++ {
					var v T
					var err error
					if !cancel.Load() {
						v, err = work(s, i, &units[i])
					}
					mu.Lock()
					results[i], errs[i], done[i] = v, err, true
					cond.Broadcast()
					mu.Unlock()
				}
			}
		}()
	}
	defer func() {
		cancel.Store(true)
		mu.Lock()
		cond.Broadcast()
		mu.Unlock()
		wg.Wait()
	}()
	for i := range units {
		mu.Lock()
		for !done[i] {
			cond.Wait()
		}
		v, err := results[i], errs[i]
		results[i] = zero
		consumed = i + 1
		cond.Broadcast()
		mu.Unlock()
		if err != nil {
			return err
		}
		if stop, err := consume(i, v); err != nil || stop {
			return err
		}
	}
	return nil
}

func (f *File) newScanner() *scanner {
	return &scanner{f: f, big: f.Order == binary.BigEndian,
		str: f.Section(".debug_str"), lineStr: f.Section(".debug_line_str"), strOffs: f.Section(".debug_str_offsets")}
}

// scanner decodes just enough of each DIE to find subprogram definitions.
type scanner struct {
	f                     *File
	info                  []byte // the current unit, from its first byte
	str, lineStr, strOffs []byte
	big                   bool

	u          *unitHeader
	tab        abbrevTable
	strOffBase uint64

	// foreign holds, by unit offset, scanners of the other units that
	// DW_FORM_ref_addr references lead to (GCC's -flto puts the code in
	// an <artificial> unit whose DIEs take names and declarations from the
	// units of the early debug information); nil for a unit that failed.
	foreign map[uint64]*scanner
	// unit holds the unit DIE's attributes of a foreign unit, for its
	// declaration files.
	unit  unitAttrs
	files []string // a foreign unit's file names, read on first use
}

// dieAttrs are the attributes the scanner keeps for one DIE.
type dieAttrs struct {
	nameForm, linkForm uint32
	name, link         uint64 // form-specific value (string offset, index or position)
	origin, spec       uint64 // absolute .debug_info offsets, 0 if absent
	sibling            uint64 // position in the unit buffer, 0 if absent
	declFile, declLine uint64
	hasDeclFile        bool
	declaration        bool
	inline             bool
	code               bool // low_pc, entry_pc or ranges
}

func (s *scanner) scanUnit(idx int, u *unitHeader, match NameMatcher) ([]FuncRef, error) {
	var out []FuncRef
	err := s.eachDef(u, func(d *dieAttrs, dieOff int) {
		if s.matches(d, match, 0) {
			out = append(out, FuncRef{Unit: idx, Offset: u.off + uint64(dieOff)})
		}
	})
	return out, err
}

// unitNames are the names under which a unit's subprogram definitions are
// found: names[refs[i].start:refs[i].end] finds the DIE at refs[i].off.
type unitNames struct {
	names []byte
	refs  []struct {
		start, end int
		off        uint64
	}
}

// unitNames lists, for the function index, every name matches would test
// for each definition of the unit (so that looking a name up in the
// index finds exactly the DIEs the walk matches).
func (s *scanner) unitNames(idx int, u *unitHeader) (unitNames, error) {
	var un unitNames
	err := s.eachDef(u, func(d *dieAttrs, dieOff int) {
		s.matches(d, func(name []byte) bool {
			start := len(un.names)
			un.names = append(un.names, name...)
			un.refs = append(un.refs, struct {
				start, end int
				off        uint64
			}{start, len(un.names), u.off + uint64(dieOff)})
			return false
		}, 0)
	})
	return un, err
}

// matching is what scanUnit finds in unit idx for match, from the unit's
// names: each definition one of whose names matches, once, in DIE order.
func (un unitNames) matching(idx int, match NameMatcher) []FuncRef {
	var out []FuncRef
	for _, n := range un.refs {
		if len(out) > 0 && out[len(out)-1].Offset == n.off {
			continue // matched under an earlier name
		}
		if match(un.names[n.start:n.end]) {
			out = append(out, FuncRef{Unit: idx, Offset: n.off})
		}
	}
	return out
}

// eachDef calls fn for every subprogram definition of the unit (perf's
// die_is_func_def: not a declaration, and inline or with code), with the
// DIE's position in the unit, in DIE order as libdw's dwarf_getfuncs finds
// them: the unit's own children in a C unit; in any other (C++, Rust),
// also those inside namespaces, classes, structures and modules, where
// Rust puts all its functions (see nestsFunctions).
func (s *scanner) eachDef(u *unitHeader, fn func(d *dieAttrs, dieOff int)) error {
	if u.unitType != utCompile && u.unitType != utPartial {
		return nil
	}
	r, cu, err := s.enter(u)
	if err != nil || cu == nil {
		return err
	}
	if !cu.children {
		return nil
	}
	return s.defsIn(&r, u, !isCLanguage(s.unit.language), fn)
}

// isCLanguage is libdw's test for a pure C unit (dwarf_getfuncs), whose
// functions are all children of the unit.
func isCLanguage(lang int64) bool {
	switch lang {
	case langC89, langC, langC99, langC11:
		return true
	}
	return false
}

// nestsFunctions reports the DIEs without code that libdw's
// __libdw_visit_scopes descends into for their functions, in a unit that
// is not C's. (It descends into subprograms and lexical blocks too, for
// functions defined inside functions; no compiler gprobe is tested with
// puts a definition there, and those bodies are most of the DIEs.)
func nestsFunctions(tag uint32) bool {
	switch tag {
	case tagNamespace, tagClassType, tagStructureType, tagModule:
		return true
	}
	return false
}

// defsIn is eachDef over one list of sibling DIEs, up to its terminating
// null entry or the unit's end; nested descends into nestsFunctions DIEs.
func (s *scanner) defsIn(r *dwbuf.Cursor, u *unitHeader, nested bool, fn func(d *dieAttrs, dieOff int)) error {
	for {
		dieOff := uint64(r.Pos)
		code := r.Uleb()
		if r.Err() != nil {
			return s.bad(r.Pos, "truncated DIE")
		}
		if code == 0 {
			return nil
		}
		a := s.tab.get(code)
		if a == nil {
			return s.bad(int(dieOff), "unknown abbrev code %d", code)
		}
		if nested && a.children && nestsFunctions(a.tag) {
			var d dieAttrs
			s.readAttrs(r, a, &d)
			if r.Err() != nil {
				return s.bad(int(dieOff), "truncated DIE")
			}
			if err := s.defsIn(r, u, nested, fn); err != nil {
				return err
			}
		} else if a.tag != tagSubprogram {
			if err := s.skipDIE(r, a); err != nil {
				return err
			}
		} else {
			var d dieAttrs
			s.readAttrs(r, a, &d)
			if r.Err() != nil {
				return s.bad(int(dieOff), "truncated subprogram DIE")
			}
			if !d.declaration && (d.inline || d.code) {
				fn(&d, int(dieOff))
			}
			if a.children {
				if err := s.skipChildren(r, &d); err != nil {
					return err
				}
			}
		}
		if uint64(r.Pos) >= u.end {
			return nil
		}
	}
}

// enter reads unit u's abbreviations, bytes and unit DIE, and returns a
// cursor after the unit DIE with its abbreviation (nil for an empty unit).
func (s *scanner) enter(u *unitHeader) (dwbuf.Cursor, *abbrev, error) {
	s.u, s.strOffBase = u, 0
	if err := s.tab.parse(s.f.Section(".debug_abbrev"), u.abbrevOff, u); err != nil {
		return dwbuf.Cursor{}, nil, fmt.Errorf("%s: unit at %#x: %w", s.f.Path, u.off, err)
	}
	var err error
	if s.info, err = s.f.readSection(".debug_info", u.off, u.end, s.info); err != nil {
		return dwbuf.Cursor{}, nil, err
	}
	r := dwbuf.Cursor{Data: s.info, Pos: int(u.dieOff - u.off), Big: s.big}
	code := r.Uleb()
	if code == 0 {
		return r, nil, nil
	}
	cu := s.tab.get(code)
	if cu == nil {
		return r, nil, s.bad(r.Pos, "unknown abbrev code %d", code)
	}
	// The unit DIE gives DW_AT_str_offsets_base (and, for a foreign
	// unit, its line table).
	s.unit, _, _ = s.unitAttributes(&r, cu)
	if r.Err() != nil {
		return r, nil, s.bad(r.Pos, "truncated unit DIE")
	}
	return r, cu, nil
}

// at returns the scanner of the unit holding the DIE at absolute offset
// off (s itself, or a foreign unit's) and a cursor on the DIE, or false
// when no unit holds it.
func (s *scanner) at(off uint64) (*scanner, dwbuf.Cursor, bool) {
	o := s
	if off < s.u.dieOff || off >= s.u.end {
		units, err := s.f.unitHeaders()
		if err != nil {
			return nil, dwbuf.Cursor{}, false
		}
		i := sort.Search(len(units), func(i int) bool { return units[i].end > off })
		if i == len(units) || off < units[i].dieOff {
			return nil, dwbuf.Cursor{}, false
		}
		if s.foreign == nil {
			s.foreign = map[uint64]*scanner{}
		}
		var ok bool
		if o, ok = s.foreign[units[i].off]; !ok {
			o = s.f.newScanner()
			o.foreign = s.foreign
			if _, cu, err := o.enter(&units[i]); err != nil || cu == nil {
				o = nil
			}
			s.foreign[units[i].off] = o
		}
		if o == nil {
			return nil, dwbuf.Cursor{}, false
		}
	}
	return o, dwbuf.Cursor{Data: o.info, Pos: int(off - o.u.off), Big: o.big}, true
}

// declFileName is the name of entry i of the unit's line-table files (a
// foreign unit's: its declaration files), or "".
func (s *scanner) declFileName(i uint64) string {
	if s.files == nil && s.unit.hasStmt {
		secs := lines.Sections{Line: s.f.Section(".debug_line"), Str: s.f.Section(".debug_str"),
			LineStr: s.f.Section(".debug_line_str"), Order: s.f.Order}
		s.files, _ = lines.ReadFiles(secs, s.unit.stmtList, s.unit.compDir, int(s.u.AddrSize))
	}
	if i >= uint64(len(s.files)) {
		return ""
	}
	return s.files[i]
}

func (s *scanner) bad(pos int, format string, args ...any) error {
	return fmt.Errorf("%s: %w: unit at %#x, offset %#x: %s", s.f.Path, ErrBadDWARF, s.u.off, s.u.off+uint64(pos), fmt.Sprintf(format, args...))
}

// skipDIE moves past a DIE and all its children.
func (s *scanner) skipDIE(r *dwbuf.Cursor, a *abbrev) error {
	var d dieAttrs
	if a.fixed >= 0 && !a.hasSibling {
		r.Skip(uint64(a.fixed))
	} else {
		s.readAttrs(r, a, &d)
	}
	if r.Err() != nil {
		return s.bad(r.Pos, "truncated DIE")
	}
	if a.children {
		return s.skipChildren(r, &d)
	}
	return nil
}

// skipChildren moves past the children of a DIE whose attributes were just
// read: through DW_AT_sibling when present, else by walking them.
func (s *scanner) skipChildren(r *dwbuf.Cursor, d *dieAttrs) error {
	if d.sibling > uint64(r.Pos) && d.sibling <= uint64(len(r.Data)) {
		r.Pos = int(d.sibling)
		return nil
	}
	for depth := 1; depth > 0; {
		code := r.Uleb()
		if r.Err() != nil {
			return s.bad(r.Pos, "truncated DIE tree")
		}
		if code == 0 {
			depth--
			continue
		}
		a := s.tab.get(code)
		if a == nil {
			return s.bad(r.Pos, "unknown abbrev code %d", code)
		}
		var cd dieAttrs
		if a.fixed >= 0 && !a.hasSibling {
			r.Skip(uint64(a.fixed))
		} else {
			s.readAttrs(r, a, &cd)
		}
		if a.children {
			if cd.sibling > uint64(r.Pos) && cd.sibling <= uint64(len(r.Data)) {
				r.Pos = int(cd.sibling)
			} else {
				depth++
			}
		}
	}
	return nil
}

func (s *scanner) readAttrs(r *dwbuf.Cursor, a *abbrev, d *dieAttrs) {
	for _, sp := range a.attrs {
		form, v := s.attrValue(r, sp)
		switch sp.attr {
		case atName:
			d.nameForm, d.name = form, v
		case atLinkageName, atMIPSLinkage:
			d.linkForm, d.link = form, v
		case atAbstractOrigin:
			d.origin = s.ref(form, v)
		case atSpecification:
			d.spec = s.ref(form, v)
		case atSibling:
			if o := s.ref(form, v); o > s.u.off {
				d.sibling = o - s.u.off
			}
		case atDeclFile:
			d.declFile, d.hasDeclFile = v, true
		case atDeclLine:
			d.declLine = v
		case atDeclaration:
			d.declaration = form == dwbuf.FormFlagPresent || v != 0
		case atInline:
			d.inline = true
		case atLowPC, atEntryPC, atRanges:
			d.code = true
		}
	}
}

// ref converts a reference to an absolute .debug_info offset (a
// DW_FORM_ref_addr is one already, into any unit), or 0.
func (s *scanner) ref(form uint32, v uint64) uint64 {
	switch form {
	case dwbuf.FormRef1, dwbuf.FormRef2, dwbuf.FormRef4, dwbuf.FormRef8, dwbuf.FormRefUdata:
		return s.u.off + v
	case dwbuf.FormRefAddr:
		return v
	}
	return 0
}

// attrValue resolves DW_FORM_indirect and decodes one attribute value,
// returning the effective form with it.
func (s *scanner) attrValue(r *dwbuf.Cursor, sp attrSpec) (uint32, uint64) {
	if sp.form == dwbuf.FormIndirect {
		sp.form = uint32(r.Uleb())
	}
	return sp.form, s.value(r, sp)
}

// value decodes one attribute value (see [dwbuf.Cursor.Value]); an
// implicit constant comes from the abbreviation.
func (s *scanner) value(r *dwbuf.Cursor, sp attrSpec) uint64 {
	if sp.form == dwbuf.FormImplicitConst {
		return uint64(sp.implicit)
	}
	return r.Value(sp.form, s.u.Format)
}

// strBytes returns the string an attribute value refers to, without
// copying, or nil.
func (s *scanner) strBytes(form uint32, v uint64) []byte {
	var sec []byte
	switch form {
	case dwbuf.FormString:
		sec = s.info
	case dwbuf.FormStrp:
		sec = s.str
	case dwbuf.FormLineStrp:
		sec = s.lineStr
	case dwbuf.FormStrx, dwbuf.FormStrx1, dwbuf.FormStrx2, dwbuf.FormStrx3, dwbuf.FormStrx4, dwbuf.FormGNUStrIndex:
		size := uint64(s.u.OffsetSize())
		base := s.strOffBase
		if base == 0 && s.u.Version >= 5 {
			base = 8 // header of the contribution when no base is given
		}
		p := base + v*size
		if p+size > uint64(len(s.strOffs)) {
			return nil
		}
		r := dwbuf.Cursor{Data: s.strOffs, Pos: int(p), Big: s.big}
		v, sec = r.Uint(int(size)), s.str
	default:
		return nil
	}
	return dwbuf.CStringAt(sec, v)
}

// matches reports whether the DIE's integrated name or linkage name
// matches; depth bounds origin chains as libdw does.
func (s *scanner) matches(d *dieAttrs, match NameMatcher, depth int) bool {
	if d.nameForm != 0 {
		if n := s.strBytes(d.nameForm, d.name); n != nil && match(n) {
			return true
		}
	}
	if d.linkForm != 0 {
		if n := s.strBytes(d.linkForm, d.link); n != nil && match(n) {
			return true
		}
	}
	if d.nameForm != 0 && d.linkForm != 0 || depth > 16 {
		return false
	}
	target := d.origin
	if target == 0 {
		target = d.spec
	}
	o, r, ok := s.at(target)
	if !ok {
		return false
	}
	a := o.tab.get(r.Uleb())
	if a == nil || r.Err() != nil {
		return false
	}
	var od dieAttrs
	o.readAttrs(&r, a, &od)
	if r.Err() != nil {
		return false
	}
	// An own attribute shadows the origin's, as dwarf_attr_integrate does.
	if d.nameForm != 0 {
		od.nameForm = 0
	}
	if d.linkForm != 0 {
		od.linkForm = 0
	}
	return o.matches(&od, match, depth+1)
}
