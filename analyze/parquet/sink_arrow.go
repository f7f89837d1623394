package parquet

import (
	"io"
	"unsafe"

	apq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// arrowSink writes with apache/arrow-go's low-level parquet writer.
type arrowSink struct {
	w    *file.Writer
	cols []Column
	i64  []int64
	i32  []int32
	ba   []apq.ByteArray
}

func newArrowSink(out io.Writer, cols []Column, codec string) (sink, error) {
	var fields schema.FieldList
	for _, c := range cols {
		rep := apq.Repetitions.Required
		if c.Optional {
			rep = apq.Repetitions.Optional
		}
		var n schema.Node
		var err error
		switch c.Type {
		case Int32:
			n = schema.NewInt32Node(c.Name, rep, -1)
		case Int64:
			n = schema.NewInt64Node(c.Name, rep, -1)
		case Uint64:
			n, err = schema.NewPrimitiveNodeLogical(c.Name, rep, schema.NewIntLogicalType(64, false), apq.Types.Int64, 0, -1)
		default:
			n, err = schema.NewPrimitiveNodeLogical(c.Name, rep, schema.StringLogicalType{}, apq.Types.ByteArray, 0, -1)
		}
		if err != nil {
			return nil, err
		}
		fields = append(fields, n)
	}
	root, err := schema.NewGroupNode("gprobe_events", apq.Repetitions.Required, fields, -1)
	if err != nil {
		return nil, err
	}
	cc := compress.Codecs.Zstd
	if codec == "snappy" {
		cc = compress.Codecs.Snappy
	}
	props := apq.NewWriterProperties(apq.WithCompression(cc), apq.WithDictionaryDefault(true), apq.WithCreatedBy("gprobe"))
	w := file.NewParquetWriter(out, root, file.WithWriterProps(props))
	return &arrowSink{w: w, cols: cols}, nil
}

func (s *arrowSink) writeRowGroup(b *batch) error {
	rg := s.w.AppendRowGroup()
	for i, c := range s.cols {
		cw, err := rg.NextColumn()
		if err != nil {
			return err
		}
		var defs []int16
		if c.Optional {
			defs = b.defs[i]
		}
		present := func(r int) bool { return defs == nil || defs[r] == 1 }
		switch w := cw.(type) {
		case *file.Int32ColumnChunkWriter:
			s.i32 = s.i32[:0]
			for r := 0; r < b.n; r++ {
				if present(r) {
					s.i32 = append(s.i32, int32(b.ints[i][r]))
				}
			}
			_, err = w.WriteBatch(s.i32, defs, nil)
		case *file.Int64ColumnChunkWriter:
			s.i64 = s.i64[:0]
			for r := 0; r < b.n; r++ {
				if present(r) {
					s.i64 = append(s.i64, b.ints[i][r])
				}
			}
			_, err = w.WriteBatch(s.i64, defs, nil)
		case *file.ByteArrayColumnChunkWriter:
			s.ba = s.ba[:0]
			for r := 0; r < b.n; r++ {
				if present(r) {
					str := b.strs[i][r]
					s.ba = append(s.ba, unsafe.Slice(unsafe.StringData(str), len(str)))
				}
			}
			_, err = w.WriteBatch(s.ba, defs, nil)
		}
		if err != nil {
			return err
		}
		if err := cw.Close(); err != nil {
			return err
		}
	}
	return rg.Close()
}

func (s *arrowSink) close(meta [][2]string) error {
	for _, kv := range meta {
		if err := s.w.AppendKeyValueMetadata(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return s.w.Close()
}
