// Package lines maps source lines to instruction addresses the way perf probe
// (6.1, on elfutils libdw) does, and renders perf's `-L` listing.
//
// The package works on a [Unit]: one compile unit's line table and its tree of
// function scopes, filled in by a debug-info back end
// (resolve/internal/dwarfinfo). It never parses DWARF DIEs itself; it only
// reads line programs (table.go), with internal/dwbuf's byte-level readers.
//
// The walkers reproduce libdw/perf semantics that decide perf's output:
// die_walk_lines (which (file, line, address) tuples exist), cu_find_lineinfo
// (the reverse map used to reject addresses shared with another line), and
// cu_walk_functions_at (the scopes that contain an address).
package lines

import "sort"

// ScopeKind is the DWARF tag of a scope.
type ScopeKind uint8

const (
	Subprogram ScopeKind = iota + 1 // DW_TAG_subprogram
	Inlined                         // DW_TAG_inlined_subroutine
	Lexical                         // DW_TAG_lexical_block
)

// Scope is a function, inlined call or lexical block of a compile unit.
// Attributes that DWARF allows to be inherited through DW_AT_abstract_origin
// or DW_AT_specification (name, declaration file and line) are already
// resolved; the Own* fields record what the DIE carries itself, which libdw
// distinguishes in a few places.
type Scope struct {
	Kind   ScopeKind
	Offset uint64 // DIE offset in .debug_info, identity of the scope
	Name   string // DW_AT_name, integrated through origins
	// Linkage is DW_AT_linkage_name, integrated.
	Linkage string

	DeclFile int // index into Unit.Files, -1 if none (integrated)
	DeclLine int // 0 if none (integrated)
	CallFile int // inlined subroutines: index into Unit.Files, -1 if none
	CallLine int

	// Origin is the DIE offset of DW_AT_abstract_origin, 0 if none.
	Origin uint64
	// OriginDeclFile and OriginDeclLine are the declaration attributes of
	// the abstract origin (used to ignore redundant inline instances).
	OriginDeclFile, OriginDeclLine int

	Declaration bool // own DW_AT_declaration
	HasInline   bool // own DW_AT_inline
	// EntryPC is DW_AT_entry_pc, else DW_AT_low_pc (libdw dwarf_entrypc);
	// HasEntryPC says whether either attribute exists.
	EntryPC    uint64
	HasEntryPC bool
	// HasRanges reports an own DW_AT_ranges attribute.
	HasRanges bool
	// Ranges are the [low, high) address ranges, in DWARF order.
	Ranges [][2]uint64
	// FrameBaseCFA reports DW_AT_frame_base = DW_OP_call_frame_cfa.
	FrameBaseCFA bool
	// HighPC is the end of a DW_AT_low_pc/DW_AT_high_pc scope (0 otherwise);
	// it identifies tail-call sites the way libdw's dwarf_highpc does.
	HighPC uint64

	Children []*Scope
}

// HasPC reports whether addr lies in one of the scope's ranges
// (libdw dwarf_haspc).
func (s *Scope) HasPC(addr uint64) bool {
	for _, r := range s.Ranges {
		if r[0] <= addr && addr < r[1] {
			return true
		}
	}
	return false
}

// LowestPC returns perf's die_entrypc: DW_AT_entry_pc or DW_AT_low_pc, else
// the start of the first range when the DIE has DW_AT_ranges.
func (s *Scope) LowestPC() (uint64, bool) {
	if s.HasEntryPC {
		return s.EntryPC, true
	}
	if s.HasRanges && len(s.Ranges) > 0 {
		return s.Ranges[0][0], true
	}
	return 0, false
}

// IsFuncDef is perf's die_is_func_def: a subprogram that is not a
// declaration and is either inline or has an entry address.
func (s *Scope) IsFuncDef() bool {
	if s.Kind != Subprogram || s.Declaration {
		return false
	}
	if s.HasInline {
		return true
	}
	_, ok := s.LowestPC()
	return ok
}

// IsFuncInstance is perf's die_is_func_instance: a subprogram or inlined
// subroutine with code (an entry pc or ranges).
func (s *Scope) IsFuncInstance() bool {
	if s.Kind != Subprogram && s.Kind != Inlined {
		return false
	}
	return s.HasEntryPC || s.HasRanges
}

