package dwarfinfo

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/dwarfindex"
)

func fixtures(t testing.TB) []string {
	t.Helper()
	m, _ := filepath.Glob("../../../testdata/vmlinux-fixtures/*.elf")
	if len(m) == 0 {
		t.Fatal("no fixtures")
	}
	return m
}

func open(t testing.TB, path string) *File {
	t.Helper()
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// stdlibDWARF opens path with debug/elf and returns its debug/dwarf data,
// the oracle the fast decoders are compared with.
func stdlibDWARF(t testing.TB, path string) *dwarf.Data {
	t.Helper()
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ef.Close() })
	d, err := ef.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestScopesMatchStdlib decodes every unit of every fixture twice, with the
// fast scanner (decodeScopes) and with debug/dwarf (decodeUnit), and
// requires identical scope trees and line tables.
func TestScopesMatchStdlib(t *testing.T) {
	for _, path := range fixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f := open(t, path)
			units, scopes := matchStdlib(t, f, dumpUnit)
			if scopes == 0 {
				t.Fatal("no scopes decoded")
			}
			t.Logf("%d units, %d scopes identical", len(units), scopes)
		})
	}
}

// matchStdlib decodes every unit of f with the fast scanner and with
// debug/dwarf and requires the same dump of each; it returns the units and
// the number of scopes.
func matchStdlib(t *testing.T, f *File, dump func(*lines.Unit) string) ([]unitHeader, int) {
	t.Helper()
	units, err := f.unitHeaders()
	if err != nil {
		t.Fatal(err)
	}
	scopes := 0
	for i := range units {
		fast, err := f.decodeScopes(i, &units[i])
		if err != nil {
			t.Fatalf("unit %d: %v", i, err)
		}
		slow, err := f.decodeUnit(i, &units[i])
		if err != nil {
			t.Fatalf("unit %d (stdlib): %v", i, err)
		}
		if a, b := dump(fast.Lines), dump(slow.Lines); a != b {
			t.Fatalf("unit %d (%s) differs from debug/dwarf:\n%s", i, fast.Lines.Name, firstDiff(a, b))
		}
		scopes += len(fast.Scopes)
	}
	return units, scopes
}

func dumpUnit(u *lines.Unit) string {
	var b strings.Builder
	rows, err := u.AllRows()
	fmt.Fprintf(&b, "unit %s dir %s files %q rows %d %v %v\n", u.Name, u.CompDir, u.Files, len(rows), err, rows)
	var dump func(s *lines.Scope, depth int)
	dump = func(s *lines.Scope, depth int) {
		fmt.Fprintf(&b, "%*s%d %#x %q %q decl %d:%d call %d:%d origin %#x/%d:%d decl=%v inline=%v entry=%v:%#x ranges=%v %x high %#x\n",
			depth*2, "", s.Kind, s.Offset, s.Name, s.Linkage, s.DeclFile, s.DeclLine, s.CallFile, s.CallLine,
			s.Origin, s.OriginDeclFile, s.OriginDeclLine, s.Declaration, s.HasInline, s.HasEntryPC, s.EntryPC,
			s.HasRanges, s.Ranges, s.HighPC)
		for _, c := range s.Children {
			dump(c, depth+1)
		}
	}
	for _, f := range u.Funcs {
		dump(f, 0)
	}
	return b.String()
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n fast:   %s\n stdlib: %s", i, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(al), len(bl))
}

// TestFindFuncsMatchesStdlib checks the scanner's function index against a
// full debug/dwarf walk: for every top-level subprogram definition name,
// the same DIEs in the same order.
func TestFindFuncsMatchesStdlib(t *testing.T) {
	for _, path := range fixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			d := stdlibDWARF(t, path)
			want := map[string][]uint64{}
			r := d.Reader()
			names := map[dwarf.Offset]string{}
			type pending struct {
				off    dwarf.Offset
				origin dwarf.Offset
			}
			var unnamed []pending
			for {
				e, err := r.Next()
				if err != nil {
					t.Fatal(err)
				}
				if e == nil {
					break
				}
				if e.Tag == dwarf.TagCompileUnit {
					continue
				}
				if e.Tag == dwarf.TagSubprogram {
					name, _ := e.Val(dwarf.AttrName).(string)
					names[e.Offset] = name
					decl, _ := e.Val(dwarf.AttrDeclaration).(bool)
					def := !decl && (e.AttrField(dwarf.AttrInline) != nil || e.AttrField(dwarf.AttrLowpc) != nil ||
						e.AttrField(dwarf.AttrEntrypc) != nil || e.AttrField(dwarf.AttrRanges) != nil)
					if def {
						if name != "" {
							want[name] = append(want[name], uint64(e.Offset))
						} else if o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
							unnamed = append(unnamed, pending{e.Offset, o})
						} else if o, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset); ok {
							unnamed = append(unnamed, pending{e.Offset, o})
						}
					}
				}
				if e.Children {
					r.SkipChildren()
				}
			}
			for _, p := range unnamed {
				if n := names[p.origin]; n != "" {
					want[n] = append(want[n], uint64(p.off))
				}
			}
			f := open(t, path)
			checked := 0
			for name, offs := range want {
				sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
				refs, err := f.FindFuncs(ExactName(name), false)
				if err != nil {
					t.Fatal(err)
				}
				var got []uint64
				for _, r := range refs {
					got = append(got, r.Offset)
				}
				if fmt.Sprint(got) != fmt.Sprint(offs) {
					t.Errorf("%s: scanner found %x, debug/dwarf %x", name, got, offs)
				}
				checked++
			}
			if checked < 20 {
				t.Fatalf("only %d names checked", checked)
			}
		})
	}
}

