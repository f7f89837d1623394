package parquet

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
)

// sinkColumns cover every type, required and optional.
var sinkColumns = []Column{
	{Name: "ts", Type: Int64},
	{Name: "cpu", Type: Int32},
	{Name: "comm", Type: String},
	{Name: "system", Type: String, Optional: true},
	{Name: "small", Type: Int64, Optional: true},
	{Name: "addr", Type: Uint64, Optional: true},
	{Name: "word", Type: String, Optional: true},
	{Name: "never", Type: Uint64, Optional: true},
	{Name: "nothing", Type: String, Optional: true},
	{Name: "one", Type: String},
}

// sinkRow fills row r of a batch of sinkColumns: nulls in patterns,
// unsigned values above 2^63, negative ones, a dictionary of thousands
// of words, a column always null, one with a single value.
func sinkRow(b *batch, r int) {
	b.n++
	set := func(i int, present bool, v int64, s string) {
		if b.defs[i] != nil {
			b.defs[i] = append(b.defs[i], defOf(present))
		}
		if !present {
			v, s = 0, ""
		}
		if sinkColumns[i].Type == String {
			b.strs[i] = append(b.strs[i], s)
		} else {
			b.ints[i] = append(b.ints[i], v)
		}
	}
	set(0, true, int64(r)*1000-5000, "")
	set(1, true, int64(r%3-1), "")
	set(2, true, 0, fmt.Sprintf("comm-%d", r%5))
	set(3, r%4 != 0, 0, "probe")
	set(4, r%2 == 0, int64(r%7)-3, "")
	set(5, r%3 != 1, int64(math.MaxUint64-uint64(r)), "")
	set(6, r%10 < 8, 0, fmt.Sprintf("w%d", r*7919%5003))
	set(7, false, 0, "")
	set(8, false, 0, "")
	set(9, true, 0, "only")
}

// want is the value of column i of row r as parquet-go reads it.
func want(b *batch, i, r int) string {
	if b.defs[i] != nil && b.defs[i][r] == 0 {
		return "null"
	}
	switch sinkColumns[i].Type {
	case String:
		return b.strs[i][r]
	case Uint64:
		return fmt.Sprint(uint64(b.ints[i][r]))
	}
	return fmt.Sprint(b.ints[i][r])
}

func got(v pq.Value, typ Type) string {
	switch {
	case v.IsNull():
		return "null"
	case typ == String:
		return string(v.ByteArray())
	case typ == Uint64:
		return fmt.Sprint(v.Uint64())
	case typ == Int32:
		return fmt.Sprint(v.Int32())
	}
	return fmt.Sprint(v.Int64())
}

