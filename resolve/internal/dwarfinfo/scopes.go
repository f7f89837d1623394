package dwarfinfo

import (
	"encoding/binary"
	"fmt"

	"github.com/gprobe/gprobe/internal/dwbuf"
	"github.com/gprobe/gprobe/lines"
)

// unitAttributes reads a unit DIE's attributes. Strings are resolved
// after all attributes are read, because DW_AT_str_offsets_base may follow
// a DW_FORM_strx name. DW_AT_low_pc is returned raw (form, value): an
// addrx index can be resolved only once DW_AT_addr_base is known.
func (s *scanner) unitAttributes(r *dwbuf.Cursor, a *abbrev) (ua unitAttrs, lowForm uint32, lowVal uint64) {
	var nameForm, dirForm uint32
	var nameVal, dirVal uint64
	for _, sp := range a.attrs {
		form, v := s.attrValue(r, sp)
		switch sp.attr {
		case atName:
			nameForm, nameVal = form, v
		case atCompDir:
			dirForm, dirVal = form, v
		case atStmtList:
			ua.stmtList, ua.hasStmt = v, true
		case atLowPC:
			lowForm, lowVal = form, v
		case atStrOffsetsBase:
			s.strOffBase = v
		case atAddrBase:
			ua.addrBase = v
		case atRnglistsBase:
			ua.rnglistsBase = v
		case atLoclistsBase:
			ua.loclistsBase = v
		case atLanguage:
			ua.language = int64(v)
		case atHighPC:
			ua.highForm, ua.highVal = form, v
		case atRanges:
			ua.rangesForm, ua.ranges, ua.hasRanges = form, v, true
		}
	}
	ua.lowForm, ua.lowVal = lowForm, lowVal
	if nameForm != 0 {
		ua.name = string(s.strBytes(nameForm, nameVal))
	}
	if dirForm != 0 {
		ua.compDir = string(s.strBytes(dirForm, dirVal))
	}
	return ua, lowForm, lowVal
}

// unitAttrs are the unit DIE attributes the scope decoder needs.
type unitAttrs struct {
	name, compDir          string
	stmtList               uint64
	hasStmt                bool
	lowPC                  uint64
	addrBase, rnglistsBase uint64
	loclistsBase           uint64
	language               int64
	// the unit's own address ranges (UnitCovering): DW_AT_high_pc's raw
	// form and value, DW_AT_ranges'
	lowForm, highForm, rangesForm uint32
	lowVal, highVal, ranges       uint64
	hasRanges                     bool
}

// scopeAttrs are the attributes of one scope DIE.
type scopeAttrs struct {
	name, link           string
	declFile, declLine   int64
	callFile, callLine   int64
	hasDeclFile          bool
	origin, spec         uint64 // absolute .debug_info offsets, 0 if none
	sibling              uint64
	declaration, inline  bool
	lowPC, highPC        uint64
	hasLow, highIsOffset bool
	hasHigh              bool
	entryPC              uint64
	hasEntry, entryAddr  bool
	frameBaseCFA         bool
	rangesForm           uint32
	ranges               uint64
	hasRanges            bool
}