// TestLineTablesMatchStdlib compares our line-program decoder with
// debug/dwarf's LineReader row by row (address, line, is_stmt,
// end_sequence, and file name modulo path joining).
func TestLineTablesMatchStdlib(t *testing.T) {
	for _, path := range fixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			d := stdlibDWARF(t, path)
			f := open(t, path)
			secs := lines.Sections{Line: f.Section(".debug_line"), Str: f.Section(".debug_str"), LineStr: f.Section(".debug_line_str"), Order: f.Order}
			r := d.Reader()
			rows := 0
			for {
				cu, err := r.Next()
				if err != nil || cu == nil {
					break
				}
				r.SkipChildren()
				off, ok := cu.Val(dwarf.AttrStmtList).(int64)
				if !ok {
					continue
				}
				compDir, _ := cu.Val(dwarf.AttrCompDir).(string)
				tab, err := lines.ReadTable(secs, uint64(off), compDir, 8)
				if err != nil {
					t.Fatal(err)
				}
				lr, err := d.LineReader(cu)
				if err != nil {
					t.Fatal(err)
				}
				var e dwarf.LineEntry
				for i := 0; ; i++ {
					if err := lr.Next(&e); err != nil {
						if i != len(tab.Rows) {
							t.Fatalf("%s: stdlib has %d rows, we have %d", cu.Val(dwarf.AttrName), i, len(tab.Rows))
						}
						break
					}
					if i >= len(tab.Rows) {
						t.Fatalf("row %d missing", i)
					}
					g := tab.Rows[i]
					if g.Addr != e.Address || g.Line != e.Line || g.IsStmt != e.IsStmt || g.EndSeq != e.EndSequence {
						t.Fatalf("row %d: ours %+v, stdlib %+v", i, g, e)
					}
					if e.File != nil && filepath.Base(tab.Files[g.File]) != filepath.Base(e.File.Name) {
						t.Fatalf("row %d: file %q vs %q", i, tab.Files[g.File], e.File.Name)
					}
					rows++
				}
			}
			if rows == 0 {
				t.Fatal("no rows compared")
			}
		})
	}
}

func TestOpenRejectsGarbage(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(fixtures(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"empty":     {},
		"text":      []byte("this is not an ELF file, just some text that is long enough to pass the size check\n"),
		"truncated": data[:len(data)/3],
		"header":    data[:64],
	}
	for name, b := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Open(p)
		if err != nil {
			continue // refused up front: fine
		}
		// Opened: every query must fail cleanly, never panic.
		if _, err := f.FindFuncs(ExactName("vfs_read"), false); err == nil && name != "truncated" {
			t.Errorf("%s: FindFuncs succeeded on garbage", name)
		}
		f.Close()
	}
}

// FuzzUnit patches a fixture's debug sections (the fuzzer chooses where
// and with what) and runs the whole decode path on it: no input may make
// it panic or hang.
func FuzzUnit(f *testing.F) {
	fuzzImage(f, "../../../testdata/vmlinux-fixtures/x86_64-dwarf5-O0.elf")
}

// FuzzLocations is FuzzUnit on an optimized image, whose variables have
// location lists (.debug_loclists) rather than single expressions.
func FuzzLocations(f *testing.F) {
	fuzzImage(f, "../../../testdata/vmlinux-fixtures/x86_64-dwarf5-O2.elf")
}

// FuzzCompressed is FuzzUnit on a copy whose debug sections are
// compressed: the patches land in the compressed streams and their
// headers.
func FuzzCompressed(f *testing.F) {
	fuzzImage(f, testenv.Compressed(f, "../../../testdata/vmlinux-fixtures/x86_64-dwarf5-O2.elf", "zlib"))
}