// Unit is one compile unit: its line table, file names and scopes.
type Unit struct {
	Offset  uint64 // CU DIE offset
	Name    string // DW_AT_name
	CompDir string // DW_AT_comp_dir
	// Files holds the line table's file names, built as libdw builds them
	// (directory + "/" + name, no cleaning). Index 0 is the primary file.
	Files []string
	// Rows are the line table rows sorted as libdw sorts them. When
	// LoadRows is set, Rows is filled on first use (see AllRows): most
	// searches for a function's entry never need them.
	Rows     []Row
	LoadRows func() ([]Row, error)
	rowsErr  error
	// Funcs are the unit's subprograms (top level and nested), in DIE order.
	Funcs []*Scope
}

// AllRows returns the line rows, decoding them on first use.
func (u *Unit) AllRows() ([]Row, error) {
	if u.LoadRows != nil {
		u.Rows, u.rowsErr = u.LoadRows()
		u.LoadRows = nil
		if u.rowsErr == nil {
			SortRows(u.Rows)
		}
	}
	return u.Rows, u.rowsErr
}

// File returns Files[i], or "" when i is out of range.
func (u *Unit) File(i int) string {
	if i < 0 || i >= len(u.Files) {
		return ""
	}
	return u.Files[i]
}

// Row is one line-table row.
type Row struct {
	Addr   uint64
	File   int // index into Unit.Files
	Line   int
	IsStmt bool
	EndSeq bool
	// PrologueEnd is the row's prologue_end flag (clang sets it; GCC does
	// not).
	PrologueEnd bool
}

// SortRows orders rows as elfutils' read_srclines does: by address, an
// end_sequence row before a normal row at the same address, otherwise in
// the order the line program produced them. The last row is then marked
// end_sequence, as libdw does.
func SortRows(rows []Row) {
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Addr != rows[j].Addr {
			return rows[i].Addr < rows[j].Addr
		}
		return rows[i].EndSeq && !rows[j].EndSeq
	})
	if n := len(rows); n > 0 {
		rows[n-1].EndSeq = true
	}
}

// FindRealFunc is libdw/perf die_find_realfunc: the first subprogram, in
// DIE order, whose ranges contain addr.
func (u *Unit) FindRealFunc(addr uint64) *Scope {
	for _, f := range u.Funcs {
		if f.HasPC(addr) {
			return f
		}
	}
	return nil
}

// FindTailFunc is perf's die_find_tailfunc: a subprogram whose high pc
// equals addr (the address after a tail call).
func (u *Unit) FindTailFunc(addr uint64) *Scope {
	for _, f := range u.Funcs {
		if f.HighPC != 0 && f.HighPC == addr {
			return f
		}
	}
	return nil
}

// findChild is perf's die_find_child with __die_find_inline_cb: a
// depth-first search below s for the first inlined subroutine containing
// addr.
func findInlineChild(s *Scope, addr uint64) *Scope {
	for _, c := range s.Children {
		if c.Kind == Inlined && c.HasPC(addr) {
			return c
		}
		if r := findInlineChild(c, addr); r != nil {
			return r
		}
	}
	return nil
}

// FindInnermostInline is perf's die_find_inlinefunc: the deepest inlined
// subroutine below s containing addr, or nil.
func FindInnermostInline(s *Scope, addr uint64) *Scope {
	var found *Scope
	for cur := findInlineChild(s, addr); cur != nil; cur = findInlineChild(cur, addr) {
		found = cur
	}
	return found
}

// WalkFunctionsAt is perf's cu_walk_functions_at: it calls fn with the real
// function containing addr and then each nested inlined subroutine
// containing addr, outermost first, until fn returns true.
func (u *Unit) WalkFunctionsAt(addr uint64, fn func(*Scope) bool) bool {
	for s := u.FindRealFunc(addr); s != nil; s = findInlineChild(s, addr) {
		if fn(s) {
			return true
		}
	}
	return false
}

// Instances lists the function instances whose abstract origin is origin,
// in DIE order, skipping "redundant" inline instances whose call site equals
// the origin's declaration (perf's die_walk_instances).
func (u *Unit) Instances(origin *Scope) []*Scope {
	var out []*Scope
	var walk func(s *Scope)
	walk = func(s *Scope) {
		if s.IsFuncInstance() && s.Origin == origin.Offset {
			redundant := s.Kind == Inlined && s.CallLine == s.OriginDeclLine && s.CallFile == s.OriginDeclFile
			if !redundant {
				out = append(out, s)
			}
		}
		for _, c := range s.Children {
			walk(c)
		}
	}
	for _, f := range u.Funcs {
		walk(f)
	}
	return out
}
