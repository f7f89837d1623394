package symtab

import (
	"cmp"
	"debug/elf"
	"iter"
	"math/bits"
	"slices"

	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// Tree reproduces the symbol map perf probe builds for a module file:
// every function, object and text/data label, aliases kept
// (symbol_conf.allow_aliases), in a red-black tree keyed by start address
// where equal starts go right. Which of several aliases (init_module and
// loop_init share an address) perf reports depends on the tree's shape, so
// the tree is rebuilt with the same insertion order and balancing, and
// searched the way perf's symbols__find walks it.
type Tree struct {
	nodes []rbNode
	root  int32
}

type rbNode struct {
	sym                 Symbol
	left, right, parent int32
	red                 bool
}

const rbNil = -1

// NewTree loads f's symbols in table order as perf's
// dso__load_sym does for a file that is not a kernel image. With
// fileOffsets, symbols are placed as perf places them (st_value plus the
// section's file offset) rather than in gprobe's section layout.
func NewTree(f *dwarfinfo.File, fileOffsets bool) (*Tree, error) {
	// Sized once: grown by appending, libjvm's 58,000 nodes would leave
	// their outgrown copies behind (7 MB).
	t := &Tree{root: rbNil, nodes: make([]rbNode, 0, f.SymbolCount())}
	if err := moduleSymbols(f, fileOffsets, t.insert); err != nil {
		return nil, err
	}
	t.fixupEnd()
	return t, nil
}

// NameMap is NewTree(f, false).Map(n) without the tree: the symbols in
// table order, sorted by start keeping that order among equal starts (the
// tree's in-order walk: an equal start goes right of those before it),
// their ends fixed up as the tree's are. A user binary's lookup by name
// needs no more, and libjvm's tree is 3.7 MB.
func NameMap(f *dwarfinfo.File, n Naming) (*Map, error) {
	syms := make([]Symbol, 0, f.SymbolCount())
	if err := moduleSymbols(f, false, func(s Symbol) { syms = append(syms, s) }); err != nil {
		return nil, err
	}
	sortByStart(syms)
	fixupEnds(func(yield func(*Symbol) bool) {
		for i := range syms {
			if !yield(&syms[i]) {
				return
			}
		}
	})
	return &Map{syms: syms, naming: n}, nil
}

// sortByStart sorts syms by start, equal starts kept in their order. A
// stable sort of the symbols themselves moves 64-byte values O(n log² n)
// times (0.4 ms of python3.11's 2,200 dynamic symbols). Here each
// symbol's start (less the lowest) and index are packed into one integer,
// those are sorted, and the symbols moved once into that order; where the
// starts span too much to pack, indexes are sorted with ties broken by
// index. Both give the stable order.
func sortByStart(syms []Symbol) {
	if len(syms) < 2 {
		return
	}
	lo, hi, sorted := syms[0].Start, syms[0].Start, true
	for i := 1; i < len(syms); i++ {
		s := syms[i].Start
		lo, hi = min(lo, s), max(hi, s)
		sorted = sorted && s >= syms[i-1].Start
	}
	if sorted {
		return
	}
	from := make([]uint64, len(syms)) // symbol i of the result is syms[from[i]]
	if idxBits := bits.Len(uint(len(syms) - 1)); bits.Len64(hi-lo)+idxBits <= 64 {
		for i := range syms {
			from[i] = (syms[i].Start-lo)<<idxBits | uint64(i)
		}
		slices.Sort(from)
		for i := range from {
			from[i] &= 1<<idxBits - 1
		}
	} else {
		for i := range from {
			from[i] = uint64(i)
		}
		slices.SortFunc(from, func(a, b uint64) int {
			if c := cmp.Compare(syms[a].Start, syms[b].Start); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
	}
	permute(syms, from)
}

// permute rearranges syms so that syms[i] becomes what syms[from[i]] was,
// following each cycle of the permutation; from is used up (its entries
// marked done).
func permute(syms []Symbol, from []uint64) {
	const done = 1 << 63
	for i := range from {
		if from[i]&done != 0 {
			continue
		}
		first := syms[i]
		j := i
		for {
			k := int(from[j])
			from[j] |= done
			if k == i {
				syms[j] = first
				break
			}
			syms[j] = syms[k]
			j = k
		}
	}
}

// moduleSymbols calls fn with the symbols of f's map (InModuleMap), in
// table order, placed as NewTree says.
func moduleSymbols(f *dwarfinfo.File, fileOffsets bool, fn func(Symbol)) error {
	return f.Symbols(func(s dwarfinfo.Symbol) {
		sec, ok := InModuleMap(f, s)
		if !ok {
			return
		}
		start := s.Value
		if fileOffsets {
			base, _ := f.SectionAddr(sec.Name)
			start = start - base + sec.Offset
		}
		fn(Symbol{Raw: s.RawName, Start: start, End: start + s.Size, Type: s.Type, Bind: s.Bind,
			Exec: sec.Flags&elf.SHF_EXECINSTR != 0})
	})
}

// Find is perf's symbols__find.
func (t *Tree) Find(addr uint64) (Symbol, bool) {
	n := t.root
	for n != rbNil {
		s := &t.nodes[n].sym
		switch {
		case addr < s.Start:
			n = t.nodes[n].left
		case addr > s.End || addr == s.End && addr != s.Start:
			n = t.nodes[n].right
		default:
			return *s, true
		}
	}
	return Symbol{}, false
}

// fixupEnd is perf's symbols__fixup_end over the tree (fixupEnds).
func (t *Tree) fixupEnd() {
	fixupEnds(func(yield func(*Symbol) bool) {
		t.inorder(t.root, func(i int32) { yield(&t.nodes[i].sym) })
	})
}

// fixupEnds is perf's symbols__fixup_end over symbols in address order:
// zero-sized symbols end where the next one starts; a last zero-sized one
// at the next page.
func fixupEnds(syms iter.Seq[*Symbol]) {
	var prev *Symbol
	for s := range syms {
		if prev != nil && prev.End == prev.Start {
			prev.End = s.Start
		}
		prev = s
	}
	if prev != nil && prev.End == prev.Start {
		prev.End = (prev.Start+4095)&^4095 + 4096
	}
}

func (t *Tree) inorder(n int32, fn func(int32)) {
	// Iterative: a module's Symbol tree is shallow, but keep the stack
	// bounded regardless.
	var stack []int32
	for n != rbNil || len(stack) > 0 {
		for n != rbNil {
			stack = append(stack, n)
			n = t.nodes[n].left
		}
		n = stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		fn(n)
		n = t.nodes[n].right
	}
}

// insert is perf's __symbols__insert followed by the kernel's
// rb_insert_color.
func (t *Tree) insert(s Symbol) {
	z := int32(len(t.nodes))
	t.nodes = append(t.nodes, rbNode{sym: s, left: rbNil, right: rbNil, parent: rbNil, red: true})
	y, x := int32(rbNil), t.root
	for x != rbNil {
		y = x
		if s.Start < t.nodes[x].sym.Start {
			x = t.nodes[x].left
		} else {
			x = t.nodes[x].right
		}
	}
	t.nodes[z].parent = y
	switch {
	case y == rbNil:
		t.root = z
	case s.Start < t.nodes[y].sym.Start:
		t.nodes[y].left = z
	default:
		t.nodes[y].right = z
	}
	t.fixInsert(z)
}

func (t *Tree) fixInsert(z int32) {
	n := t.nodes
	for {
		p := n[z].parent
		if p == rbNil {
			n[z].red = false
			return
		}
		if !n[p].red {
			return
		}
		g := n[p].parent
		if p == n[g].left {
			u := n[g].right
			if u != rbNil && n[u].red {
				n[p].red, n[u].red, n[g].red = false, false, true
				z = g
				continue
			}
			if z == n[p].right {
				t.rotateLeft(p)
				z, p = p, z
			}
			n[p].red, n[g].red = false, true
			t.rotateRight(g)
			return
		}
		u := n[g].left
		if u != rbNil && n[u].red {
			n[p].red, n[u].red, n[g].red = false, false, true
			z = g
			continue
		}
		if z == n[p].left {
			t.rotateRight(p)
			z, p = p, z
		}
		n[p].red, n[g].red = false, true
		t.rotateLeft(g)
		return
	}
}

func (t *Tree) rotateLeft(x int32) {
	n := t.nodes
	y := n[x].right
	n[x].right = n[y].left
	if n[y].left != rbNil {
		n[n[y].left].parent = x
	}
	t.replaceChild(x, y)
	n[y].left = x
	n[x].parent = y
}

func (t *Tree) rotateRight(x int32) {
	n := t.nodes
	y := n[x].left
	n[x].left = n[y].right
	if n[y].right != rbNil {
		n[n[y].right].parent = x
	}
	t.replaceChild(x, y)
	n[y].right = x
	n[x].parent = y
}

// replaceChild puts y where x hangs from x's parent.
func (t *Tree) replaceChild(x, y int32) {
	n := t.nodes
	p := n[x].parent
	n[y].parent = p
	switch {
	case p == rbNil:
		t.root = y
	case n[p].left == x:
		n[p].left = y
	default:
		n[p].right = y
	}
}

// Map is the tree's symbols in address order (aliases in table order), the
// map perf searches by name, its symbols named as n says.
func (t *Tree) Map(n Naming) *Map {
	m := &Map{syms: make([]Symbol, 0, len(t.nodes)), naming: n}
	t.inorder(t.root, func(i int32) { m.syms = append(m.syms, t.nodes[i].sym) })
	return m
}

// Finder finds the symbol holding an address: a Map, a Tree, or PerfSpace's
// view of a module.
type Finder interface {
	Find(addr uint64) (Symbol, bool)
}

// PerfSpace looks layout addresses of the module f up the way perf 6.1's
// post_process_module_probe_trace_events does (a mistake tests make gprobe
// repeat, see internal/perfbug): the DWARF address minus .text's (layout
// address - file offset), in a map of file-offset symbols. Where a module's
// sections are not laid out in the file as libdwfl lays them out, that
// names the wrong symbol.
func PerfSpace(f *dwarfinfo.File) (Finder, error) {
	t, err := NewTree(f, true)
	if err != nil {
		return nil, err
	}
	text, _ := f.SectionAddr(".text")
	if s := f.ELF.Section(".text"); s != nil {
		text -= s.Offset
	}
	return perfSpaceSymbols{t: t, textOffs: text}, nil
}

type perfSpaceSymbols struct {
	t        *Tree
	textOffs uint64
}

func (p perfSpaceSymbols) Find(addr uint64) (Symbol, bool) {
	s, ok := p.t.Find(addr - p.textOffs)
	s.Start += p.textOffs
	s.End += p.textOffs
	return s, ok
}

// PLTNames are the names perf 6.1's dso__synthesize_plt_symbols
// gives a user DSO's PLT entries: "<name>@plt" for each relocation of
// .rela.plt (or .rel.plt), in order, named by the .dynsym entry it refers
// to (an IRELATIVE relocation refers to none and gives "@plt"). perf
// synthesizes nothing without a .dynsym, a .plt, or when the relocation
// section is not linked to the .dynsym.
func PLTNames(f *dwarfinfo.File) []string {
	var out []string
	for _, s := range PLTSymbols(f) {
		out = append(out, string(s.Raw))
	}
	return out
}

// PLTSymbols are the symbols perf 6.1's dso__synthesize_plt_symbols adds
// to a user DSO's map, at the addresses perf gives them: the relocations
// of .rela.plt (or .rel.plt) in order, the first after .plt's header, one
// entry each, sized as perf sizes them for the machine (.plt's entry size
// where perf has no table: x86). perf's names probes on them by the name
// before "@plt" (find_probe_functions cuts at the '@'), so `-x lib -D
// strlen` probes strlen@plt in a library that only calls strlen.
func PLTSymbols(f *dwarfinfo.File) []Symbol {
	f = f.Runtime()
	ef := f.ELF
	rel := ef.Section(".rela.plt")
	if rel == nil {
		rel = ef.Section(".rel.plt")
	}
	plt := ef.Section(".plt")
	if rel == nil || rel.Type != elf.SHT_RELA && rel.Type != elf.SHT_REL || plt == nil {
		return nil
	}
	dynsymIdx := -1
	for i, s := range ef.Sections {
		if s.Type == elf.SHT_DYNSYM {
			dynsymIdx = i
			break
		}
	}
	if dynsymIdx < 0 || rel.Link != uint32(dynsymIdx) || rel.Entsize == 0 {
		return nil
	}
	data := f.Section(rel.Name)
	if data == nil {
		return nil
	}
	header, entry := pltSizes(ef.Machine, plt)
	addr := plt.Addr + header
	var out []Symbol
	for off := uint64(0); off+rel.Entsize <= uint64(len(data)); off += rel.Entsize {
		var sym uint32
		switch {
		case ef.Class == elf.ELFCLASS64:
			sym = elf.R_SYM64(ef.ByteOrder.Uint64(data[off+8:]))
		default:
			sym = elf.R_SYM32(ef.ByteOrder.Uint32(data[off+4:]))
		}
		var name []byte
		if s, ok := f.DynamicSymbol(int(sym)); ok && sym > 0 {
			name = s.RawName
		}
		raw := make([]byte, 0, len(name)+4)
		raw = append(append(raw, name...), "@plt"...)
		out = append(out, Symbol{Raw: raw, Start: addr, End: addr + entry, Type: elf.STT_FUNC,
			Bind: elf.STB_GLOBAL, Exec: true})
		addr += entry
	}
	return out
}

// pltSizes are perf 6.1's PLT header and entry sizes for a machine.
func pltSizes(m elf.Machine, plt *elf.Section) (header, entry uint64) {
	switch m {
	case elf.EM_ARM:
		return 20, 12
	case elf.EM_AARCH64:
		return 32, 16
	case elf.EM_SPARC:
		return 48, 12
	case elf.EM_SPARCV9:
		return 128, 32
	}
	return plt.Entsize, plt.Entsize
}
