package lines

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrBadLineTable is wrapped by every error about a malformed line program.
var ErrBadLineTable = errors.New("malformed DWARF line table")

// Sections are the raw DWARF sections a line program may refer to.
type Sections struct {
	Line    []byte // .debug_line
	Str     []byte // .debug_str (DW_FORM_strp in DWARF 5 file tables)
	LineStr []byte // .debug_line_str
	Order   binary.ByteOrder
}

// Table is a decoded line program.
type Table struct {
	Version int
	// Files are the file names as libdw builds them: an absolute name as
	// is, otherwise directory + "/" + name without cleaning. For DWARF < 5,
	// Files[0] is "???" (no file 0); for DWARF 5 it is the primary file.
	Files []string
	// Rows are the rows in line-program order (not sorted).
	Rows []Row
}

// ReadTable decodes the line program at offset off of s.Line. compDir is the
// CU's DW_AT_comp_dir ("" if absent), used as directory 0 before DWARF 5,
// and addrSize the CU's address size.
func ReadTable(s Sections, off uint64, compDir string, addrSize int) (*Table, error) {
	return readTable(s, off, compDir, addrSize, true)
}

func readTable(s Sections, off uint64, compDir string, addrSize int, rows bool) (t *Table, err error) {
	if off >= uint64(len(s.Line)) {
		return nil, fmt.Errorf("%w: offset %#x beyond section end", ErrBadLineTable, off)
	}
	b := &buf{data: s.Line, pos: int(off), order: s.Order}
	defer func() {
		if b.err != nil && err == nil {
			t, err = nil, fmt.Errorf("%w at %#x: %v", ErrBadLineTable, off, b.err)
		}
	}()
	unitLen, dwarf64 := b.initialLength()
	if b.err != nil {
		return nil, nil
	}
	end := b.pos + int(unitLen)
	if unitLen > uint64(len(s.Line)-b.pos) {
		return nil, fmt.Errorf("%w at %#x: unit length %d past section end", ErrBadLineTable, off, unitLen)
	}
	b.data = b.data[:end]
	t = &Table{Version: int(b.u16())}
	if t.Version < 2 || t.Version > 5 {
		return nil, fmt.Errorf("%w at %#x: unsupported version %d", ErrBadLineTable, off, t.Version)
	}
	if t.Version >= 5 {
		addrSize = int(b.u8())
		b.u8() // segment selector size
	}
	var hdrLen uint64
	if dwarf64 {
		hdrLen = b.u64()
	} else {
		hdrLen = uint64(b.u32())
	}
	progStart := b.pos + int(hdrLen)
	if hdrLen > uint64(end-b.pos) {
		return nil, fmt.Errorf("%w at %#x: header length past unit end", ErrBadLineTable, off)
	}
	minInsn := int(b.u8())
	maxOps := 1
	if t.Version >= 4 {
		maxOps = int(b.u8())
	}
	defaultStmt := b.u8() != 0
	lineBase := int(int8(b.u8()))
	lineRange := int(b.u8())
	opcodeBase := int(b.u8())
	if b.err != nil {
		return nil, nil
	}
	if lineRange == 0 || maxOps == 0 || opcodeBase == 0 {
		return nil, fmt.Errorf("%w at %#x: line_range, max_ops and opcode_base must be non-zero", ErrBadLineTable, off)
	}
	stdLens := make([]int, opcodeBase)
	for i := 1; i < opcodeBase; i++ {
		stdLens[i] = int(b.u8())
	}

	if t.Version < 5 {
		dirs := []string{compDir}
		for b.err == nil && b.pos < progStart && b.peek() != 0 {
			dirs = append(dirs, b.cstring())
		}
		b.u8()
		t.Files = []string{"???"}
		for b.err == nil && b.pos < progStart && b.peek() != 0 {
			name := b.cstring()
			dir := b.uleb()
			b.uleb() // mtime
			b.uleb() // length
			if dir >= uint64(len(dirs)) {
				return nil, fmt.Errorf("%w at %#x: directory index %d out of range", ErrBadLineTable, off, dir)
			}
			t.Files = append(t.Files, joinLibdw(dirs[dir], name, dirs[dir] == "" && dir == 0 && compDir == ""))
		}
	} else {
		ctx := entryCtx{b: b, s: s, dwarf64: dwarf64}
		dirs, err := ctx.entries(func(path string, _ uint64) string { return path })
		if err != nil {
			return nil, fmt.Errorf("%w at %#x: %v", ErrBadLineTable, off, err)
		}
		files, err := ctx.entries(func(path string, dir uint64) string {
			if dir >= uint64(len(dirs)) {
				ctx.err = fmt.Errorf("directory index %d out of range", dir)
				return ""
			}
			return joinLibdw(dirs[dir], path, false)
		})
		if err != nil {
			return nil, fmt.Errorf("%w at %#x: %v", ErrBadLineTable, off, err)
		}
		t.Files = files
		if len(t.Files) == 0 {
			t.Files = []string{"???"}
		}
	}
	if b.err != nil {
		return nil, nil
	}
	if !rows {
		return t, nil
	}
	b.pos = progStart
	t.Rows = runProgram(b, end, addrSize, minInsn, maxOps, defaultStmt, lineBase, lineRange, opcodeBase, stdLens, t.Version)
	return t, nil
}

