package symbolize

import (
	"bufio"
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"sort"
	"strconv"
	"strings"
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
	syms []sym
	rows []row
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
	j := sort.Search(len(t.rows), func(j int) bool { return t.rows[j].addr > call }) - 1
	if j >= 0 && !t.rows[j].end && t.rows[j].line > 0 {
		p.File, p.Line = t.rows[j].file, t.rows[j].line
	}
	return p, true
}

// parseKallsyms reads /proc/kallsyms text ("ADDR TYPE NAME [MODULE]"),
// keeping text symbols; nil when it has none with an address (a reader
// without the right to see them gets zeros).
func parseKallsyms(text []byte) *table {
	t := &table{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || len(f[1]) != 1 || !strings.ContainsAny(f[1], "tTwW") {
			continue
		}
		a, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil || a == 0 {
			continue
		}
		s := sym{start: a, name: f[2]}
		if len(f) > 3 {
			s.module = strings.Trim(f[3], "[]")
		}
		t.syms = append(t.syms, s)
	}
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
		b.rows = lineRows(d)
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

// lineRows reads every unit's line table, sorted by address; file names
// are relative to the unit's directory when they lie under it.
func lineRows(d *dwarf.Data) []row {
	var rows []row
	r := d.Reader()
	for {
		cu, err := r.Next()
		if err != nil || cu == nil {
			break
		}
		if cu.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		r.SkipChildren()
		lr, err := d.LineReader(cu)
		if err != nil || lr == nil {
			continue
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
	}
	// A sequence's end and the next one's start may share an address:
	// the start wins.
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].addr != rows[j].addr {
			return rows[i].addr < rows[j].addr
		}
		return rows[i].end && !rows[j].end
	})
	return rows
}