// decodeScopes builds the lines.Unit of unit u (line table and scope tree)
// with the allocation-light scanner instead of debug/dwarf, which is an
// order of magnitude slower on kernel-sized units.
func (f *File) decodeScopes(idx int, u *unitHeader) (*CU, error) {
	s := &scanner{f: f, big: f.Order == binary.BigEndian, str: f.Section(".debug_str"),
		lineStr: f.Section(".debug_line_str"), strOffs: f.Section(".debug_str_offsets")}
	s.u = u
	if err := s.tab.parse(f.Section(".debug_abbrev"), u.abbrevOff, u); err != nil {
		return nil, fmt.Errorf("%s: unit at %#x: %w", f.Path, u.off, err)
	}
	var err error
	if s.info, err = f.readSection(".debug_info", u.off, u.end, nil); err != nil {
		return nil, err
	}
	r := dwbuf.Cursor{Data: s.info, Pos: int(u.dieOff - u.off), Big: s.big}
	cuPos := r.Pos
	code := r.Uleb()
	cuAbbrev := s.tab.get(code)
	if code == 0 || cuAbbrev == nil {
		return nil, s.bad(r.Pos, "missing unit DIE")
	}
	ua, lowForm, lowVal := s.unitAttributes(&r, cuAbbrev)
	if r.Err() != nil {
		return nil, s.bad(r.Pos, "truncated unit DIE")
	}
	d := scopeDecoder{s: s, ua: &ua}
	if lowForm != 0 {
		ua.lowPC = d.addr(lowForm, lowVal) // addr_base is known only now
	}
	cu := &CU{Index: idx, Base: u.off, Scopes: map[uint64]*lines.Scope{}, AddrSize: int(u.AddrSize), Language: ua.language,
		f: f, hdr: *u, lowPC: ua.lowPC, addrBase: ua.addrBase, loclistsBase: ua.loclistsBase}
	lu := &lines.Unit{Offset: u.off + uint64(cuPos), Name: ua.name, CompDir: ua.compDir}
	cu.Lines = lu
	if ua.hasStmt {
		secs := lines.Sections{Line: f.Section(".debug_line"), Str: f.Section(".debug_str"),
			LineStr: f.Section(".debug_line_str"), Order: f.Order}
		files, err := lines.ReadFiles(secs, ua.stmtList, ua.compDir, int(u.AddrSize))
		if err != nil {
			return nil, fmt.Errorf("%s: unit %s: %w", f.Path, ua.name, err)
		}
		lu.Files = files
		stmt, compDir, addrSize, name := ua.stmtList, ua.compDir, int(u.AddrSize), ua.name
		lu.LoadRows = func() ([]lines.Row, error) {
			t, err := lines.ReadTable(secs, stmt, compDir, addrSize)
			if err != nil {
				return nil, fmt.Errorf("%s: unit %s: %w", f.Path, name, err)
			}
			return t.Rows, nil
		}
	}
	if !cuAbbrev.children {
		return cu, nil
	}
	d.cu = cu
	if err := d.children(&r, nil); err != nil {
		return nil, err
	}
	d.integrate()
	return cu, nil
}

func isAddrx(form uint32) bool {
	switch form {
	case dwbuf.FormAddrx, dwbuf.FormAddrx1, dwbuf.FormAddrx2, dwbuf.FormAddrx3, dwbuf.FormAddrx4, dwbuf.FormGNUAddrIndex:
		return true
	}
	return false
}

type scopeDecoder struct {
	s       *scanner
	ua      *unitAttrs
	cu      *CU
	origins []originLink
}

type originLink struct {
	s      *lines.Scope
	target uint64 // absolute offset
	isSpec bool
}

// children decodes the children of a DIE until its terminating null entry.
// parent is nil at unit level, and in a unit that is not C's inside the
// namespaces, classes and structures whose functions are the unit's.
func (d *scopeDecoder) children(r *dwbuf.Cursor, parent *lines.Scope) error {
	s := d.s
	for {
		pos := r.Pos
		code := r.Uleb()
		if r.Err() != nil {
			return s.bad(r.Pos, "truncated DIE tree")
		}
		if code == 0 {
			return nil
		}
		a := s.tab.get(code)
		if a == nil {
			return s.bad(pos, "unknown abbrev code %d", code)
		}
		var kind lines.ScopeKind
		switch a.tag {
		case tagSubprogram:
			kind = lines.Subprogram
		case tagInlinedSubroutine:
			kind = lines.Inlined
		case tagLexicalBlock:
			kind = lines.Lexical
		}
		if parent == nil && a.children && nestsFunctions(a.tag) && !isCLanguage(d.ua.language) {
			// A namespace, class or structure: its functions are the
			// unit's, in DIE order (libdw's dwarf_getfuncs), as Rust
			// puts every function in its crate's namespace.
			var skip dieAttrs
			s.readAttrs(r, a, &skip)
			if r.Err() != nil {
				return s.bad(pos, "truncated DIE")
			}
			if err := d.children(r, nil); err != nil {
				return err
			}
			continue
		}
		if kind == 0 || (parent == nil && kind != lines.Subprogram) {
			if err := s.skipDIE(r, a); err != nil {
				return err
			}
			continue
		}
		var at scopeAttrs
		d.readScope(r, a, &at)
		if r.Err() != nil {
			return s.bad(pos, "truncated scope DIE")
		}
		sc, err := d.scope(kind, uint64(pos), &at)
		if err != nil {
			return err
		}
		d.cu.Scopes[sc.Offset] = sc
		if parent != nil {
			parent.Children = append(parent.Children, sc)
		} else {
			d.cu.Lines.Funcs = append(d.cu.Lines.Funcs, sc)
		}
		if a.children {
			if err := d.children(r, sc); err != nil {
				return err
			}
		}
	}
}

