package dwarfinfo

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/go-delve/delve/pkg/dwarf/frame"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/dwarfindex"
	"github.com/gprobe/gprobe/resolve/spec"
)

// images are the fixtures and their copies with compressed debug sections.
func images(t *testing.T) []string {
	t.Helper()
	var out []string
	for i, p := range fixtures(t) {
		out = append(out, p, testenv.Compressed(t, p, testenv.CompressionForms[i%len(testenv.CompressionForms)]))
	}
	return out
}

func openCached(t testing.TB, path string, c *dwarfindex.Cache, warn func(string)) *File {
	t.Helper()
	f, err := OpenWith(path, Options{Cache: c, Warn: warn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// answers renders what the index stands in for: unit headers, FindFuncs
// for every name given (and a few globs), UnitsWithFile for every file
// name given, and the symbol table in address order.
func answers(t testing.TB, f *File, names, files []string) string {
	t.Helper()
	var b strings.Builder
	units, err := f.unitHeaders()
	fmt.Fprintf(&b, "units %v %v\n", units, err)
	globs := []string{"*", "vfs_*", "*read*", "__*", "?"}
	for _, n := range append(append([]string{}, names...), globs...) {
		match := ExactName(n)
		if strings.ContainsAny(n, "*?") {
			pat := n
			match = func(b []byte) bool { return spec.GlobMatch(string(b), pat) }
		}
		refs, err := f.FindFuncs(match, false)
		first, ferr := f.FindFuncs(match, true)
		fmt.Fprintf(&b, "func %q %v %v first %v %v\n", n, refs, err, first, ferr)
	}
	for _, n := range append(append([]string{}, files...), "read_write.c", "fs/open.c", "nosuch.c", "h") {
		us, err := f.UnitsWithFile(n)
		fmt.Fprintf(&b, "file %q %v %v\n", n, us, err)
	}
	s, err := f.SortedSymbols()
	fmt.Fprintf(&b, "symbols %v\n", err)
	for i := 0; s != nil && i < s.Len(); i++ {
		fmt.Fprintf(&b, "%s %#x %d\n", s.At(i).RawName, s.Value(i), s.At(i).Size)
	}
	return b.String()
}

// TestIndexMatchesWalk: with the index (built, then loaded) every answer it
// stands in for is the walk's answer, on every fixture and its compressed
// copy.
func TestIndexMatchesWalk(t *testing.T) {
	for _, img := range images(t) {
		t.Run(filepath.Base(img), func(t *testing.T) {
			plain := open(t, img)
			idx := dwarfindex.New(t.TempDir())
			// Every name and file the walks know, from a fresh index.
			built := openCached(t, img, idx, func(s string) { t.Error(s) })
			var names, files []string
			units, _ := built.unitHeaders()
			x := built.indexed()
			// A walk through every unit builds the function index.
			if err := built.EachFuncs(func([]byte) bool { return false }, nil); err != nil || built.storedFuncIndex() == nil || built.fileIndex(units) == nil {
				t.Fatalf("no index built: %v", err)
			}
			for i := 0; i < x.Funcs.Len(); i++ {
				names = append(names, string(x.Funcs.Name(i)))
			}
			for i := 0; i < x.Files.Len(); i++ {
				files = append(files, string(x.Files.Name(i)))
			}
			want := answers(t, plain, names, files)
			if got := answers(t, built, names, files); got != want {
				t.Fatalf("with a new index:\n%s", firstDiff(got, want))
			}
			loaded := openCached(t, img, idx, func(s string) { t.Error(s) })
			if loaded.idx.x == nil || loaded.idx.x.Funcs == nil || loaded.idx.x.Units == nil || loaded.idx.x.SymOrder == nil {
				t.Fatal("the index was not loaded")
			}
			if got := answers(t, loaded, names, files); got != want {
				t.Fatalf("with a loaded index:\n%s", firstDiff(got, want))
			}
			t.Logf("%d names, %d file names", len(names), len(files))
		})
	}
}

// TestIndexVmlinux checks the index of the real vmlinux on a sample of
// names (the walk takes a fifth of a second per name).
func TestIndexVmlinux(t *testing.T) {
	path, _ := testenv.RequireVmlinux(t, testenv.Linux61)
	names := []string{"vfs_read", "do_sys_openat2", "kmalloc", "IS_ERR", "tcp_sendmsg", "schedule", "nosuch"}
	files := []string{"fs/read_write.c", "include/linux/slab.h"}
	want := answers(t, open(t, path), names, files)
	c := dwarfindex.New(t.TempDir())
	var f *File
	for _, state := range []string{"built", "loaded"} {
		f = openCached(t, path, c, func(s string) { t.Error(s) })
		if got := answers(t, f, names, files); got != want {
			t.Fatalf("with the index %s:\n%s", state, firstDiff(got, want))
		}
	}
	st, err := os.Stat(c.IndexPath(f.key))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("index: %d bytes", st.Size())
}

// TestDamagedIndexIsRebuilt: a damaged index file is reported in one line,
// ignored, and replaced by a sound one; the answers do not change.
func TestDamagedIndexIsRebuilt(t *testing.T) {
	img := fixtures(t)[0]
	want := answers(t, open(t, img), []string{"vfs_read"}, nil)
	c := dwarfindex.New(t.TempDir())
	path := c.IndexPath(openCached(t, img, c, nil).key)
	_ = answers(t, openCached(t, img, c, nil), []string{"vfs_read"}, nil)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{nil, good[:len(good)/2], append(bytes.Clone(good[:len(good)-1]), good[len(good)-1]^1)} {
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		var warnings []string
		f := openCached(t, img, c, func(s string) { warnings = append(warnings, s) })
		if got := answers(t, f, []string{"vfs_read"}, nil); got != want {
			t.Fatalf("with a damaged index:\n%s", firstDiff(got, want))
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], path) || !strings.Contains(warnings[0], "rebuilding") {
			t.Errorf("warnings %q, want one line naming %s", warnings, path)
		}
		if x, err := c.Load(f.key); err != nil {
			t.Errorf("not rebuilt: %v", err)
		} else {
			x.Close()
		}
	}
}

// TestConcurrentRuns: runs that build and read one image's index at the
// same time all answer right, and leave a sound index.
func TestConcurrentRuns(t *testing.T) {
	img := fixtures(t)[0]
	want := answers(t, open(t, img), []string{"vfs_read", "do_sys_open"}, []string{"fs/open.c"})
	c := dwarfindex.New(t.TempDir())
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := OpenWith(img, Options{Cache: c, Warn: func(s string) { t.Error(s) }})
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			if got := answers(t, f, []string{"vfs_read", "do_sys_open"}, []string{"fs/open.c"}); got != want {
				t.Errorf("concurrent run:\n%s", firstDiff(got, want))
			}
		}()
	}
	wg.Wait()
	x, err := c.Load(openCached(t, img, c, nil).key)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if x.Units == nil || x.Funcs == nil || x.Files == nil || x.SymOrder == nil {
		t.Error("the index lacks parts every run computed")
	}
}

