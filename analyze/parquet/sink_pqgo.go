package parquet

import (
	"io"
	"reflect"
	"unsafe"

	pq "github.com/parquet-go/parquet-go"
)

// pqgoSink writes with parquet-go/parquet-go.
type pqgoSink struct {
	w    *pq.Writer
	cols []Column
	vals []pq.Value
}

// orderedGroup keeps the columns in the order given (pq.Group sorts them
// by name).
type orderedGroup struct {
	pq.Group
	fields []pq.Field
}

func (g orderedGroup) Fields() []pq.Field { return g.fields }

type namedNode struct {
	pq.Node
	name string
}

func (n namedNode) Name() string                           { return n.name }
func (n namedNode) Value(base reflect.Value) reflect.Value { return reflect.Value{} }

func newPqgoSink(out io.Writer, cols []Column, codec string) (sink, error) {
	g := orderedGroup{Group: pq.Group{}}
	for _, c := range cols {
		var n pq.Node
		switch c.Type {
		case Int32:
			n = pq.Int(32)
		case Int64:
			n = pq.Int(64)
		case Uint64:
			n = pq.Uint(64)
		default:
			n = pq.Encoded(pq.String(), &pq.RLEDictionary)
		}
		if c.Optional {
			n = pq.Optional(n)
		}
		g.Group[c.Name] = n
		g.fields = append(g.fields, namedNode{n, c.Name})
	}
	var opt pq.WriterOption = pq.Compression(&pq.Zstd)
	if codec == "snappy" {
		opt = pq.Compression(&pq.Snappy)
	}
	w := pq.NewWriter(out, pq.NewSchema("gprobe_events", g), opt, pq.CreatedBy("gprobe", "", ""))
	return &pqgoSink{w: w, cols: cols}, nil
}

func (s *pqgoSink) writeRowGroup(b *batch) error {
	cws := s.w.ColumnWriters()
	for i, c := range s.cols {
		vals := s.vals[:0]
		for r := 0; r < b.n; r++ {
			var v pq.Value
			def := 0
			if c.Optional {
				def = int(b.defs[i][r])
			}
			if c.Optional && def == 0 {
				v = pq.NullValue()
			} else {
				switch c.Type {
				case Int32:
					v = pq.Int32Value(int32(b.ints[i][r]))
				case Int64, Uint64:
					v = pq.Int64Value(b.ints[i][r])
				default:
					str := b.strs[i][r]
					v = pq.ByteArrayValue(unsafe.Slice(unsafe.StringData(str), len(str)))
				}
			}
			vals = append(vals, v.Level(0, def, i))
		}
		s.vals = vals
		if _, err := cws[i].WriteRowValues(vals); err != nil {
			return err
		}
	}
	return s.w.Flush()
}

func (s *pqgoSink) close(meta [][2]string) error {
	for _, kv := range meta {
		s.w.SetKeyValueMetadata(kv[0], kv[1])
	}
	return s.w.Close()
}