// TestSinkRoundTrip writes row groups of several pages and a short last
// one, and reads every value, the statistics and the metadata back with
// parquet-go.
func TestSinkRoundTrip(t *testing.T) {
	sizes := []int{pageRows*2 + 17, 1000, 1}
	if testing.Short() {
		sizes = []int{pageRows + 17, 1} // still pages of a group, and a short group
	}
	var out bytes.Buffer
	s := newSink(&out, sinkColumns)
	var groups []*batch
	row := 0
	for _, n := range sizes {
		b := newBatch(sinkColumns, n)
		for k := 0; k < n; k++ {
			sinkRow(b, row)
			row++
		}
		if err := s.writeRowGroup(b); err != nil {
			t.Fatal(err)
		}
		groups = append(groups, b)
	}
	if err := s.close([][2]string{{"k1", "v1"}, {"gprobe.schema", "1"}}); err != nil {
		t.Fatal(err)
	}

	f, err := pq.OpenFile(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != int64(row) || len(f.RowGroups()) != len(sizes) {
		t.Fatalf("%d rows in %d row groups, want %d in %d", f.NumRows(), len(f.RowGroups()), row, len(sizes))
	}
	if v, ok := f.Lookup("k1"); !ok || v != "v1" {
		t.Errorf("metadata k1 = %q", v)
	}
	// The types as parquet-go wrote them: logical and converted
	// annotations on every column (String() shows the logical type).
	var cols []string
	for _, fl := range f.Schema().Fields() {
		cols = append(cols, fmt.Sprintf("%s %v optional=%v", fl.Name(), fl.Type(), fl.Optional()))
	}
	if got, want := strings.Join(cols, ", "), "ts INT(64,true) optional=false, cpu INT(32,true) optional=false, comm STRING optional=false, "+
		"system STRING optional=true, small INT(64,true) optional=true, addr INT(64,false) optional=true, word STRING optional=true, "+
		"never INT(64,false) optional=true, nothing STRING optional=true, one STRING optional=false"; got != want {
		t.Errorf("columns\n %s\nwant\n %s", got, want)
	}
	for i, fl := range f.Schema().Fields() {
		conv := map[Type]deprecated.ConvertedType{Int32: deprecated.Int32, Int64: deprecated.Int64, Uint64: deprecated.Uint64, String: deprecated.UTF8}[sinkColumns[i].Type]
		if ct := fl.Type().ConvertedType(); ct == nil || *ct != conv {
			t.Errorf("column %s: converted type %v, want %d", fl.Name(), ct, conv)
		}
	}
	for g, rg := range f.RowGroups() {
		b := groups[g]
		rows := rg.Rows()
		buf := make([]pq.Row, 100)
		r := 0
		for r < b.n {
			n, err := rows.ReadRows(buf)
			for _, pr := range buf[:n] {
				for _, v := range pr {
					i := v.Column()
					if w, gv := want(b, i, r), got(v, sinkColumns[i].Type); w != gv {
						t.Fatalf("row group %d row %d column %s: %s, want %s", g, r, sinkColumns[i].Name, gv, w)
					}
				}
				r++
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		rows.Close()
		if r != b.n {
			t.Fatalf("row group %d: %d rows read, want %d", g, r, b.n)
		}
		for i, cc := range rg.ColumnChunks() {
			var nulls int64
			lo, hi := "", ""
			for r := 0; r < b.n; r++ {
				w := want(b, i, r)
				if w == "null" {
					nulls++
					continue
				}
				if lo == "" || cmpValues(sinkColumns[i].Type, w, lo) < 0 {
					lo = w
				}
				if hi == "" || cmpValues(sinkColumns[i].Type, w, hi) > 0 {
					hi = w
				}
			}
			fc := cc.(*pq.FileColumnChunk)
			if n := fc.NullCount(); n != nulls {
				t.Errorf("row group %d column %s: null count %d, want %d", g, sinkColumns[i].Name, n, nulls)
			}
			min, max, ok := fc.Bounds()
			if ok != (lo != "") {
				t.Errorf("row group %d column %s: bounds %v, want %v", g, sinkColumns[i].Name, ok, lo != "")
				continue
			}
			if ok && (got(min, sinkColumns[i].Type) != lo || got(max, sinkColumns[i].Type) != hi) {
				t.Errorf("row group %d column %s: bounds %v..%v, want %s..%s", g, sinkColumns[i].Name, min, max, lo, hi)
			}
		}
	}
}

// cmpValues compares two values of a column as want prints them.
func cmpValues(typ Type, a, b string) int {
	switch typ {
	case String:
		return cmp.Compare(a, b)
	case Uint64:
		var x, y uint64
		fmt.Sscan(a, &x)
		fmt.Sscan(b, &y)
		return cmp.Compare(x, y)
	}
	var x, y int64
	fmt.Sscan(a, &x)
	fmt.Sscan(b, &y)
	return cmp.Compare(x, y)
}

// TestSinkEmpty: a file without rows (recordings without events) has the
// schema, the metadata and no row group.
func TestSinkEmpty(t *testing.T) {
	var out bytes.Buffer
	s := newSink(&out, sinkColumns)
	if err := s.close([][2]string{{"k1", "v1"}}); err != nil {
		t.Fatal(err)
	}
	f, err := pq.OpenFile(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != 0 || len(f.RowGroups()) != 0 || len(f.Schema().Fields()) != len(sinkColumns) {
		t.Errorf("%d rows, %d row groups, %d columns", f.NumRows(), len(f.RowGroups()), len(f.Schema().Fields()))
	}
	if v, ok := f.Lookup("k1"); !ok || v != "v1" {
		t.Errorf("metadata k1 = %q", v)
	}
}