// joinLibdw builds a file name the way libdw's read_srclines does.
// noDir means DWARF < 5 directory 0 with no DW_AT_comp_dir: the name stays
// relative.
func joinLibdw(dir, name string, noDir bool) string {
	if len(name) > 0 && name[0] == '/' {
		return name
	}
	if noDir {
		return name
	}
	return dir + "/" + name
}

// Line number program opcodes (DWARF 5 section 6.2.5).
const (
	lnsCopy             = 1
	lnsAdvancePC        = 2
	lnsAdvanceLine      = 3
	lnsSetFile          = 4
	lnsSetColumn        = 5
	lnsNegateStmt       = 6
	lnsSetBasicBlock    = 7
	lnsConstAddPC       = 8
	lnsFixedAdvancePC   = 9
	lnsSetPrologueEnd   = 10
	lnsSetEpilogueBegin = 11
	lnsSetISA           = 12

	lneEndSequence      = 1
	lneSetAddress       = 2
	lneDefineFile       = 3
	lneSetDiscriminator = 4
)

func runProgram(b *buf, end, addrSize, minInsn, maxOps int, defaultStmt bool, lineBase, lineRange, opcodeBase int, stdLens []int, version int) []Row {
	var rows []Row
	var addr uint64
	var opIndex int
	file, line, stmt := 1, 1, defaultStmt
	prologueEnd := false
	reset := func() {
		addr, opIndex, file, line, stmt = 0, 0, 1, 1, defaultStmt
	}
	advance := func(opAdv uint64) {
		addr += uint64(minInsn) * ((uint64(opIndex) + opAdv) / uint64(maxOps))
		opIndex = int((uint64(opIndex) + opAdv) % uint64(maxOps))
	}
	emit := func(endSeq bool) {
		rows = append(rows, Row{Addr: addr, File: file, Line: line, IsStmt: stmt, EndSeq: endSeq, PrologueEnd: prologueEnd})
		prologueEnd = false
	}
	for b.err == nil && b.pos < end {
		op := int(b.u8())
		switch {
		case op >= opcodeBase:
			adj := op - opcodeBase
			advance(uint64(adj / lineRange))
			line += lineBase + adj%lineRange
			emit(false)
		case op == 0:
			n := b.uleb()
			if n == 0 || n > uint64(end-b.pos) {
				b.err = fmt.Errorf("bad extended opcode length %d", n)
				break
			}
			next := b.pos + int(n)
			switch b.u8() {
			case lneEndSequence:
				emit(true)
				reset()
			case lneSetAddress:
				switch n - 1 {
				case 8:
					addr = b.u64()
				case 4:
					addr = uint64(b.u32())
				default:
					addr = b.uintN(int(n - 1))
				}
				opIndex = 0
			case lneDefineFile, lneSetDiscriminator:
			}
			b.pos = next
		case op == lnsCopy:
			emit(false)
		case op == lnsAdvancePC:
			advance(b.uleb())
		case op == lnsAdvanceLine:
			line += int(b.sleb())
		case op == lnsSetFile:
			file = int(b.uleb())
		case op == lnsSetColumn:
			b.uleb()
		case op == lnsNegateStmt:
			stmt = !stmt
		case op == lnsSetPrologueEnd:
			prologueEnd = true
		case op == lnsSetBasicBlock, op == lnsSetEpilogueBegin:
		case op == lnsConstAddPC:
			advance(uint64((255 - opcodeBase) / lineRange))
		case op == lnsFixedAdvancePC:
			addr += uint64(b.u16())
			opIndex = 0
		case op == lnsSetISA:
			b.uleb()
		default:
			// Unknown standard opcode: skip its ULEB operands.
			for i := 0; i < stdLens[op]; i++ {
				b.uleb()
			}
		}
	}
	_ = addrSize
	_ = version
	return rows
}

// entryCtx decodes DWARF 5 directory and file entry formats.
type entryCtx struct {
	b       *buf
	s       Sections
	dwarf64 bool
	err     error
}

