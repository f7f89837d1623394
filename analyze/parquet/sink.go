package parquet

import (
	"encoding/binary"
	"io"
	"math/bits"

	"github.com/klauspost/compress/zstd"
)

// sink writes the Parquet file itself: the columns of a flat schema of
// INT32, INT64, unsigned INT64 and STRING columns, required or optional,
// one column chunk per column and row group, split into data pages of at
// most pageRows rows (format v1 pages); string columns dictionary encoded
// (a dictionary page per chunk, RLE_DICTIONARY indices), integer columns
// PLAIN; every page zstd compressed; minimum, maximum and null count per
// chunk. That is all gprobe writes, so it writes it itself: a general
// Parquet library (parquet-go, with the protobuf, Brotli, LZ4, Snappy and
// geometry packages it links) made the gprobe binary a third larger and
// cost every gprobe command, not only export, about 3 MB of resident
// memory and a millisecond at start.
type sink struct {
	out    io.Writer
	off    int64 // bytes written to out
	cols   []Column
	enc    *zstd.Encoder
	groups []rowGroup
	err    error

	// Buffers reused from chunk to chunk.
	th     thrift
	levels []uint32
	idx    []uint32
	page   []byte
	packed []byte
	dict   map[string]uint32
	words  []string
}

// pageRows is the most rows a data page holds: 256 KiB of INT64 values,
// the page size parquet-go wrote.
const pageRows = 1 << 15

// Parquet's enumerations, as far as gprobe uses them.
const (
	typeInt32     = 1
	typeInt64     = 2
	typeByteArray = 6

	repRequired = 0
	repOptional = 1

	convUTF8   = 0
	convUint64 = 14
	convInt32  = 17
	convInt64  = 18

	encPlain         = 0
	encRLE           = 3
	encRLEDictionary = 8

	codecZstd = 6

	pageData       = 0
	pageDictionary = 2
)

var magic = []byte("PAR1")

// rowGroup and chunk are what the footer says of the written data.
type rowGroup struct {
	rows, start, size, compressed int64
	chunks                        []chunk
}

type chunk struct {
	values, nulls          int64
	dictOff, dataOff       int64 // dictOff -1: no dictionary page
	size, compressed       int64 // pages with their headers
	min, max               []byte
	dictionary, hasMinimum bool
}

func newSink(out io.Writer, cols []Column) *sink {
	// One goroutine, no window larger than a page needs: the encoder
	// only compresses whole pages (EncodeAll).
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
	s := &sink{out: out, cols: cols, enc: enc, err: err, dict: map[string]uint32{}}
	s.write(magic)
	return s
}

func (s *sink) write(p []byte) {
	if s.err != nil {
		return
	}
	_, s.err = s.out.Write(p)
	s.off += int64(len(p))
}

// writeRowGroup writes b as one row group.
func (s *sink) writeRowGroup(b *batch) error {
	g := rowGroup{rows: int64(b.n), start: s.off}
	for i, c := range s.cols {
		var ch chunk
		if c.Type == String {
			ch = s.stringChunk(b, i)
		} else {
			ch = s.intChunk(b, i, c.Type)
		}
		g.size += ch.size
		g.compressed += ch.compressed
		g.chunks = append(g.chunks, ch)
	}
	s.groups = append(s.groups, g)
	return s.err
}

// levelsOf returns the definition levels of rows [lo, hi) of column i,
// nil for a required column.
func (s *sink) levelsOf(b *batch, i, lo, hi int) []uint32 {
	if b.defs[i] == nil {
		return nil
	}
	s.levels = s.levels[:0]
	for _, d := range b.defs[i][lo:hi] {
		s.levels = append(s.levels, uint32(d))
	}
	return s.levels
}

// startPage begins a data page body: the definition levels of an
// optional column (length-prefixed, bit width 1).
func (s *sink) startPage(levels []uint32) {
	s.page = s.page[:0]
	if levels != nil {
		s.page = append(s.page, 0, 0, 0, 0)
		s.page = appendHybrid(s.page, levels, 1)
		binary.LittleEndian.PutUint32(s.page, uint32(len(s.page)-4))
	}
}