// TestCompressedMatchesPlain: every section and every unit of a copy with
// compressed debug sections reads as the original's, inflated into the
// cache once (a damaged copy there is reported and inflated again) or,
// without a cache, into scratch files.
func TestCompressedMatchesPlain(t *testing.T) {
	for i, img := range fixtures(t) {
		for _, form := range testenv.CompressionForms {
			if i >= 4 && form != testenv.CompressionForms[i%3] {
				continue // every form on four fixtures, one on the others
			}
			z := testenv.Compressed(t, img, form)
			t.Run(filepath.Base(z), func(t *testing.T) {
				plain := open(t, img)
				c := dwarfindex.New(t.TempDir())
				// Without a cache, small sections are inflated into
				// memory, large ones into scratch files.
				defer func(n uint64) { scratchMin = n }(scratchMin)
				for _, mode := range []string{"memory", "scratch", "cache"} {
					f := openCached(t, z, c, func(s string) { t.Error(s) })
					if mode != "cache" {
						f = open(t, z)
					}
					if scratchMin = 1 << 62; mode == "scratch" {
						scratchMin = 0
					}
					if len(f.compressed) == 0 {
						t.Fatal("no compressed section")
					}
					for name := range f.compressed {
						if !bytes.Equal(f.Section(name), plain.Section(name)) {
							t.Fatalf("%s differs", name)
						}
					}
					compareUnits(t, plain, f)
					for name := range f.compressed {
						if in := f.inflations[name]; (in.fd != nil) != (mode != "memory") {
							t.Errorf("%s: %s inflated into a file: %v", mode, name, in.fd != nil)
						}
					}
					f.Close()
				}
				// The cache holds every inflated section now.
				f := openCached(t, z, c, func(s string) { t.Error(s) })
				for name, cs := range f.compressed {
					if in := f.inflation(name, cs); in.have != cs.size || !in.mmap {
						t.Errorf("%s was not read from the cache", name)
					}
				}
				// A damaged copy: one line, inflated again.
				dir := filepath.Dir(c.IndexPath(f.key))
				if err := os.Truncate(filepath.Join(dir, "debug_info-v2"), 10); err != nil {
					t.Fatal(err)
				}
				var warnings []string
				f = openCached(t, z, c, func(s string) { warnings = append(warnings, s) })
				compareUnits(t, plain, f)
				if len(warnings) != 1 || !strings.Contains(warnings[0], "debug_info") {
					t.Errorf("warnings %q, want one about debug_info", warnings)
				}
			})
		}
	}
}