// DWARF forms that may appear in line table entry formats.
const (
	formBlock2    = 0x03
	formBlock4    = 0x04
	formData2     = 0x05
	formData4     = 0x06
	formData8     = 0x07
	formString    = 0x08
	formBlock     = 0x09
	formBlock1    = 0x0a
	formData1     = 0x0b
	formSdata     = 0x0d
	formStrp      = 0x0e
	formUdata     = 0x0f
	formData16    = 0x1e
	formLineStrp  = 0x1f
	formStrx      = 0x1a
	formStrx1     = 0x25
	formStrx2     = 0x26
	formStrx3     = 0x27
	formStrx4     = 0x28
	lnctPath      = 1
	lnctDirIndex  = 2
	lnctTimestamp = 3
	lnctSize      = 4
	lnctMD5       = 5
)

func (c *entryCtx) entries(build func(path string, dir uint64) string) ([]string, error) {
	b := c.b
	nfmt := int(b.u8())
	type pair struct{ content, form uint64 }
	fmts := make([]pair, nfmt)
	for i := range fmts {
		fmts[i] = pair{b.uleb(), b.uleb()}
	}
	count := b.uleb()
	if b.err != nil {
		return nil, b.err
	}
	if count > uint64(len(b.data)) {
		return nil, fmt.Errorf("entry count %d too large", count)
	}
	out := make([]string, 0, count)
	for i := uint64(0); i < count && b.err == nil; i++ {
		var path string
		var dir uint64
		for _, f := range fmts {
			switch f.content {
			case lnctPath:
				path = c.str(f.form)
			case lnctDirIndex:
				dir = c.udata(f.form)
			default:
				c.skip(f.form)
			}
		}
		out = append(out, build(path, dir))
		if c.err != nil {
			return nil, c.err
		}
	}
	if b.err != nil {
		return nil, b.err
	}
	return out, c.err
}

func (c *entryCtx) offset() uint64 {
	if c.dwarf64 {
		return c.b.u64()
	}
	return uint64(c.b.u32())
}

func (c *entryCtx) str(form uint64) string {
	switch form {
	case formString:
		return c.b.cstring()
	case formLineStrp:
		return cstringAt(c.s.LineStr, c.offset(), &c.err)
	case formStrp:
		return cstringAt(c.s.Str, c.offset(), &c.err)
	default:
		c.err = fmt.Errorf("unsupported path form %#x", form)
		return ""
	}
}

func (c *entryCtx) udata(form uint64) uint64 {
	switch form {
	case formData1:
		return uint64(c.b.u8())
	case formData2:
		return uint64(c.b.u16())
	case formData4:
		return uint64(c.b.u32())
	case formData8:
		return c.b.u64()
	case formUdata:
		return c.b.uleb()
	default:
		c.err = fmt.Errorf("unsupported directory index form %#x", form)
		return 0
	}
}

func (c *entryCtx) skip(form uint64) {
	b := c.b
	switch form {
	case formData1, formStrx1:
		b.skip(1)
	case formData2, formStrx2:
		b.skip(2)
	case formStrx3:
		b.skip(3)
	case formData4, formStrx4:
		b.skip(4)
	case formData8:
		b.skip(8)
	case formData16:
		b.skip(16)
	case formUdata, formStrx:
		b.uleb()
	case formSdata:
		b.sleb()
	case formString:
		b.cstring()
	case formStrp, formLineStrp:
		c.offset()
	case formBlock:
		b.skip(int(b.uleb()))
	case formBlock1:
		b.skip(int(b.u8()))
	case formBlock2:
		b.skip(int(b.u16()))
	case formBlock4:
		b.skip(int(b.u32()))
	default:
		c.err = fmt.Errorf("unsupported entry form %#x", form)
	}
}

func cstringAt(sec []byte, off uint64, errp *error) string {
	if off >= uint64(len(sec)) {
		if *errp == nil {
			*errp = fmt.Errorf("string offset %#x out of range", off)
		}
		return ""
	}
	s := sec[off:]
	for i, c := range s {
		if c == 0 {
			return string(s[:i])
		}
	}
	if *errp == nil {
		*errp = fmt.Errorf("unterminated string at %#x", off)
	}
	return ""
}

// ReadFiles decodes only the file table of the line program at off (see
// ReadTable for the naming rules).
func ReadFiles(s Sections, off uint64, compDir string, addrSize int) ([]string, error) {
	t, err := readTable(s, off, compDir, addrSize, false)
	if err != nil {
		return nil, err
	}
	return t.Files, nil
}
