package parquet

import (
	"io"
	"reflect"
	"unsafe"

	pq "github.com/parquet-go/parquet-go"
)

// sink writes row groups with parquet-go (chosen over arrow-go for its
// write speed and memory; docs/export.md has the numbers). String columns
// are dictionary encoded; every column is zstd compressed.
type sink struct {
	w    *pq.Writer
	cols []Column
	vals []pq.Value
}

// orderedGroup keeps the columns in the order given: pq.Group sorts
// them by name.
type orderedGroup struct {
	pq.Group
	fields []pq.Field
}

func (g orderedGroup) Fields() []pq.Field { return g.fields }

// namedNode is a column of an orderedGroup. Rows are written column by
// column, never from Go values, so Value is not used.
type namedNode struct {
	pq.Node
	name string
}

func (n namedNode) Name() string                           { return n.name }
func (n namedNode) Value(base reflect.Value) reflect.Value { return reflect.Value{} }

func newSink(out io.Writer, cols []Column) *sink {
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
	w := pq.NewWriter(out, pq.NewSchema("gprobe_events", g), pq.Compression(&pq.Zstd), pq.CreatedBy("gprobe", "", ""))
	return &sink{w: w, cols: cols}
}

// writeRowGroup writes b as one row group.
func (s *sink) writeRowGroup(b *batch) error {
	cws := s.w.ColumnWriters()
	for i, c := range s.cols {
		vals := s.vals[:0]
		for r := 0; r < b.n; r++ {
			def := 1
			if c.Optional {
				def = int(b.defs[i][r])
			}
			var v pq.Value
			switch {
			case def == 0:
				v = pq.NullValue()
			case c.Type == Int32:
				v = pq.Int32Value(int32(b.ints[i][r]))
			case c.Type == String:
				str := b.strs[i][r]
				// The value is copied into the column buffer before
				// the batch is reused.
				v = pq.ByteArrayValue(unsafe.Slice(unsafe.StringData(str), len(str)))
			default:
				v = pq.Int64Value(b.ints[i][r])
			}
			if !c.Optional {
				def = 0
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

// close writes the key-value metadata and the footer.
func (s *sink) close(meta [][2]string) error {
	for _, kv := range meta {
		s.w.SetKeyValueMetadata(kv[0], kv[1])
	}
	return s.w.Close()
}
