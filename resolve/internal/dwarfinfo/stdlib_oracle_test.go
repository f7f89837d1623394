package dwarfinfo

import (
	"debug/dwarf"
	"fmt"

	"github.com/gprobe/gprobe/lines"
)

// decodeUnit is the test oracle for decodeScopes: the same unit decoded
// with the standard library's debug/dwarf (Reader, Ranges, Val), written
// independently of the scanner.
func (f *File) decodeUnit(idx int, u *unitHeader) (cu *CU, err error) {
	defer func() {
		if r := recover(); r != nil {
			cu, err = nil, fmt.Errorf("%s: %w: unit at %#x: %v", f.Path, ErrBadDWARF, u.off, r)
		}
	}()
	info, err := f.readSection(".debug_info", u.off, u.end, nil)
	if err != nil {
		return nil, err
	}
	d, err := dwarf.New(f.Section(".debug_abbrev"), nil, nil, info, nil, nil, f.Section(".debug_ranges"), f.Section(".debug_str"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w: unit at %#x: %v", f.Path, ErrBadDWARF, u.off, err)
	}
	for _, name := range []string{".debug_addr", ".debug_line_str", ".debug_str_offsets", ".debug_rnglists"} {
		if b := f.Section(name); b != nil {
			if err := d.AddSection(name, b); err != nil {
				return nil, fmt.Errorf("%s: %w: %s: %v", f.Path, ErrBadDWARF, name, err)
			}
		}
	}
	cu = &CU{Index: idx, Base: u.off, Scopes: map[uint64]*lines.Scope{}, AddrSize: int(u.AddrSize)}
	r := d.Reader()
	top, err := r.Next()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: unit at %#x: %v", f.Path, ErrBadDWARF, u.off, err)
	}
	if top == nil || (top.Tag != dwarf.TagCompileUnit && top.Tag != dwarf.TagPartialUnit) {
		return nil, fmt.Errorf("%s: %w: unit at %#x has no unit DIE", f.Path, ErrBadDWARF, u.off)
	}
	lu := &lines.Unit{Offset: u.off + uint64(top.Offset)}
	lu.Name, _ = top.Val(dwarf.AttrName).(string)
	lu.CompDir, _ = top.Val(dwarf.AttrCompDir).(string)
	cu.Language, _ = top.Val(dwarf.AttrLanguage).(int64)
	cu.Lines = lu
	if stmt, ok := top.Val(dwarf.AttrStmtList).(int64); ok {
		t, err := lines.ReadTable(lines.Sections{Line: f.Section(".debug_line"), Str: f.Section(".debug_str"),
			LineStr: f.Section(".debug_line_str"), Order: f.Order}, uint64(stmt), lu.CompDir, int(u.AddrSize))
		if err != nil {
			return nil, fmt.Errorf("%s: unit %s: %w", f.Path, lu.Name, err)
		}
		lu.Files = t.Files
		lu.Rows = t.Rows
		lines.SortRows(lu.Rows)
	}
	if !top.Children {
		return cu, nil
	}
	origins := map[*lines.Scope]uint64{}
	specs := map[*lines.Scope]uint64{}
	var stack []*lines.Scope // nil entries for non-scope DIEs with children
	// In a unit that is not C's, a namespace, class, structure or module
	// at unit level holds unit-level functions (Rust puts them all there).
	flat := &lines.Scope{}
	nonC := true
	switch cu.Language {
	case 0x01, 0x02, 0x0c, 0x1d: // DW_LANG_C89, C, C99, C11
		nonC = false
	}
	for {
		e, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("%s: %w: unit %s: %v", f.Path, ErrBadDWARF, lu.Name, err)
		}
		if e == nil {
			break
		}
		if e.Tag == 0 {
			if len(stack) == 0 {
				break // end of the unit's children
			}
			stack = stack[:len(stack)-1]
			continue
		}
		var parent *lines.Scope
		inScope := false
		if n := len(stack); n > 0 && stack[n-1] != flat {
			parent, inScope = stack[n-1], stack[n-1] != nil
		}
		unitLevel := len(stack) == 0 || stack[len(stack)-1] == flat
		if unitLevel && nonC && e.Children {
			switch e.Tag {
			case dwarf.TagNamespace, dwarf.TagClassType, dwarf.TagStructType, dwarf.TagModule:
				stack = append(stack, flat)
				continue
			}
		}
		var kind lines.ScopeKind
		switch e.Tag {
		case dwarf.TagSubprogram:
			kind = lines.Subprogram
		case dwarf.TagInlinedSubroutine:
			kind = lines.Inlined
		case dwarf.TagLexDwarfBlock:
			kind = lines.Lexical
		}
		if kind == 0 || (!unitLevel && !inScope) {
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		s := f.scopeFromEntry(d, cu, e, kind)
		cu.Scopes[s.Offset] = s
		// debug/dwarf, given only this unit's bytes, reads a reference
		// within the unit relative to it, and a DW_FORM_ref_addr (to
		// another unit: Rust's and LTO's cross-unit origins) as its
		// offset in the section, which is past this unit's length.
		abs := func(o dwarf.Offset) uint64 {
			if uint64(o) >= u.end-u.off {
				return uint64(o)
			}
			return u.off + uint64(o)
		}
		if o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
			origins[s] = abs(o)
			s.Origin = abs(o)
		} else if o, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset); ok {
			specs[s] = abs(o)
		}
		if parent != nil {
			parent.Children = append(parent.Children, s)
		} else if kind == lines.Subprogram {
			lu.Funcs = append(lu.Funcs, s)
		}
		if e.Children {
			stack = append(stack, s)
		}
	}
	// Integrate name and declaration attributes through origins.
	var integrate func(s *lines.Scope, depth int)
	done := map[*lines.Scope]bool{}
	integrate = func(s *lines.Scope, depth int) {
		if done[s] || depth > 16 {
			return
		}
		done[s] = true
		target, ok := origins[s]
		if !ok {
			target, ok = specs[s]
		}
		if !ok {
			return
		}
		o := cu.Scopes[target]
		if o == nil {
			return
		}
		integrate(o, depth+1)
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
		if s.Origin != 0 {
			s.OriginDeclFile, s.OriginDeclLine = o.DeclFile, o.DeclLine
		}
	}
	for _, s := range cu.Scopes {
		integrate(s, 0)
	}
	return cu, nil
}