// intChunk writes integer column i: PLAIN values, nulls left out.
func (s *sink) intChunk(b *batch, i int, typ Type) chunk {
	ch := chunk{dictOff: -1, dataOff: s.off}
	vals, defs := b.ints[i], b.defs[i]
	var lo, hi int64
	for start := 0; start < b.n; start += pageRows {
		end := min(start+pageRows, b.n)
		s.startPage(s.levelsOf(b, i, start, end))
		for r := start; r < end; r++ {
			if defs != nil && defs[r] == 0 {
				ch.nulls++
				continue
			}
			v := vals[r]
			if typ == Int32 {
				s.page = binary.LittleEndian.AppendUint32(s.page, uint32(v))
			} else {
				s.page = binary.LittleEndian.AppendUint64(s.page, uint64(v))
			}
			if !ch.hasMinimum || less(typ, v, lo) {
				lo = v
			}
			if !ch.hasMinimum || less(typ, hi, v) {
				hi = v
			}
			ch.hasMinimum = true
		}
		s.dataPage(&ch, end-start, encPlain)
	}
	ch.values = int64(b.n)
	if ch.hasMinimum {
		if typ == Int32 {
			ch.min = binary.LittleEndian.AppendUint32(nil, uint32(lo))
			ch.max = binary.LittleEndian.AppendUint32(nil, uint32(hi))
		} else {
			ch.min = binary.LittleEndian.AppendUint64(nil, uint64(lo))
			ch.max = binary.LittleEndian.AppendUint64(nil, uint64(hi))
		}
	}
	return ch
}

// less orders values of a column of type typ as Parquet does: unsigned
// for Uint64, signed otherwise.
func less(typ Type, a, b int64) bool {
	if typ == Uint64 {
		return uint64(a) < uint64(b)
	}
	return a < b
}

// stringChunk writes string column i: a dictionary page of the chunk's
// distinct values in the order met, then data pages of their indexes.
func (s *sink) stringChunk(b *batch, i int) chunk {
	ch := chunk{dictionary: true}
	clear(s.dict)
	s.words = s.words[:0]
	s.idx = s.idx[:0]
	vals, defs := b.strs[i], b.defs[i]
	for r := 0; r < b.n; r++ {
		if defs != nil && defs[r] == 0 {
			ch.nulls++
			continue
		}
		k, ok := s.dict[vals[r]]
		if !ok {
			k = uint32(len(s.words))
			s.dict[vals[r]] = k
			s.words = append(s.words, vals[r])
		}
		s.idx = append(s.idx, k)
	}

	ch.dictOff = s.off
	s.page = s.page[:0]
	for _, w := range s.words {
		s.page = binary.LittleEndian.AppendUint32(s.page, uint32(len(w)))
		s.page = append(s.page, w...)
		if !ch.hasMinimum || w < string(ch.min) {
			ch.min = []byte(w)
		}
		if !ch.hasMinimum || w > string(ch.max) {
			ch.max = []byte(w)
		}
		ch.hasMinimum = true
	}
	s.writePage(&ch, pageDictionary, func(t *thrift) {
		t.begin(7) // dictionary_page_header
		t.i32(1, int32(len(s.words)))
		t.i32(2, encPlain)
		t.end()
	})

	width := 1
	if len(s.words) > 1 {
		width = bits.Len32(uint32(len(s.words) - 1))
	}
	ch.dataOff = s.off
	next := 0 // s.idx[next] is the first index of the page
	for start := 0; start < b.n; start += pageRows {
		end := min(start+pageRows, b.n)
		s.startPage(s.levelsOf(b, i, start, end))
		n := end - start
		if defs != nil {
			n = 0
			for _, d := range defs[start:end] {
				n += int(d)
			}
		}
		s.page = append(s.page, byte(width))
		s.page = appendHybrid(s.page, s.idx[next:next+n], width)
		next += n
		s.dataPage(&ch, end-start, encRLEDictionary)
	}
	ch.values = int64(b.n)
	return ch
}

// dataPage writes s.page as a data page of rows values (nulls included).
func (s *sink) dataPage(ch *chunk, rows int, enc int32) {
	s.writePage(ch, pageData, func(t *thrift) {
		t.begin(5) // data_page_header
		t.i32(1, int32(rows))
		t.i32(2, enc)
		t.i32(3, encRLE) // definition levels
		t.i32(4, encRLE) // repetition levels
		t.end()
	})
}

// writePage compresses s.page and writes it with its header, whose
// type-specific part header writes.
func (s *sink) writePage(ch *chunk, typ int32, header func(*thrift)) {
	s.packed = s.enc.EncodeAll(s.page, s.packed[:0])
	t := &s.th
	t.start()
	t.i32(1, typ)
	t.i32(2, int32(len(s.page)))
	t.i32(3, int32(len(s.packed)))
	header(t)
	t.end()
	s.write(t.b)
	s.write(s.packed)
	ch.size += int64(len(t.b) + len(s.page))
	ch.compressed += int64(len(t.b) + len(s.packed))
}

