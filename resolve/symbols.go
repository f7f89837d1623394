package resolve

import (
	"bytes"
	"debug/elf"
	"sort"
	"strings"

	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// symbol is one entry of perf's symbol map for a DSO.
type symbol struct {
	raw        []byte // aliases the mapped file
	exec       bool   // in an executable section
	start, end uint64 // [start, end)
	typ        elf.SymType
	bind       elf.SymBind
}

// name copies the symbol's name.
func (s symbol) name() string { return string(s.raw) }

// symbolMap reproduces the symbol table perf builds for a DSO
// (symbol-elf.c dso__load_sym): named functions and objects plus labels in
// executable sections, one symbol per start address (choose_best_symbol),
// zero-sized symbols extended to the next one (symbols__fixup_end).
//
// Built from an image (newSymbolMap), it answers find from the image's
// address-ordered symbol table, looking only at the entries around the
// address; the whole map (syms) is made only for walks over every symbol
// (all). A module's map is given whole.
type symbolMap struct {
	sorted   *dwarfinfo.SortedSymbols // nil for a map given whole
	sections []*elf.Section
	machine  elf.Machine
	syms     []symbol // sorted by start; nil until all()
}

func newSymbolMap(f *dwarfinfo.File) (*symbolMap, error) {
	sorted, err := f.SortedSymbols()
	if err != nil {
		return nil, err
	}
	m := &symbolMap{sorted: sorted, sections: f.ELF.Sections, machine: f.Machine}
	if sorted == nil {
		m.syms = []symbol{}
	}
	return m, nil
}

// keep converts an entry of the symbol table into a map symbol, or says
// perf leaves it out.
func (m *symbolMap) keep(s dwarfinfo.Symbol) (symbol, bool) {
	if len(s.RawName) == 0 || s.Sect == elf.SHN_UNDEF || s.Sect == elf.SHN_ABS || int(s.Sect) >= len(m.sections) {
		return symbol{}, false
	}
	sec := m.sections[s.Sect]
	if sec.Flags&elf.SHF_ALLOC == 0 {
		return symbol{}, false
	}
	switch s.Type {
	case elf.STT_FUNC, elf.STT_GNU_IFUNC, elf.STT_OBJECT:
	case elf.STT_NOTYPE:
		if sec.Flags&elf.SHF_EXECINSTR == 0 || s.Vis == elf.STV_HIDDEN || s.Vis == elf.STV_INTERNAL {
			return symbol{}, false
		}
	default:
		return symbol{}, false
	}
	if isMappingSymbol(m.machine, s.RawName) {
		return symbol{}, false
	}
	return symbol{raw: s.RawName, start: s.Value, end: s.Value + s.Size, typ: s.Type, bind: s.Bind,
		exec: sec.Flags&elf.SHF_EXECINSTR != 0}, true
}

// all returns every symbol of the map, sorted by start.
func (m *symbolMap) all() []symbol {
	if m.syms != nil {
		return m.syms
	}
	out := make([]symbol, 0, m.sorted.Len())
	m.each(func(s symbol) bool {
		out = append(out, s)
		return true
	})
	for i := range out {
		if out[i].end == out[i].start && i+1 < len(out) {
			out[i].end = out[i+1].start
		}
	}
	m.syms = out
	return m.syms
}

// each calls fn with the map's symbols in address order, one per start
// address, until fn returns false, without making the whole map; a
// zero-sized symbol's end is left as it is (all extends it).
func (m *symbolMap) each(fn func(symbol) bool) {
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
	var cur symbol
	have := false
	for i := 0; i < m.sorted.Len(); i++ {
		s, ok := m.keep(m.sorted.At(i))
		if !ok {
			continue
		}
		if have && cur.start == s.start {
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
func betterSymbol(a, b symbol) bool {
	la, lb := a.end-a.start, b.end-b.start
	if lb == 0 && la > 0 {
		return true
	}
	if la == 0 && lb > 0 {
		return false
	}
	wa, wb := a.bind == elf.STB_WEAK, b.bind == elf.STB_WEAK
	if wb && !wa {
		return true
	}
	if wa && !wb {
		return false
	}
	ga, gb := a.bind == elf.STB_GLOBAL, b.bind == elf.STB_GLOBAL
	if ga && !gb {
		return true
	}
	if gb && !ga {
		return false
	}
	ua, ub := underscores(a.raw), underscores(b.raw)
	if ub > ua {
		return true
	}
	if ua > ub {
		return false
	}
	return len(a.raw) >= len(b.raw)
}

func underscores(s []byte) int {
	n := 0
	for n < len(s) && s[n] == '_' {
		n++
	}
	return n
}

// find returns the symbol containing addr (perf's map__find_symbol).
func (m *symbolMap) find(addr uint64) (symbol, bool) {
	if m.syms == nil {
		if s, ok, done := m.findSorted(addr); done {
			return s, ok
		}
	}
	syms := m.all()
	i := sort.Search(len(syms), func(i int) bool { return syms[i].start > addr })
	if i == 0 {
		return symbol{}, false
	}
	s := syms[i-1]
	if addr >= s.start && addr < s.end {
		return s, true
	}
	return symbol{}, false
}

// findSorted is find without the whole map: the symbols perf keeps that
// start at the greatest start address at or below addr, folded into one
// as all() does, and extended to the next start when zero-sized. It gives
// up (done false) when that means looking at more than a few dozen
// entries, which the whole map does better.
func (m *symbolMap) findSorted(addr uint64) (s symbol, ok, done bool) {
	t := m.sorted
	budget := 64
	at := func(i int) (symbol, bool) {
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
		return symbol{}, false, true
	}
	start := t.Value(j)
	for j > 0 && t.Value(j-1) == start && budget > 0 {
		j--
		budget--
	}
	var best symbol
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
	if best.end == best.start {
		for ; j < t.Len() && budget > 0; j++ {
			if s, ok := at(j); ok {
				best.end = s.start
				break
			}
		}
	}
	if budget <= 0 {
		return symbol{}, false, false
	}
	if addr >= best.start && addr < best.end {
		return best, true, true
	}
	return symbol{}, false, true
}

// byName lists the symbols whose name, with any @VERSION cut off unless
// the pattern has one, matches (perf's find_probe_functions), in address
// order; textOnly keeps only symbols of executable sections.
func (m *symbolMap) byName(match func([]byte) bool, cutVersion, textOnly bool) []symbol {
	var out []symbol
	for _, s := range m.all() {
		if textOnly && !s.exec {
			continue
		}
		n := s.raw
		if cutVersion {
			if i := bytes.IndexByte(n, '@'); i >= 0 {
				n = n[:i]
			}
		}
		if match(n) {
			out = append(out, s)
		}
	}
	return out
}

// isMappingSymbol reports ARM ELF mapping symbols ($a, $d, $t, $x, and
// their ".suffix" forms), which perf drops: they mark code/data, not
// functions.
func isMappingSymbol(m elf.Machine, n []byte) bool {
	return (m == elf.EM_AARCH64 || m == elf.EM_ARM) && len(n) >= 2 && n[0] == '$' &&
		strings.IndexByte("adtx", n[1]) >= 0 && (len(n) == 2 || n[2] == '.')
}