// fuzzImage patches bytes of the debug sections of image path, then opens
// it, finds vfs_read and reads its lines and its variables' locations;
// then again through an index cache that all inputs share, so that one
// input meets the index and section copies another left (the patched
// images have the build-id and size they are cached under).
func fuzzImage(f *testing.F, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	ef, err := elf.Open(path)
	if err != nil {
		f.Fatal(err)
	}
	// The fuzzer's offsets land in the debug sections.
	var lo, hi uint64 = ^uint64(0), 0
	for _, s := range ef.Sections {
		if strings.HasPrefix(s.Name, ".debug_") {
			lo, hi = min(lo, s.Offset), max(hi, s.Offset+s.Size)
		}
	}
	ef.Close()
	f.Add(uint32(0), []byte{0xff})
	f.Add(uint32(12), []byte{0, 0, 0, 0})
	f.Add(uint32(400), []byte{0x80, 0x80, 0x80, 0x80, 0x01})
	dir := f.TempDir()
	cache := dwarfindex.New(filepath.Join(dir, "cache"))
	f.Fuzz(func(t *testing.T, at uint32, patch []byte) {
		b := append([]byte(nil), data...)
		off := lo + uint64(at)%(hi-lo)
		copy(b[off:hi], patch)
		p := filepath.Join(dir, "x.elf")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range []*dwarfindex.Cache{nil, cache} {
			fuzzQueries(p, c)
		}
	})
}

func fuzzQueries(p string, c *dwarfindex.Cache) {
	fl, err := OpenWith(p, Options{Cache: c})
	if err != nil {
		return
	}
	defer fl.Close()
	_, _ = fl.SortedSymbols()
	_, _ = fl.CFICovers(0xffffffff81000100)
	_, _, _, _ = fl.CFA(0xffffffff81000100)
	_, _ = fl.UnitsWithFile("fs/read_write.c")
	_, _ = fl.UnitForAddr(0xffffffff81000100)
	refs, err := fl.FindFuncs(ExactName("vfs_read"), false)
	if err != nil {
		return
	}
	for _, r := range refs {
		cu, err := fl.Unit(r.Unit)
		if err != nil {
			continue
		}
		_ = cu.Lines.WalkLines(nil, func(string, int, uint64) error { return nil })
		// The function's variables: DIEs, location lists and entries.
		kids, err := cu.Children(r.Offset)
		if err != nil {
			continue
		}
		for _, k := range kids {
			if fld := k.AttrField(dwarf.AttrLocation); fld != nil {
				_, _, _ = cu.Location(fld, 0xffffffff81000100)
				_, _ = cu.LocationEntries(fld)
			}
		}
	}
}

// TestScopesMatchStdlibVmlinux runs the fast/stdlib comparison on a sample
// of the real Debian vmlinux's units (every 25th), when it is there.
func TestScopesMatchStdlibVmlinux(t *testing.T) {
	path, _ := testenv.RequireVmlinux(t, testenv.Linux61)
	f := open(t, path)
	units, err := f.unitHeaders()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := 0; i < len(units); i += 25 {
		fast, err := f.decodeScopes(i, &units[i])
		if err != nil {
			t.Fatalf("unit %d: %v", i, err)
		}
		slow, err := f.decodeUnit(i, &units[i])
		if err != nil {
			t.Fatalf("unit %d (stdlib): %v", i, err)
		}
		if a, b := dumpUnit(fast.Lines), dumpUnit(slow.Lines); a != b {
			t.Fatalf("unit %d (%s) differs from debug/dwarf:\n%s", i, fast.Lines.Name, firstDiff(a, b))
		}
		n++
	}
	t.Logf("%d of %d units identical", n, len(units))
}

// TestUnitKeepsTheLast: asking for the unit decoded last gives it again
// without decoding; asking for another decodes that one and drops the
// first (asked again, it is decoded anew).
func TestUnitKeepsTheLast(t *testing.T) {
	f := open(t, fixtures(t)[0])
	units, err := f.unitHeaders()
	if err != nil || len(units) < 2 {
		t.Fatalf("%d units: %v", len(units), err)
	}
	a, err := f.Unit(0)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := f.Unit(0); again != a {
		t.Error("the unit decoded last was decoded again")
	}
	b, err := f.Unit(1)
	if err != nil || b == a || b.Index != 1 {
		t.Fatalf("unit 1: %v, %v", b, err)
	}
	c, err := f.Unit(0)
	if err != nil || c == a || c.Index != 0 || len(c.Scopes) != len(a.Scopes) {
		t.Errorf("unit 0 after unit 1: the same object %v, %d scopes (first time %d), %v", c == a, len(c.Scopes), len(a.Scopes), err)
	}
}
