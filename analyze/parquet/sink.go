package parquet

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/bits"

	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/plain"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// sink writes the Parquet file: the columns of a flat schema of INT32,
// INT64, unsigned INT64 and STRING columns, required or optional, one
// column chunk per column and row group, split into format v1 data pages
// of at most pageRows rows; string columns dictionary encoded (a
// dictionary page per chunk, RLE_DICTIONARY indexes), integer columns
// PLAIN; every page zstd compressed; minimum, maximum and null count per
// chunk.
//
// The encodings are parquet-go's: the Thrift compact protocol and the
// format's structures (format, encoding/thrift), the RLE/bit-packing
// hybrid (encoding/rle), PLAIN byte arrays (encoding/plain) and the zstd
// codec (compress/zstd). sink assembles them itself rather than through
// parquet-go's root package, which links protobuf, Brotli, LZ4, Snappy,
// gzip and geometry packages gprobe never writes: Go initialises every
// linked package at each start, and each initialisation faults in the
// 64 KiB of the binary around it, so the root package cost every gprobe
// command, not only an export, about 2.5 MB of resident memory.
type sink struct {
	out    io.Writer
	off    int64 // bytes written to out
	cols   []Column
	codec  zstd.Codec
	thrift *thrift.Encoder // into hdr
	hdr    bytes.Buffer
	groups []format.RowGroup
	err    error

	// Buffers reused from chunk to chunk.
	levels []uint8
	idx    []int32
	page   []byte
	packed []byte
	dict   map[string]int32
	words  []string
}

// pageRows is the most rows a data page holds: 256 KiB of INT64 values,
// the page size parquet-go's writer uses.
const pageRows = 1 << 15

var magic = []byte("PAR1")

// chunk is what the footer says of a written column chunk.
type chunk struct {
	values, nulls    int64
	dictOff, dataOff int64 // dictOff 0: no dictionary page
	size, compressed int64 // pages with their headers
	min, max         []byte
	hasMinimum       bool
}

func newSink(out io.Writer, cols []Column) *sink {
	// One goroutine: pages are compressed one at a time, whole.
	s := &sink{out: out, cols: cols, codec: zstd.Codec{Level: zstd.DefaultLevel, Concurrency: 1}, dict: map[string]int32{}}
	s.thrift = thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&s.hdr))
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
	g := format.RowGroup{NumRows: int64(b.n), FileOffset: s.off, Ordinal: int16(len(s.groups))}
	for i, c := range s.cols {
		var ch chunk
		if c.Type == String {
			ch = s.stringChunk(b, i)
		} else {
			ch = s.intChunk(b, i, c.Type)
		}
		g.TotalByteSize += ch.size
		g.TotalCompressedSize += ch.compressed
		g.Columns = append(g.Columns, columnChunk(ch, c))
	}
	s.groups = append(s.groups, g)
	return s.err
}

// startPage begins a data page body: the definition levels of rows
// [lo, hi) of column i when it is optional (length-prefixed, bit width 1).
func (s *sink) startPage(b *batch, i, lo, hi int) {
	s.page = s.page[:0]
	if b.defs[i] == nil {
		return
	}
	s.levels = s.levels[:0]
	for _, d := range b.defs[i][lo:hi] {
		s.levels = append(s.levels, uint8(d))
	}
	enc := rle.Encoding{BitWidth: 1}
	var err error
	s.packed, err = enc.EncodeLevels(s.packed[:0], s.levels)
	s.fail(err)
	s.page = binary.LittleEndian.AppendUint32(s.page, uint32(len(s.packed)))
	s.page = append(s.page, s.packed...)
}

func (s *sink) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// intChunk writes integer column i: PLAIN values, nulls left out.
func (s *sink) intChunk(b *batch, i int, typ Type) chunk {
	ch := chunk{dataOff: s.off}
	vals, defs := b.ints[i], b.defs[i]
	var lo, hi int64
	for start := 0; start < b.n; start += pageRows {
		end := min(start+pageRows, b.n)
		s.startPage(b, i, start, end)
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
		s.dataPage(&ch, end-start, format.Plain)
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
	var ch chunk
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
			k = int32(len(s.words))
			s.dict[vals[r]] = k
			s.words = append(s.words, vals[r])
		}
		s.idx = append(s.idx, k)
	}

	ch.dictOff = s.off
	s.page = s.page[:0]
	for _, w := range s.words {
		s.page = plain.AppendByteArrayString(s.page, w)
		if !ch.hasMinimum || w < string(ch.min) {
			ch.min = []byte(w)
		}
		if !ch.hasMinimum || w > string(ch.max) {
			ch.max = []byte(w)
		}
		ch.hasMinimum = true
	}
	s.writePage(&ch, format.PageHeader{Type: format.DictionaryPage,
		DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{NumValues: int32(len(s.words)), Encoding: format.Plain})})

	width := 1
	if len(s.words) > 1 {
		width = bits.Len32(uint32(len(s.words) - 1))
	}
	enc := rle.Encoding{BitWidth: width}
	ch.dataOff = s.off
	next := 0 // s.idx[next] is the first index of the page
	for start := 0; start < b.n; start += pageRows {
		end := min(start+pageRows, b.n)
		s.startPage(b, i, start, end)
		n := end - start
		if defs != nil {
			n = 0
			for _, d := range defs[start:end] {
				n += int(d)
			}
		}
		s.page = append(s.page, byte(width))
		var err error
		s.packed, err = enc.EncodeInt32(s.packed[:0], s.idx[next:next+n])
		s.fail(err)
		s.page = append(s.page, s.packed...)
		next += n
		s.dataPage(&ch, end-start, format.RLEDictionary)
	}
	ch.values = int64(b.n)
	return ch
}