// close writes the footer: the schema, the row groups' column chunks,
// the key-value metadata.
func (s *sink) close(meta [][2]string) error {
	var rows int64
	for _, g := range s.groups {
		rows += g.rows
	}
	t := &s.th
	t.start()
	t.i32(1, 1) // version
	t.list(2, tStruct, len(s.cols)+1)
	t.elem()
	t.str(4, "gprobe_events")
	t.i32(5, int32(len(s.cols)))
	t.end()
	for _, c := range s.cols {
		t.elem()
		t.i32(1, physical(c.Type))
		rep := int32(repRequired)
		if c.Optional {
			rep = repOptional
		}
		t.i32(3, rep)
		t.str(4, c.Name)
		if c.Type == String {
			t.i32(6, convUTF8)
			t.begin(10) // logicalType
			t.begin(1)  // STRING
			t.end()
			t.end()
		} else {
			// Integers say their width and sign both ways, as readers
			// of either kind of annotation expect.
			width, signed, conv := int8(64), c.Type != Uint64, int32(convInt64)
			switch c.Type {
			case Int32:
				width, conv = 32, convInt32
			case Uint64:
				conv = convUint64
			}
			t.i32(6, conv)
			t.begin(10) // logicalType
			t.begin(10) // INTEGER
			t.i8(1, width)
			t.boolean(2, signed)
			t.end()
			t.end()
		}
		t.end()
	}
	t.i64(3, rows)
	t.list(4, tStruct, len(s.groups))
	for k, g := range s.groups {
		t.elem()
		t.list(1, tStruct, len(g.chunks))
		for i, ch := range g.chunks {
			s.columnChunk(ch, s.cols[i])
		}
		t.i64(2, g.size)
		t.i64(3, g.rows)
		t.i64(5, g.start)
		t.i64(6, g.compressed)
		t.field(7, 4) // ordinal, an i16
		t.b = binary.AppendVarint(t.b, int64(k))
		t.end()
	}
	t.list(5, tStruct, len(meta))
	for _, kv := range meta {
		t.elem()
		t.str(1, kv[0])
		t.str(2, kv[1])
		t.end()
	}
	t.str(6, "gprobe")
	// Every column is ordered by its type (signed, unsigned by its
	// logical type, strings bytewise): min_value and max_value hold.
	t.list(7, tStruct, len(s.cols))
	for range s.cols {
		t.elem()
		t.begin(1) // TYPE_ORDER
		t.end()
		t.end()
	}
	t.end()
	footer := t.b
	s.write(footer)
	s.write(binary.LittleEndian.AppendUint32(nil, uint32(len(footer))))
	s.write(magic)
	if s.enc != nil {
		s.enc.Close()
	}
	return s.err
}

// columnChunk writes a ColumnChunk element of a row group's list.
func (s *sink) columnChunk(ch chunk, c Column) {
	t := &s.th
	t.elem()
	start := ch.dataOff
	if ch.dictionary {
		start = ch.dictOff
	}
	t.i64(2, start) // file_offset
	t.begin(3)      // meta_data
	t.i32(1, physical(c.Type))
	if ch.dictionary {
		t.list(2, tI32, 3)
		t.listI32(encPlain)
		t.listI32(encRLE)
		t.listI32(encRLEDictionary)
	} else {
		t.list(2, tI32, 2)
		t.listI32(encPlain)
		t.listI32(encRLE)
	}
	t.list(3, tBinary, 1)
	t.listStr(c.Name)
	t.i32(4, codecZstd)
	t.i64(5, ch.values)
	t.i64(6, ch.size)
	t.i64(7, ch.compressed)
	t.i64(9, ch.dataOff)
	if ch.dictionary {
		t.i64(11, ch.dictOff)
	}
	t.begin(12) // statistics
	t.i64(3, ch.nulls)
	if ch.hasMinimum {
		t.binary(5, ch.max)
		t.binary(6, ch.min)
	}
	t.end()
	t.end()
	t.end()
}

func physical(t Type) int32 {
	switch t {
	case Int32:
		return typeInt32
	case String:
		return typeByteArray
	}
	return typeInt64
}
