package symtab

import (
	"debug/elf"
	"sort"
	"strings"

	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// Symbol is one entry of perf's symbol map for a DSO.
type Symbol struct {
	Raw        []byte // the name; aliases the mapped file
	Exec       bool   // in an executable section
	Start, End uint64 // [Start, End)
	Type       elf.SymType
	Bind       elf.SymBind
}

// Name copies the symbol's name.
func (s Symbol) Name() string { return string(s.Raw) }

// Map reproduces the symbol table perf builds for a DSO
// (symbol-elf.c dso__load_sym): named functions and objects plus labels in
// executable sections, one symbol per start address (choose_best_symbol),
// zero-sized symbols extended to the next one (symbols__fixup_end).
//
// Built from an image (NewMap), it answers find from the image's
// address-ordered symbol table, looking only at the entries around the
// address; the whole map (syms) is made only for walks over every symbol
// (All). A module's map is given whole (Tree.Map).
type Map struct {
	sorted   *dwarfinfo.SortedSymbols // nil for a map given whole
	sections []*elf.Section
	machine  elf.Machine
	naming   Naming
	syms     []Symbol // sorted by start; nil until All()
}

// NewMap returns perf's map of the image f, its symbols named as n says.
func NewMap(f *dwarfinfo.File, n Naming) (*Map, error) {
	sorted, err := f.SortedSymbols()
	if err != nil {
		return nil, err
	}
	m := &Map{sorted: sorted, sections: f.ELF.Sections, machine: f.Machine, naming: n}
	if sorted == nil {
		m.syms = []Symbol{}
	}
	return m, nil
}

// keep converts an entry of the symbol table into a map symbol, or says
// perf leaves it out.
func (m *Map) keep(s dwarfinfo.Symbol) (Symbol, bool) {
	if len(s.RawName) == 0 || s.Sect == elf.SHN_UNDEF || s.Sect == elf.SHN_ABS || int(s.Sect) >= len(m.sections) {
		return Symbol{}, false
	}
	sec := m.sections[s.Sect]
	if sec.Flags&elf.SHF_ALLOC == 0 {
		return Symbol{}, false
	}
	switch s.Type {
	case elf.STT_FUNC, elf.STT_GNU_IFUNC, elf.STT_OBJECT:
	case elf.STT_NOTYPE:
		if sec.Flags&elf.SHF_EXECINSTR == 0 || s.Vis == elf.STV_HIDDEN || s.Vis == elf.STV_INTERNAL {
			return Symbol{}, false
		}
	default:
		return Symbol{}, false
	}
	if IsMappingSymbol(m.machine, s.RawName) {
		return Symbol{}, false
	}
	return Symbol{Raw: s.RawName, Start: s.Value, End: s.Value + s.Size, Type: s.Type, Bind: s.Bind,
		Exec: sec.Flags&elf.SHF_EXECINSTR != 0}, true
}

// All returns every symbol of the map, sorted by start.
func (m *Map) All() []Symbol {
	if m.syms != nil {
		return m.syms
	}
	out := make([]Symbol, 0, m.sorted.Len())
	m.Each(func(s Symbol) bool {
		out = append(out, s)
		return true
	})
	for i := range out {
		if out[i].End == out[i].Start && i+1 < len(out) {
			out[i].End = out[i+1].Start
		}
	}
	m.syms = out
	return m.syms
}

// Each calls fn with the map's symbols in address order, one per start
// address, until fn returns false, without making the whole map; a
// zero-sized symbol's end is left as it is (All extends it).
func (m *Map) Each(fn func(Symbol) bool) {
	if m.syms != nil {
		for _, s := range m.syms {
			if !fn(s) {
				return
			}
		}
		return
	}
	// The table in address order, symbols at one address in table order
	// (the order a stable sort by address gives); of those, the one
	// choose_best_symbol keeps.
	var cur Symbol
	have := false
	for i := 0; i < m.sorted.Len(); i++ {
		s, ok := m.keep(m.sorted.At(i))
		if !ok {
			continue
		}
		if have && cur.Start == s.Start {
			if !betterSymbol(cur, s) {
				cur = s
			}
			continue
		}
		if have && !fn(cur) {
			return
		}
		cur, have = s, true
	}
	if have {
		fn(cur)
	}
}

// betterSymbol is perf's choose_best_symbol: true if a wins over b.
func betterSymbol(a, b Symbol) bool {
	la, lb := a.End-a.Start, b.End-b.Start
	if lb == 0 && la > 0 {
		return true
	}
	if la == 0 && lb > 0 {
		return false
	}
	wa, wb := a.Bind == elf.STB_WEAK, b.Bind == elf.STB_WEAK
	if wb && !wa {
		return true
	}
	if wa && !wb {
		return false
	}
	ga, gb := a.Bind == elf.STB_GLOBAL, b.Bind == elf.STB_GLOBAL
	if ga && !gb {
		return true
	}
	if gb && !ga {
		return false
	}
	ua, ub := underscores(a.Raw), underscores(b.Raw)
	if ub > ua {
		return true
	}
	if ua > ub {
		return false
	}
	return len(a.Raw) >= len(b.Raw)
}

func underscores(s []byte) int {
	n := 0
	for n < len(s) && s[n] == '_' {
		n++
	}
	return n
}

// Find returns the symbol containing addr (perf's map__find_symbol).
func (m *Map) Find(addr uint64) (Symbol, bool) {
	if m.syms == nil {
		if s, ok, done := m.findSorted(addr); done {
			return s, ok
		}
	}
	syms := m.All()
	i := sort.Search(len(syms), func(i int) bool { return syms[i].Start > addr })
	if i == 0 {
		return Symbol{}, false
	}
	s := syms[i-1]
	if addr >= s.Start && addr < s.End {
		return s, true
	}
	return Symbol{}, false
}

// findSorted is Find without the whole map: the symbols perf keeps that
// start at the greatest start address at or below addr, folded into one
// as All does, and extended to the next start when zero-sized. It gives
// up (done false) when that means looking at more than a few dozen
// entries, which the whole map does better.
func (m *Map) findSorted(addr uint64) (s Symbol, ok, done bool) {
	t := m.sorted
	budget := 64
	at := func(i int) (Symbol, bool) {
		budget--
		return m.keep(t.At(i))
	}
	j := sort.Search(t.Len(), func(i int) bool { return t.Value(i) > addr }) - 1
	for ; j >= 0 && budget > 0; j-- {
		if _, ok := at(j); ok {
			break
		}
	}
	if j < 0 {
		return Symbol{}, false, true
	}
	start := t.Value(j)
	for j > 0 && t.Value(j-1) == start && budget > 0 {
		j--
		budget--
	}
	var best Symbol
	have := false
	for ; j < t.Len() && t.Value(j) == start && budget > 0; j++ {
		s, ok := at(j)
		switch {
		case !ok:
		case !have:
			best, have = s, true
		case !betterSymbol(best, s):
			best = s
		}
	}
	if best.End == best.Start {
		for ; j < t.Len() && budget > 0; j++ {
			if s, ok := at(j); ok {
				best.End = s.Start
				break
			}
		}
	}
	if budget <= 0 {
		return Symbol{}, false, false
	}
	if addr >= best.Start && addr < best.End {
		return best, true, true
	}
	return Symbol{}, false, true
}

// Name is the name perf gives s (the map's Naming of its ELF name).
func (m *Map) Name(s Symbol) string { return m.naming.Of(s.Raw) }

// ByName lists the symbols q selects (perf's find_probe_functions), in
// address order, without making the whole map.
func (m *Map) ByName(q Query) []Symbol {
	match := q.matcher(m.naming)
	var out []Symbol
	if m.syms != nil {
		for _, s := range m.syms {
			if match(s) {
				out = append(out, s)
			}
		}
		return out
	}
	// Without the whole map: a zero-sized match ends where Find says
	// (the next symbol's start, as All extends it).
	m.Each(func(s Symbol) bool {
		if match(s) {
			if s.End == s.Start {
				if f, ok := m.Find(s.Start); ok && f.Start == s.Start {
					s.End = f.End
				}
			}
			out = append(out, s)
		}
		return true
	})
	return out
}

// Select lists the symbols of syms that q selects, in their order.
func (q Query) Select(n Naming, syms []Symbol) []Symbol {
	match := q.matcher(n)
	var out []Symbol
	for _, s := range syms {
		if match(s) {
			out = append(out, s)
		}
	}
	return out
}

// FirstByName is the first symbol in address order that q selects
// (perf's map__for_each_symbol_by_name, stopped at the first), found
// without making the whole map.
func (m *Map) FirstByName(q Query) (Symbol, bool) {
	match := q.matcher(m.naming)
	var found Symbol
	ok := false
	m.Each(func(s Symbol) bool {
		if match(s) {
			found, ok = s, true
		}
		return !ok
	})
	return found, ok
}

// IsMappingSymbol reports ARM ELF mapping symbols ($a, $d, $t, $x, and
// their ".suffix" forms), which perf drops: they mark code/data, not
// functions.
func IsMappingSymbol(m elf.Machine, n []byte) bool {
	return (m == elf.EM_AARCH64 || m == elf.EM_ARM) && len(n) >= 2 && n[0] == '$' &&
		strings.IndexByte("adtx", n[1]) >= 0 && (len(n) == 2 || n[2] == '.')
}