func (d *scopeDecoder) readScope(r *dwbuf.Cursor, a *abbrev, at *scopeAttrs) {
	s := d.s
	for _, sp := range a.attrs {
		form, v := s.attrValue(r, sp)
		switch sp.attr {
		case atName:
			at.name = string(s.strBytes(form, v))
		case atLinkageName, atMIPSLinkage:
			at.link = string(s.strBytes(form, v))
		case atDeclFile:
			at.declFile, at.hasDeclFile = int64(v), true
		case atDeclLine:
			at.declLine = int64(v)
		case atCallFile:
			at.callFile = int64(v)
		case atCallLine:
			at.callLine = int64(v)
		case atAbstractOrigin:
			at.origin = s.ref(form, v)
		case atSpecification:
			at.spec = s.ref(form, v)
		case atDeclaration:
			at.declaration = form == dwbuf.FormFlagPresent || v != 0
		case atInline:
			at.inline = true
		case atLowPC:
			at.lowPC, at.hasLow = d.addr(form, v), true
		case atHighPC:
			at.highPC, at.hasHigh = v, true
			at.highIsOffset = form != dwbuf.FormAddr && !isAddrx(form)
			if isAddrx(form) {
				at.highPC = d.addr(form, v)
			}
		case atEntryPC:
			at.hasEntry = true
			if form == dwbuf.FormAddr || isAddrx(form) {
				at.entryPC, at.entryAddr = d.addr(form, v), true
			}
		case atRanges:
			at.rangesForm, at.ranges, at.hasRanges = form, v, true
		case atFrameBase:
			// value() skipped the block; look back at its one opcode.
			at.frameBaseCFA = (form == dwbuf.FormExprloc || form == dwbuf.FormBlock1) && r.Pos >= 2 &&
				s.info[r.Pos-2] == 1 && s.info[r.Pos-1] == opCallFrameCFA
		}
	}
}

// addr resolves an address attribute (DW_FORM_addr or an addrx index).
func (d *scopeDecoder) addr(form uint32, v uint64) uint64 {
	if !isAddrx(form) {
		return v
	}
	sec := d.s.f.Section(".debug_addr")
	size := uint64(d.s.u.AddrSize)
	p := d.ua.addrBase + v*size
	if p+size > uint64(len(sec)) {
		return 0
	}
	r := dwbuf.Cursor{Data: sec, Pos: int(p), Big: d.s.big}
	return r.Uint(int(size))
}

