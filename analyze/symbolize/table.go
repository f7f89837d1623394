package symbolize

import (
	"debug/dwarf"
	"debug/elf"
	"sort"

	"github.com/gprobe/gprobe/internal/kallsyms"
)

// sym is one function: [start, end) (end 0: up to the next symbol).
type sym struct {
	start, end uint64
	name       string
	module     string
}

// row is a line-table row: the code from addr on is at file:line, up to
// the next row; end marks the end of a sequence.
type row struct {
	addr uint64
	file string
	line int
	end  bool
}

// table is a sorted symbol table with an optional line table.
type table struct {
	syms  []sym
	lines *lineIndex
}

// maxLastSym bounds how far past the last symbol an address is still
// taken to lie in it (kallsyms gives no sizes).
const maxLastSym = 1 << 16

// lookup places pc, a return address: the call before it is at pc-1.
func (t *table) lookup(pc uint64) (Place, bool) {
	if t == nil || pc == 0 {
		return Place{}, false
	}
	call := pc - 1
	i := sort.Search(len(t.syms), func(i int) bool { return t.syms[i].start > call }) - 1
	if i < 0 {
		return Place{}, false
	}
	s := t.syms[i]
	switch {
	case s.end != 0 && call >= s.end:
		return Place{}, false
	case s.end == 0 && i+1 == len(t.syms) && call-s.start >= maxLastSym:
		return Place{}, false
	}
	p := Place{Function: s.name, Offset: pc - s.start, Module: s.module}
	if r, ok := t.lines.row(call); ok {
		p.File, p.Line = r.file, r.line
	}
	return p, true
}

// parseKallsyms reads /proc/kallsyms text ("ADDR TYPE NAME [MODULE]"),
// keeping text symbols; nil when it has none with an address (a reader
// without the right to see them gets zeros).
func parseKallsyms(text []byte) *table {
	t := &table{}
	kallsyms.Each(text, func(k kallsyms.Symbol) bool {
		switch k.Type {
		case 't', 'T', 'w', 'W':
			if k.Addr != 0 {
				t.syms = append(t.syms, sym{start: k.Addr, name: k.Name, module: k.Module})
			}
		}
		return true
	})
	if len(t.syms) == 0 {
		return nil
	}
	sort.SliceStable(t.syms, func(i, j int) bool { return t.syms[i].start < t.syms[j].start })
	return t
}

// binary is a user-space ELF file's functions and lines.
type binary struct {
	table
	loads []elf.ProgHeader // PT_LOAD segments
}

// openBinary reads path's function symbols (.symtab, else .dynsym) and,
// when it has DWARF, its line table.
func openBinary(path string) (*binary, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := &binary{}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			b.loads = append(b.loads, p.ProgHeader)
		}
	}
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, _ = f.DynamicSymbols()
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			b.syms = append(b.syms, sym{start: s.Value, end: s.Value + max(s.Size, 1), name: s.Name})
		}
	}
	sort.SliceStable(b.syms, func(i, j int) bool { return b.syms[i].start < b.syms[j].start })
	if d, err := f.DWARF(); err == nil {
		b.lines = newLineIndex(d)
	}
	return b, nil
}

// vaddr is the address the file offset off is loaded at (before the
// load bias).
func (b *binary) vaddr(off uint64) (uint64, bool) {
	for _, p := range b.loads {
		if off >= p.Off && off < p.Off+p.Filesz {
			return off - p.Off + p.Vaddr, true
		}
	}
	return 0, false
}

// lineIndex finds the line of an address, reading a unit's line table
// the first time an address in the unit is asked for: a program's whole
// line table (788,000 rows for gprobe's own binary) took a second to read
// and sort, and a report asks about a few call sites.
type lineIndex struct {
	d      *dwarf.Data
	ranges []unitRange // sorted by lo
	units  []lineUnit
	// rangeless are the units that give no address ranges, read together
	// when no range holds an address.
	rangeless []int
	loose     []row
	looseRead bool
}

type unitRange struct {
	lo, hi uint64
	unit   int
}

type lineUnit struct {
	cu   *dwarf.Entry
	rows []row // sorted by address, once read
	read bool
}

func newLineIndex(d *dwarf.Data) *lineIndex {
	x := &lineIndex{d: d}
	for _, cu := range compileUnits(d) {
		u := len(x.units)
		x.units = append(x.units, lineUnit{cu: cu})
		rs, err := d.Ranges(cu)
		if err != nil || len(rs) == 0 {
			x.rangeless = append(x.rangeless, u)
			continue
		}
		for _, rg := range rs {
			if rg[1] > rg[0] {
				x.ranges = append(x.ranges, unitRange{rg[0], rg[1], u})
			}
		}
	}
	sort.SliceStable(x.ranges, func(i, j int) bool { return x.ranges[i].lo < x.ranges[j].lo })
	return x
}

// compileUnits lists d's compile units (their entries, children
// skipped); a damaged unit ends the list.
func compileUnits(d *dwarf.Data) []*dwarf.Entry {
	var cus []*dwarf.Entry
	r := d.Reader()
	for {
		cu, err := r.Next()
		if err != nil || cu == nil {
			return cus
		}
		r.SkipChildren()
		if cu.Tag == dwarf.TagCompileUnit {
			cus = append(cus, cu)
		}
	}
}

// row is the line-table row that holds addr, if any.
func (x *lineIndex) row(addr uint64) (row, bool) {
	if x == nil {
		return row{}, false
	}
	// Ranges may nest or overlap: every range starting at or below addr
	// is a candidate, nearest first.
	for i := sort.Search(len(x.ranges), func(i int) bool { return x.ranges[i].lo > addr }) - 1; i >= 0; i-- {
		rg := x.ranges[i]
		if addr >= rg.hi {
			continue
		}
		u := &x.units[rg.unit]
		if !u.read {
			u.rows, u.read = unitRows(x.d, u.cu, nil), true
			sortRows(u.rows)
		}
		if r, ok := rowAt(u.rows, addr); ok {
			return r, true
		}
	}
	if !x.looseRead {
		for _, u := range x.rangeless {
			x.loose = unitRows(x.d, x.units[u].cu, x.loose)
		}
		sortRows(x.loose)
		x.looseRead = true
	}
	return rowAt(x.loose, addr)
}

// rowAt is the row of sorted rows that holds addr: the last at or below
// it, unless that one ends a sequence.
func rowAt(rows []row, addr uint64) (row, bool) {
	j := sort.Search(len(rows), func(j int) bool { return rows[j].addr > addr }) - 1
	if j >= 0 && !rows[j].end && rows[j].line > 0 {
		return rows[j], true
	}
	return row{}, false
}

// unitRows appends the rows of cu's line table; file names are relative
// to the unit's directory when they lie under it.
func unitRows(d *dwarf.Data, cu *dwarf.Entry, rows []row) []row {
	lr, err := d.LineReader(cu)
	if err != nil || lr == nil {
		return rows
	}
	dir, _ := cu.Val(dwarf.AttrCompDir).(string)
	var le dwarf.LineEntry
	for {
		if err := lr.Next(&le); err != nil {
			break // io.EOF, or a damaged table: keep the rows read
		}
		name := ""
		if le.File != nil {
			name = trimDir(le.File.Name, dir)
		}
		rows = append(rows, row{addr: le.Address, file: name, line: le.Line, end: le.EndSequence})
	}
	return rows
}

// sortRows orders rows by address. A sequence's end and the next one's
// start may share an address: the start wins.
func sortRows(rows []row) {
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].addr != rows[j].addr {
			return rows[i].addr < rows[j].addr
		}
		return rows[i].end && !rows[j].end
	})
}