func compareUnits(t *testing.T, plain, f *File) {
	t.Helper()
	want, err := plain.unitHeaders()
	if err != nil {
		t.Fatal(err)
	}
	units, err := f.unitHeaders()
	if err != nil || fmt.Sprint(units) != fmt.Sprint(want) {
		t.Fatalf("unit headers %v, %v; want %v", units, err, want)
	}
	for i := range units {
		a, err := f.Unit(i)
		if err != nil {
			t.Fatal(err)
		}
		b, err := plain.Unit(i)
		if err != nil {
			t.Fatal(err)
		}
		if x, y := dumpUnit(a.Lines), dumpUnit(b.Lines); x != y {
			t.Fatalf("unit %d: %s", i, firstDiff(x, y))
		}
		d, err := a.unitData()
		if err != nil || d == nil {
			t.Fatalf("unit %d: debug/dwarf view: %v", i, err)
		}
	}
}

// TestCFIMatchesDelve compares the FDE table and the CFA rules with delve's
// parser (which gprobe used before): for every FDE, at its start, middle
// and last byte.
func TestCFIMatchesDelve(t *testing.T) {
	imgs := fixtures(t)
	for _, cc := range []string{"gcc", "aarch64-linux-gnu-gcc"} {
		imgs = append(imgs, testenv.BuildC(t, cc, "../../../cmd/gprobe/testdata/uprobe/prog.c", "prog-"+cc, "-O2", "-g"))
	}
	if p := testenv.Linux61.Vmlinux(); fileExists(p) {
		imgs = append(imgs, p)
	}
	for _, img := range imgs {
		t.Run(filepath.Base(img), func(t *testing.T) {
			f := open(t, img)
			checked := 0
			for _, name := range []string{".eh_frame", ".debug_frame"} {
				s := f.ELF.Section(name)
				if s == nil {
					continue
				}
				var ehAddr uint64
				if name == ".eh_frame" {
					if ehAddr = s.Addr; ehAddr == 0 {
						ehAddr = 1
					}
				}
				ptr := 8
				if f.ELF.Class == 1 {
					ptr = 4
				}
				fdes, err := frame.Parse(f.Section(name), f.Order, 0, ptr, ehAddr)
				if err != nil {
					t.Fatal(err)
				}
				fdes = frame.FrameDescriptionEntries{}.Append(fdes)
				for _, fde := range fdes {
					if fde.End() <= fde.Begin() {
						continue
					}
					for _, pc := range []uint64{fde.Begin(), fde.Begin() + (fde.End()-fde.Begin())/2, fde.End() - 1} {
						ok, err := f.CFICovers(pc)
						if !ok || err != nil {
							t.Fatalf("%s: CFICovers(%#x) = %v, %v", name, pc, ok, err)
						}
						if name == ".debug_frame" && f.ELF.Section(".eh_frame") != nil {
							continue // .eh_frame answers first
						}
						want, _ := delveFDE(fde, pc, f)
						reg, off, ok, err := f.CFA(pc)
						if err != nil || ok != !want.expr || ok && (reg != want.reg || off != want.off) {
							t.Fatalf("%s: CFA(%#x) = %d%+d %v %v, delve's FDE gives %+v", name, pc, reg, off, ok, err, want)
						}
						checked++
					}
				}
			}
			if f.HasCFI() && checked == 0 {
				t.Fatal("nothing checked")
			}
			t.Logf("%d addresses", checked)
		})
	}
}