func (d *scopeDecoder) scope(kind lines.ScopeKind, pos uint64, at *scopeAttrs) (*lines.Scope, error) {
	u := d.s.u
	sc := &lines.Scope{Kind: kind, Offset: u.off + pos, Name: at.name, Linkage: at.link,
		DeclFile: -1, CallFile: -1, OriginDeclFile: -1,
		DeclLine: int(at.declLine), CallLine: int(at.callLine),
		Declaration: at.declaration, HasInline: at.inline, HasRanges: at.hasRanges, FrameBaseCFA: at.frameBaseCFA}
	if at.hasDeclFile {
		sc.DeclFile = int(at.declFile)
	}
	if at.callLine != 0 || at.callFile != 0 {
		sc.CallFile = int(at.callFile)
	}
	// libdw's dwarf_entrypc: DW_AT_entry_pc when present (and an address),
	// else DW_AT_low_pc.
	switch {
	case at.hasEntry:
		sc.EntryPC, sc.HasEntryPC = at.entryPC, at.entryAddr
	case at.hasLow:
		sc.EntryPC, sc.HasEntryPC = at.lowPC, true
	}
	if at.hasLow && at.hasHigh {
		high := at.highPC
		if at.highIsOffset {
			high += at.lowPC
		}
		sc.HighPC = high
		sc.Ranges = [][2]uint64{{at.lowPC, high}}
	} else if at.hasRanges {
		rs, err := d.ranges(at.rangesForm, at.ranges)
		if err != nil {
			return nil, err
		}
		sc.Ranges = rs
	}
	if at.origin != 0 {
		sc.Origin = at.origin
		d.origins = append(d.origins, originLink{s: sc, target: sc.Origin})
	} else if at.spec != 0 {
		d.origins = append(d.origins, originLink{s: sc, target: at.spec, isSpec: true})
	}
	return sc, nil
}

// DWARF 5 range list entry kinds.
const (
	rleEndOfList    = 0
	rleBaseAddressx = 1
	rleStartxEndx   = 2
	rleStartxLength = 3
	rleOffsetPair   = 4
	rleBaseAddress  = 5
	rleStartEnd     = 6
	rleStartLength  = 7
)

// ranges decodes a DW_AT_ranges value: .debug_ranges (DWARF < 5) or
// .debug_rnglists, with the unit's low_pc as base address. Empty ranges
// are kept, as libdw's dwarf_ranges serves them: perf prints them (-V
// --range) and takes the first one as an entry address (die_entrypc).
func (d *scopeDecoder) ranges(form uint32, v uint64) ([][2]uint64, error) {
	s := d.s
	u := s.u
	big := s.big
	size := int(u.AddrSize)
	base := d.ua.lowPC
	var out [][2]uint64
	add := func(lo, hi uint64) {
		out = append(out, [2]uint64{lo, hi})
	}
	if u.Version < 5 {
		sec := s.f.Section(".debug_ranges")
		if v >= uint64(len(sec)) {
			return nil, s.bad(0, "range list offset %#x out of range", v)
		}
		r := dwbuf.Cursor{Data: sec, Pos: int(v), Big: big}
		maxAddr := uint64(1)<<(8*uint(size)) - 1
		if size == 8 {
			maxAddr = ^uint64(0)
		}
		for r.Err() == nil {
			lo, hi := r.Uint(size), r.Uint(size)
			switch {
			case lo == 0 && hi == 0:
				return out, nil
			case lo == maxAddr:
				base = hi
			default:
				add(base+lo, base+hi)
			}
		}
		return nil, s.bad(0, "truncated range list at %#x", v)
	}
	sec := s.f.Section(".debug_rnglists")
	off := v
	if form == dwbuf.FormRnglistx {
		offSize := uint64(u.OffsetSize())
		p := d.ua.rnglistsBase + v*offSize
		if p+offSize > uint64(len(sec)) {
			return nil, s.bad(0, "rnglistx %d out of range", v)
		}
		r := dwbuf.Cursor{Data: sec, Pos: int(p), Big: big}
		off = d.ua.rnglistsBase + r.Uint(int(offSize))
	}
	if off >= uint64(len(sec)) {
		return nil, s.bad(0, "range list offset %#x out of range", off)
	}
	r := dwbuf.Cursor{Data: sec, Pos: int(off), Big: big}
	for r.Err() == nil {
		switch r.U8() {
		case rleEndOfList:
			return out, nil
		case rleBaseAddressx:
			base = d.addr(dwbuf.FormAddrx, r.Uleb())
		case rleStartxEndx:
			lo := d.addr(dwbuf.FormAddrx, r.Uleb())
			add(lo, d.addr(dwbuf.FormAddrx, r.Uleb()))
		case rleStartxLength:
			lo := d.addr(dwbuf.FormAddrx, r.Uleb())
			add(lo, lo+r.Uleb())
		case rleOffsetPair:
			lo, hi := r.Uleb(), r.Uleb()
			add(base+lo, base+hi)
		case rleBaseAddress:
			base = r.Uint(size)
		case rleStartEnd:
			lo := r.Uint(size)
			add(lo, r.Uint(size))
		case rleStartLength:
			lo := r.Uint(size)
			add(lo, lo+r.Uleb())
		default:
			return nil, s.bad(0, "unknown range list entry at %#x", off)
		}
	}
	return nil, s.bad(0, "truncated range list at %#x", off)
}