// dataPage writes s.page as a data page of rows values (nulls included).
func (s *sink) dataPage(ch *chunk, rows int, enc format.Encoding) {
	s.writePage(ch, format.PageHeader{Type: format.DataPage,
		DataPageHeader: thrift.New(format.DataPageHeader{NumValues: int32(rows), Encoding: enc,
			DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE})})
}

// writePage compresses s.page and writes it after h, whose sizes it
// fills in.
func (s *sink) writePage(ch *chunk, h format.PageHeader) {
	var err error
	s.packed, err = s.codec.Encode(s.packed[:0], s.page)
	s.fail(err)
	h.UncompressedPageSize = int32(len(s.page))
	h.CompressedPageSize = int32(len(s.packed))
	hb := s.encode(&h)
	s.write(hb)
	s.write(s.packed)
	ch.size += int64(len(hb) + len(s.page))
	ch.compressed += int64(len(hb) + len(s.packed))
}

// encode returns v in the Thrift compact protocol, valid until the next
// call.
func (s *sink) encode(v any) []byte {
	s.hdr.Reset()
	s.fail(s.thrift.Encode(v))
	return s.hdr.Bytes()
}

// columnChunk is the footer's description of ch, a chunk of column c.
func columnChunk(ch chunk, c Column) format.ColumnChunk {
	md := format.ColumnMetaData{
		Type:                  physical(c.Type),
		Encoding:              []format.Encoding{format.Plain, format.RLE},
		PathInSchema:          []string{c.Name},
		Codec:                 format.Zstd,
		NumValues:             ch.values,
		TotalUncompressedSize: ch.size,
		TotalCompressedSize:   ch.compressed,
		DataPageOffset:        ch.dataOff,
		DictionaryPageOffset:  ch.dictOff,
		Statistics:            format.Statistics{NullCount: ch.nulls, MinValue: ch.min, MaxValue: ch.max},
	}
	start := ch.dataOff
	if ch.dictOff != 0 {
		start = ch.dictOff
		md.Encoding = append(md.Encoding, format.RLEDictionary)
	}
	return format.ColumnChunk{FileOffset: start, MetaData: md}
}

// close writes the footer: the schema, the row groups' column chunks,
// the key-value metadata.
func (s *sink) close(meta [][2]string) error {
	fm := format.FileMetaData{Version: 1, RowGroups: s.groups, CreatedBy: "gprobe"}
	fm.Schema = append(fm.Schema, format.SchemaElement{Name: "gprobe_events", NumChildren: thrift.New(int32(len(s.cols)))})
	for _, c := range s.cols {
		fm.Schema = append(fm.Schema, schemaElement(c))
		// Every column is ordered by its type (signed, unsigned by its
		// logical type, strings bytewise): min_value and max_value hold.
		fm.ColumnOrders = append(fm.ColumnOrders, format.ColumnOrder{Value: &format.TypeDefinedOrder{}})
	}
	for _, g := range s.groups {
		fm.NumRows += g.NumRows
	}
	for _, kv := range meta {
		fm.KeyValueMetadata = append(fm.KeyValueMetadata, format.KeyValue{Key: kv[0], Value: kv[1]})
	}
	footer := s.encode(&fm)
	s.write(footer)
	s.write(binary.LittleEndian.AppendUint32(nil, uint32(len(footer))))
	s.write(magic)
	return s.err
}

// schemaElement is column c's schema element, with both the logical and
// the converted annotation (readers look for either).
func schemaElement(c Column) format.SchemaElement {
	rep := format.Required
	if c.Optional {
		rep = format.Optional
	}
	e := format.SchemaElement{Type: thrift.New(physical(c.Type)), RepetitionType: thrift.New(rep), Name: c.Name}
	switch c.Type {
	case String:
		e.ConvertedType = thrift.New(deprecated.UTF8)
		e.LogicalType.Value = &format.StringType{}
	case Int32:
		e.ConvertedType = thrift.New(deprecated.Int32)
		e.LogicalType.Value = &format.IntType{BitWidth: 32, IsSigned: true}
	case Uint64:
		e.ConvertedType = thrift.New(deprecated.Uint64)
		e.LogicalType.Value = &format.IntType{BitWidth: 64}
	default:
		e.ConvertedType = thrift.New(deprecated.Int64)
		e.LogicalType.Value = &format.IntType{BitWidth: 64, IsSigned: true}
	}
	return e
}

func physical(t Type) format.Type {
	switch t {
	case Int32:
		return format.Int32
	case String:
		return format.ByteArray
	}
	return format.Int64
}
