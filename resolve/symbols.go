package resolve

import (
	"bytes"
	"cmp"
	"debug/elf"
	"slices"
	"sort"
	"strings"

	"github.com/gprobe/gprobe/resolve/dwarfinfo"
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
type symbolMap struct {
	syms []symbol // sorted by start
}

func newSymbolMap(f *dwarfinfo.File) (*symbolMap, error) {
	sections := f.ELF.Sections
	out := make([]symbol, 0, f.SymbolCount())
	err := f.Symbols(func(s dwarfinfo.Symbol) {
		if len(s.RawName) == 0 || s.Sect == elf.SHN_UNDEF || s.Sect == elf.SHN_ABS || int(s.Sect) >= len(sections) {
			return
		}
		sec := sections[s.Sect]
		if sec.Flags&elf.SHF_ALLOC == 0 {
			return
		}
		switch s.Type {
		case elf.STT_FUNC, elf.STT_GNU_IFUNC, elf.STT_OBJECT:
		case elf.STT_NOTYPE:
			if sec.Flags&elf.SHF_EXECINSTR == 0 || s.Vis == elf.STV_HIDDEN || s.Vis == elf.STV_INTERNAL {
				return
			}
		default:
			return
		}
		n := s.RawName
		if isMappingSymbol(f.Machine, n) {
			return
		}
		out = append(out, symbol{raw: n, start: s.Value, end: s.Value + s.Size, typ: s.Type, bind: s.Bind,
			exec: sec.Flags&elf.SHF_EXECINSTR != 0})
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b symbol) int { return cmp.Compare(a.start, b.start) })
	// One symbol per start address.
	dedup := out[:0]
	for _, s := range out {
		if n := len(dedup); n > 0 && dedup[n-1].start == s.start {
			if !betterSymbol(dedup[n-1], s) {
				dedup[n-1] = s
			}
			continue
		}
		dedup = append(dedup, s)
	}
	for i := range dedup {
		if dedup[i].end == dedup[i].start && i+1 < len(dedup) {
			dedup[i].end = dedup[i+1].start
		}
	}
	return &symbolMap{syms: dedup}, nil
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
	i := sort.Search(len(m.syms), func(i int) bool { return m.syms[i].start > addr })
	if i == 0 {
		return symbol{}, false
	}
	s := m.syms[i-1]
	if addr >= s.start && addr < s.end {
		return s, true
	}
	return symbol{}, false
}

// byName lists the symbols whose name, with any @VERSION cut off unless
// the pattern has one, matches (perf's find_probe_functions), in address
// order; textOnly keeps only symbols of executable sections.
func (m *symbolMap) byName(match func([]byte) bool, cutVersion, textOnly bool) []symbol {
	var out []symbol
	for _, s := range m.syms {
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