// integrate copies name and declaration attributes from abstract origins
// and specifications, as libdw's dwarf_attr_integrate does.
func (d *scopeDecoder) integrate() {
	links := map[*lines.Scope]originLink{}
	for _, l := range d.origins {
		links[l.s] = l
	}
	done := map[*lines.Scope]bool{}
	var walk func(s *lines.Scope, depth int)
	walk = func(s *lines.Scope, depth int) {
		if done[s] || depth > 16 {
			return
		}
		done[s] = true
		l, ok := links[s]
		if !ok {
			return
		}
		o := d.cu.Scopes[l.target]
		if o == nil {
			if o = d.foreignScope(l.target, depth); o == nil {
				return
			}
		}
		walk(o, depth+1)
		if s.Name == "" {
			s.Name = o.Name
		}
		if s.Linkage == "" {
			s.Linkage = o.Linkage
		}
		if s.DeclFile < 0 {
			s.DeclFile = o.DeclFile
		}
		if s.DeclLine == 0 {
			s.DeclLine = o.DeclLine
		}
		if !l.isSpec {
			s.OriginDeclFile, s.OriginDeclLine = o.DeclFile, o.DeclLine
		}
	}
	for _, l := range d.origins {
		walk(l.s, 0)
	}
}

// foreignScope is the declaration part (names, declaration file and line,
// integrated through its own origins) of a DIE that a reference leads to
// outside the unit, as libdw's dwarf_attr_integrate follows
// DW_FORM_ref_addr; its declaration file is numbered in this unit's files
// (added to them when the unit's line table does not name it), since
// libdw names it from the unit holding the attribute. Nil when no unit
// holds the DIE.
func (d *scopeDecoder) foreignScope(off uint64, depth int) *lines.Scope {
	o, r, ok := d.s.at(off)
	if !ok {
		return nil
	}
	a := o.tab.get(r.Uleb())
	if a == nil || r.Err() != nil {
		return nil
	}
	var at dieAttrs
	o.readAttrs(&r, a, &at)
	if r.Err() != nil {
		return nil
	}
	sc := &lines.Scope{Offset: off, DeclFile: -1, DeclLine: int(at.declLine)}
	if at.nameForm != 0 {
		sc.Name = string(o.strBytes(at.nameForm, at.name))
	}
	if at.linkForm != 0 {
		sc.Linkage = string(o.strBytes(at.linkForm, at.link))
	}
	if at.hasDeclFile {
		sc.DeclFile = d.fileIndex(o.declFileName(at.declFile))
	}
	if target := at.origin; (target != 0 || at.spec != 0) && depth < 16 {
		if target == 0 {
			target = at.spec
		}
		if p := d.foreignScope(target, depth+1); p != nil {
			if sc.Name == "" {
				sc.Name = p.Name
			}
			if sc.Linkage == "" {
				sc.Linkage = p.Linkage
			}
			if sc.DeclFile < 0 {
				sc.DeclFile = p.DeclFile
			}
			if sc.DeclLine == 0 {
				sc.DeclLine = p.DeclLine
			}
		}
	}
	return sc
}

// fileIndex numbers file name in the unit's files, adding it when absent.
func (d *scopeDecoder) fileIndex(name string) int {
	if name == "" {
		return -1
	}
	lu := d.cu.Lines
	for i, f := range lu.Files {
		if i > 0 && f == name {
			return i
		}
	}
	lu.Files = append(lu.Files, name)
	return len(lu.Files) - 1
}