func (f *File) scopeFromEntry(d *dwarf.Data, cu *CU, e *dwarf.Entry, kind lines.ScopeKind) *lines.Scope {
	s := &lines.Scope{Kind: kind, Offset: cu.Base + uint64(e.Offset), DeclFile: -1, CallFile: -1, OriginDeclFile: -1}
	s.Name, _ = e.Val(dwarf.AttrName).(string)
	s.Linkage, _ = e.Val(dwarf.AttrLinkageName).(string)
	if s.Linkage == "" {
		s.Linkage, _ = e.Val(dwarf.Attr(atMIPSLinkage)).(string)
	}
	if v, ok := e.Val(dwarf.AttrDeclFile).(int64); ok {
		s.DeclFile = int(v)
	}
	if v, ok := e.Val(dwarf.AttrDeclLine).(int64); ok {
		s.DeclLine = int(v)
	}
	if v, ok := e.Val(dwarf.AttrCallFile).(int64); ok {
		s.CallFile = int(v)
	}
	if v, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
		s.CallLine = int(v)
	}
	if v, ok := e.Val(dwarf.AttrDeclaration).(bool); ok {
		s.Declaration = v
	}
	s.HasInline = e.AttrField(dwarf.AttrInline) != nil
	if fb, ok := e.Val(dwarf.AttrFrameBase).([]byte); ok {
		s.FrameBaseCFA = len(fb) == 1 && fb[0] == opCallFrameCFA
	}
	s.HasRanges = e.AttrField(dwarf.AttrRanges) != nil
	// libdw's dwarf_entrypc: DW_AT_entry_pc if present, else DW_AT_low_pc,
	// and only an address-class value counts.
	low, hasLow := e.Val(dwarf.AttrLowpc).(uint64)
	if fld := e.AttrField(dwarf.AttrEntrypc); fld != nil {
		if v, ok := fld.Val.(uint64); ok && fld.Class == dwarf.ClassAddress {
			s.EntryPC, s.HasEntryPC = v, true
		}
	} else if hasLow {
		s.EntryPC, s.HasEntryPC = low, true
	}
	if hasLow {
		switch h := e.AttrField(dwarf.AttrHighpc); {
		case h == nil:
		case h.Class == dwarf.ClassAddress:
			s.HighPC, _ = h.Val.(uint64)
		case h.Class == dwarf.ClassConstant:
			if n, ok := h.Val.(int64); ok {
				s.HighPC = low + uint64(n)
			}
		}
	}
	if rs, err := d.Ranges(e); err == nil {
		s.Ranges = rs // empty ranges included, as libdw serves them
	}
	return s
}
