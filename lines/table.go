package lines

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gprobe/gprobe/internal/dwbuf"
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
	b := &dwbuf.Cursor{Data: s.Line, Pos: int(off), Big: s.Order == binary.BigEndian}
	defer func() {
		if b.Err() != nil && err == nil {
			t, err = nil, fmt.Errorf("%w at %#x: %v", ErrBadLineTable, off, b.Err())
		}
	}()
	unitLen, dwarf64 := b.InitialLength()
	if b.Err() != nil {
		return nil, nil
	}
	end := b.Pos + int(unitLen)
	if unitLen > uint64(len(s.Line)-b.Pos) {
		return nil, fmt.Errorf("%w at %#x: unit length %d past section end", ErrBadLineTable, off, unitLen)
	}
	b.Data = b.Data[:end]
	t = &Table{Version: int(b.U16())}
	if t.Version < 2 || t.Version > 5 {
		return nil, fmt.Errorf("%w at %#x: unsupported version %d", ErrBadLineTable, off, t.Version)
	}
	if t.Version >= 5 {
		addrSize = int(b.U8())
		b.U8() // segment selector size
	}
	hdrLen := b.Offset(dwarf64)
	progStart := b.Pos + int(hdrLen)
	if hdrLen > uint64(end-b.Pos) {
		return nil, fmt.Errorf("%w at %#x: header length past unit end", ErrBadLineTable, off)
	}
	minInsn := int(b.U8())
	maxOps := 1
	if t.Version >= 4 {
		maxOps = int(b.U8())
	}
	defaultStmt := b.U8() != 0
	lineBase := int(int8(b.U8()))
	lineRange := int(b.U8())
	opcodeBase := int(b.U8())
	if b.Err() != nil {
		return nil, nil
	}
	if lineRange == 0 || maxOps == 0 || opcodeBase == 0 {
		return nil, fmt.Errorf("%w at %#x: line_range, max_ops and opcode_base must be non-zero", ErrBadLineTable, off)
	}
	stdLens := make([]int, opcodeBase)
	for i := 1; i < opcodeBase; i++ {
		stdLens[i] = int(b.U8())
	}

	if t.Version < 5 {
		dirs := []string{compDir}
		for b.Err() == nil && b.Pos < progStart && b.Peek() != 0 {
			dirs = append(dirs, string(b.CString()))
		}
		b.U8()
		t.Files = []string{"???"}
		for b.Err() == nil && b.Pos < progStart && b.Peek() != 0 {
			name := string(b.CString())
			dir := b.Uleb()
			b.Uleb() // mtime
			b.Uleb() // length
			if dir >= uint64(len(dirs)) {
				return nil, fmt.Errorf("%w at %#x: directory index %d out of range", ErrBadLineTable, off, dir)
			}
			t.Files = append(t.Files, joinLibdw(dirs[dir], name, dirs[dir] == "" && dir == 0 && compDir == ""))
		}
	} else {
		ctx := entryCtx{b: b, s: s, f: dwbuf.Format{Version: uint16(t.Version), AddrSize: uint8(addrSize), Dwarf64: dwarf64}}
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
	if b.Err() != nil {
		return nil, nil
	}
	if !rows {
		return t, nil
	}
	b.Pos = progStart
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

func runProgram(b *dwbuf.Cursor, end, addrSize, minInsn, maxOps int, defaultStmt bool, lineBase, lineRange, opcodeBase int, stdLens []int, version int) []Row {
	// About one row per 3.3 bytes of program in GCC's and clang's tables
	// (a kernel unit has tens of thousands): one allocation instead of
	// a dozen growths, each copying and faulting in the rows so far.
	rows := make([]Row, 0, (end-b.Pos)/3+16)
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
	for b.Err() == nil && b.Pos < end {
		op := int(b.U8())
		switch {
		case op >= opcodeBase:
			adj := op - opcodeBase
			advance(uint64(adj / lineRange))
			line += lineBase + adj%lineRange
			emit(false)
		case op == 0:
			n := b.Uleb()
			if n == 0 || n > uint64(end-b.Pos) {
				b.Fail(fmt.Errorf("bad extended opcode length %d", n))
				break
			}
			next := b.Pos + int(n)
			switch b.U8() {
			case lneEndSequence:
				emit(true)
				reset()
			case lneSetAddress:
				addr = b.Uint(int(n - 1))
				opIndex = 0
			case lneDefineFile, lneSetDiscriminator:
			}
			b.Pos = next
		case op == lnsCopy:
			emit(false)
		case op == lnsAdvancePC:
			advance(b.Uleb())
		case op == lnsAdvanceLine:
			line += int(b.Sleb())
		case op == lnsSetFile:
			file = int(b.Uleb())
		case op == lnsSetColumn:
			b.Uleb()
		case op == lnsNegateStmt:
			stmt = !stmt
		case op == lnsSetPrologueEnd:
			prologueEnd = true
		case op == lnsSetBasicBlock, op == lnsSetEpilogueBegin:
		case op == lnsConstAddPC:
			advance(uint64((255 - opcodeBase) / lineRange))
		case op == lnsFixedAdvancePC:
			addr += uint64(b.U16())
			opIndex = 0
		case op == lnsSetISA:
			b.Uleb()
		default:
			// Unknown standard opcode: skip its ULEB operands.
			for i := 0; i < stdLens[op]; i++ {
				b.Uleb()
			}
		}
	}
	_ = addrSize
	_ = version
	return rows
}

// entryCtx decodes DWARF 5 directory and file entry formats.
type entryCtx struct {
	b   *dwbuf.Cursor
	s   Sections
	f   dwbuf.Format
	err error
}

// Line table entry content types (DWARF 5 section 6.2.4.1).
const (
	lnctPath      = 1
	lnctDirIndex  = 2
	lnctTimestamp = 3
	lnctSize      = 4
	lnctMD5       = 5
)

func (c *entryCtx) entries(build func(path string, dir uint64) string) ([]string, error) {
	b := c.b
	nfmt := int(b.U8())
	type pair struct{ content, form uint64 }
	fmts := make([]pair, nfmt)
	for i := range fmts {
		fmts[i] = pair{b.Uleb(), b.Uleb()}
	}
	count := b.Uleb()
	if b.Err() != nil {
		return nil, b.Err()
	}
	if count > uint64(len(b.Data)) {
		return nil, fmt.Errorf("entry count %d too large", count)
	}
	out := make([]string, 0, count)
	for i := uint64(0); i < count && b.Err() == nil; i++ {
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
	if b.Err() != nil {
		return nil, b.Err()
	}
	return out, c.err
}

func (c *entryCtx) str(form uint64) string {
	switch form {
	case dwbuf.FormString:
		return string(c.b.CString())
	case dwbuf.FormLineStrp:
		return cstringAt(c.s.LineStr, c.b.Offset(c.f.Dwarf64), &c.err)
	case dwbuf.FormStrp:
		return cstringAt(c.s.Str, c.b.Offset(c.f.Dwarf64), &c.err)
	default:
		c.err = fmt.Errorf("unsupported path form %#x", form)
		return ""
	}
}

func (c *entryCtx) udata(form uint64) uint64 {
	switch form {
	case dwbuf.FormData1, dwbuf.FormData2, dwbuf.FormData4, dwbuf.FormData8, dwbuf.FormUdata:
		return c.b.Value(uint32(form), c.f)
	default:
		c.err = fmt.Errorf("unsupported directory index form %#x", form)
		return 0
	}
}

// skip moves past a value of a content type the table is not read for,
// in one of the forms line tables use.
func (c *entryCtx) skip(form uint64) {
	switch form {
	case dwbuf.FormData1, dwbuf.FormData2, dwbuf.FormData4, dwbuf.FormData8, dwbuf.FormData16,
		dwbuf.FormUdata, dwbuf.FormSdata, dwbuf.FormString, dwbuf.FormStrp, dwbuf.FormLineStrp,
		dwbuf.FormStrx, dwbuf.FormStrx1, dwbuf.FormStrx2, dwbuf.FormStrx3, dwbuf.FormStrx4,
		dwbuf.FormBlock, dwbuf.FormBlock1, dwbuf.FormBlock2, dwbuf.FormBlock4:
		c.b.Value(uint32(form), c.f)
	default:
		c.err = fmt.Errorf("unsupported entry form %#x", form)
	}
}

// cstringAt is the string at off of a string section; a bad offset or a
// missing NUL is recorded in *errp.
func cstringAt(sec []byte, off uint64, errp *error) string {
	s := dwbuf.CStringAt(sec, off)
	if s == nil && *errp == nil {
		if off >= uint64(len(sec)) {
			*errp = fmt.Errorf("string offset %#x out of range", off)
		} else {
			*errp = fmt.Errorf("unterminated string at %#x", off)
		}
	}
	return string(s)
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