// delveFDE runs the CFA program of an FDE as delve parsed it.
func delveFDE(fde *frame.FrameDescriptionEntry, pc uint64, f *File) (cfaRule, error) {
	e := &fdeEntry{cie: &cie{codeAlign: fde.CIE.CodeAlignmentFactor, dataAlign: fde.CIE.DataAlignmentFactor,
		initial: fde.CIE.InitialInstructions}, begin: fde.Begin(), size: fde.End() - fde.Begin(), instructions: fde.Instructions}
	return cfaAt(e, pc, f)
}

// TestSortedSymbols: the address order is a stable sort by address.
func TestSortedSymbols(t *testing.T) {
	for _, img := range fixtures(t) {
		f := open(t, img)
		var want []Symbol
		f.Symbols(func(s Symbol) { want = append(want, s) })
		slices.SortStableFunc(want, func(a, b Symbol) int { return cmp.Compare(a.Value, b.Value) })
		s, err := f.SortedSymbols()
		if err != nil || s.Len() != len(want) {
			t.Fatalf("%s: %v, %d symbols, want %d", img, err, s.Len(), len(want))
		}
		for i := range want {
			if got := s.At(i); fmt.Sprint(got) != fmt.Sprint(want[i]) || s.Value(i) != want[i].Value {
				t.Fatalf("%s: symbol %d is %+v, want %+v", img, i, got, want[i])
			}
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestReleaseSymbolPages: the symbols read after their pages are given
// back, and the names read before, are what they were.
func TestReleaseSymbolPages(t *testing.T) {
	for _, img := range fixtures(t) {
		f := open(t, img)
		var before []Symbol
		var names []string
		f.Symbols(func(s Symbol) {
			before = append(before, s)
			names = append(names, unsafe.String(unsafe.SliceData(s.RawName), len(s.RawName)))
		})
		want := fmt.Sprint(before)
		f.ReleaseSymbolPages(true)
		if got := fmt.Sprint(before); got != want {
			t.Fatalf("%s: names read before differ after release", img)
		}
		var after []Symbol
		f.Symbols(func(s Symbol) { after = append(after, s) })
		if got := fmt.Sprint(after); got != want {
			t.Fatalf("%s: symbols differ after release", img)
		}
		for i, n := range names {
			if n != string(before[i].RawName) {
				t.Fatalf("%s: name %d differs", img, i)
			}
		}
	}
}

// TestIndexOnlyFromLongWalks: a walk its caller stops in the first half of
// the units keeps no function index (the answer does not pay for the rest
// of the units), one stopped in the second half finishes the units and
// keeps it, as does a whole walk; the answers are the plain walk's.
func TestIndexOnlyFromLongWalks(t *testing.T) {
	img := fixtures(t)[0]
	plain := open(t, img)
	units, err := plain.unitHeaders()
	if err != nil {
		t.Fatal(err)
	}
	// The first unit defining each function.
	first := map[string]int{}
	s := plain.newScanner()
	for i := range units {
		un, err := s.unitNames(i, &units[i])
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range un.refs {
			if _, seen := first[string(un.names[r.start:r.end])]; !seen {
				first[string(un.names[r.start:r.end])] = i
			}
		}
	}
	var early, late string
	for name, u := range first {
		if 2*(u+1) < len(units) && (early == "" || name < early) {
			early = name
		}
		if 2*(u+1) >= len(units) && (late == "" || name < late) {
			late = name
		}
	}
	if early == "" || late == "" {
		t.Fatalf("%s: no function first defined in each half of its %d units", img, len(units))
	}
	for _, c := range []struct {
		name      string
		firstOnly bool
		indexed   bool
	}{{early, true, false}, {late, true, true}, {early, false, true}} {
		cache := dwarfindex.New(t.TempDir())
		f := openCached(t, img, cache, func(s string) { t.Error(s) })
		want, werr := plain.FindFuncs(ExactName(c.name), c.firstOnly)
		got, err := f.FindFuncs(ExactName(c.name), c.firstOnly)
		if fmt.Sprint(got, err) != fmt.Sprint(want, werr) {
			t.Errorf("%s (first unit only %v): %v %v, the plain walk %v %v", c.name, c.firstOnly, got, err, want, werr)
		}
		if indexed := f.storedFuncIndex() != nil; indexed != c.indexed {
			t.Errorf("%s (first unit only %v, first unit %d of %d): function index kept %v, want %v",
				c.name, c.firstOnly, first[c.name], len(units), indexed, c.indexed)
		}
	}
}
