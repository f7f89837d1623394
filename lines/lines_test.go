package lines

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTailCmp(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"/src/fs/open.c", "fs/open.c", true},
		{"fs/open.c", "/src/fs/open.c", true},
		{"/src/fs/open.c", "s/open.c", true}, // perf compares bytes, not path components
		{"/src/fs/open.c", "read_write.c", false},
	} {
		if got := TailCmp(c.a, c.b); got != c.want {
			t.Errorf("TailCmp(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

// TestStmtRowAt pins libdw cu_getsrc_die's behaviour, quirks included.
func TestStmtRowAt(t *testing.T) {
	u := &Unit{Files: []string{"???", "a.c"}, Rows: []Row{
		{Addr: 0x10, File: 1, Line: 1, IsStmt: true},
		{Addr: 0x14, File: 1, Line: 2, IsStmt: false},
		{Addr: 0x14, File: 1, Line: 3, IsStmt: true},
		{Addr: 0x18, File: 1, Line: 4, IsStmt: false},
		{Addr: 0x20, File: 1, Line: 5, IsStmt: true},
		{Addr: 0x30, File: 1, Line: 5, IsStmt: true, EndSeq: true},
	}}
	cases := []struct {
		addr uint64
		line int
	}{
		{0x10, 0}, // the first row: libdw steps off the front and finds nothing
		{0x14, 3}, // first is_stmt row at the address
		{0x16, 3}, // between rows: the row covering it
		{0x18, 0}, // no is_stmt row at or before within the same address
		{0x20, 5},
		{0x08, 0},
	}
	for _, c := range cases {
		r := u.stmtRowAt(c.addr)
		got := 0
		if r != nil {
			got = r.Line
		}
		if got != c.line {
			t.Errorf("stmtRowAt(%#x) = line %d, want %d", c.addr, got, c.line)
		}
	}
}

func TestSortRows(t *testing.T) {
	rows := []Row{{Addr: 8, Line: 1}, {Addr: 4, Line: 2}, {Addr: 8, Line: 3, EndSeq: true}, {Addr: 8, Line: 4}}
	SortRows(rows)
	var got []int
	for _, r := range rows {
		got = append(got, r.Line)
	}
	if want := []int{2, 3, 1, 4}; !equalInts(got, want) {
		t.Errorf("order %v, want %v (end_sequence first at equal addresses, else stable)", got, want)
	}
	if !rows[len(rows)-1].EndSeq {
		t.Error("last row must be marked end_sequence, as libdw does")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func writeSource(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "src.c")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRender(t *testing.T) {
	long := strings.Repeat("x", 600)
	src := writeSource(t, "int f(void)\n{\n\tint a;\n"+long+"\n\treturn a;\n}\n\nint g;\n")
	l := &Listing{Function: "f", Start: 1, End: OpenEnd, Offset: 1, Lines: []int{1, 4, 5}}
	var b bytes.Buffer
	if err := Render(&b, l, src, false); err != nil {
		t.Fatal(err)
	}
	want := "<f@" + src + ":0>\n" +
		"      0  int f(void)\n" +
		"         {\n" +
		"         \tint a;\n" +
		"      3  " + long + "\n" +
		"      4  \treturn a;\n" +
		"         }\n" +
		"         \n" +
		"         int g;\n" // two more lines after the last probe-able one, then end
	if b.String() != want {
		t.Errorf("Render:\n%q\nwant\n%q", b.String(), want)
	}
}

func TestRenderShortSource(t *testing.T) {
	src := writeSource(t, "a\nb\n")
	l := &Listing{Path: "x", Start: 1, End: 10, Lines: []int{1, 5}}
	var b bytes.Buffer
	err := Render(&b, l, src, false)
	if !errors.Is(err, ErrShortSource) {
		t.Fatalf("err = %v, want ErrShortSource", err)
	}
}

func TestSourcePath(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "fs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fs", "open.c"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := SourcePath("fs/open.c", "/nonexistent/build", dir)
	if err != nil || got != dir+"/fs/open.c" {
		t.Errorf("with prefix: %q, %v", got, err)
	}
	got, err = SourcePath("/build/linux/fs/open.c", "", dir)
	if err != nil || got != dir+"//fs/open.c" {
		t.Errorf("stripping leading components (perf keeps the double slash): %q, %v", got, err)
	}
	if _, err := SourcePath("fs/open.c", "/nonexistent/build", ""); !errors.Is(err, ErrSourceNotFound) {
		t.Errorf("comp_dir only: %v", err)
	}
	got, err = SourcePath("fs/open.c", dir, "")
	if err != nil || got != dir+"/fs/open.c" {
		t.Errorf("comp_dir: %q, %v", got, err)
	}
}

func FuzzReadTable(f *testing.F) {
	f.Add([]byte{0x20, 0, 0, 0, 4, 0, 0x10, 0, 0, 0, 1, 1, 1, 0xfb, 0x0e, 0x0d, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 'a', 0, 0, 0, 0, 0})
	f.Add([]byte{0x30, 0, 0, 0, 5, 0, 8, 0, 0x10, 0, 0, 0, 1, 1, 1, 0xfb, 0x0e, 0x0d, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1, 8, 1, 'd', 0, 1, 1, 8, 1, 'f', 0, 0, 2, 9, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		tab, err := ReadTable(Sections{Line: b, Order: binary.LittleEndian}, 0, "/cd", 8)
		if err != nil {
			if tab != nil {
				t.Fatal("table with error")
			}
			return
		}
		for _, r := range tab.Rows {
			_ = r
		}
		u := &Unit{Files: tab.Files, Rows: tab.Rows}
		SortRows(u.Rows)
		_ = u.WalkLines(nil, func(string, int, uint64) error { return nil })
		for _, r := range u.Rows {
			u.LineInfo(r.Addr)
		}
	})
}
