package symtab

import (
	"cmp"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// TestSymbolMapFind: find through the sorted Symbol table gives what a
// search of the whole map gives, at every symbol's start, end, last byte
// and the byte before its start, on the fixtures, a user binary and the
// real vmlinux (every 20th of its symbols); each walks what all holds.
func TestSymbolMapFind(t *testing.T) {
	imgs, _ := filepath.Glob("../../../testdata/vmlinux-fixtures/*.elf")
	imgs = append(imgs, testenv.BuildC(t, "gcc", "../../../cmd/gprobe/testdata/uprobe/prog.c", "prog", "-O2", "-g"))
	if p := testenv.Linux61.Vmlinux(); fileExists(p) {
		imgs = append(imgs, p)
	}
	for _, img := range imgs {
		f, err := dwarfinfo.Open(img)
		if err != nil {
			t.Fatal(err)
		}
		sorted, err := NewMap(f, Naming{})
		if err != nil {
			t.Fatal(err)
		}
		whole, _ := NewMap(f, Naming{})
		all := whole.All()
		// each, on a map not yet made whole, walks the same symbols.
		fresh, _ := NewMap(f, Naming{})
		k := 0
		fresh.Each(func(s Symbol) bool {
			if k >= len(all) || all[k].Start != s.Start || string(all[k].Raw) != string(s.Raw) {
				t.Fatalf("%s: each's Symbol %d is %q at %#x, all's is %v", img, k, s.Raw, s.Start, all[min(k, len(all)-1)])
			}
			k++
			return true
		})
		if k != len(all) {
			t.Fatalf("%s: each walked %d symbols, all has %d", img, k, len(all))
		}
		// ByName, which walks without the whole map, finds what a filter
		// over the whole map finds, ends of zero-sized symbols included.
		for _, textOnly := range []bool{false, true} {
			byName, _ := NewMap(f, Naming{})
			got := byName.ByName(Query{Pattern: "*", TextOnly: textOnly})
			var want []Symbol
			for _, s := range all {
				if !textOnly || s.Exec {
					want = append(want, s)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%s: ByName(textOnly %v) found %d symbols, the whole map %d", img, textOnly, len(got), len(want))
			}
			for j := range got {
				if string(got[j].Raw) != string(want[j].Raw) || got[j].Start != want[j].Start || got[j].End != want[j].End {
					t.Fatalf("%s: ByName's symbol %d is %q %#x-%#x, the whole map's %q %#x-%#x", img, j,
						got[j].Raw, got[j].Start, got[j].End, want[j].Raw, want[j].Start, want[j].End)
				}
			}
		}
		n, i := 0, 0
		_ = f.Symbols(func(s dwarfinfo.Symbol) {
			if i++; f.SymbolCount() > 10000 && i%20 != 0 {
				return
			}
			for _, addr := range []uint64{s.Value - 1, s.Value, s.Value + s.Size - 1, s.Value + s.Size} {
				a, aok, done := sorted.findSorted(addr)
				if !done {
					a, aok = whole.Find(addr)
				}
				b, bok := whole.Find(addr)
				if aok != bok || string(a.Raw) != string(b.Raw) || a.Start != b.Start || a.End != b.End || a.Type != b.Type || a.Exec != b.Exec {
					t.Fatalf("%s: find(%#x) = %q %#x-%#x %v, the whole map says %q %#x-%#x %v", img, addr, a.Raw, a.Start, a.End, aok, b.Raw, b.Start, b.End, bok)
				}
				n++
			}
		})
		t.Logf("%s: %d symbols in the map, %d addresses", filepath.Base(img), len(all), n)
		f.Close()
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestNameMap: NameMap holds what the tree's Map holds, in the same order
// with the same ends, on the fixtures, a user binary, a shared library
// and, where installed, libstdc++ and libjvm (many aliases and zero-sized
// symbols).
func TestNameMap(t *testing.T) {
	imgs, _ := filepath.Glob("../../../testdata/vmlinux-fixtures/*.elf")
	imgs = append(imgs, testenv.BuildC(t, "gcc", "../../../cmd/gprobe/testdata/uprobe/prog.c", "prog", "-O2", "-g"),
		testenv.BuildC(t, "gcc", "../../../cmd/gprobe/testdata/uprobe/prog.c", "prog-O2-shared", "-O2", "-g", "-shared", "-fPIC"))
	for _, lib := range []string{"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so", "/usr/lib/x86_64-linux-gnu/libc.so.6"} {
		if !testing.Short() && fileExists(lib) {
			imgs = append(imgs, lib)
		}
	}
	for _, img := range imgs {
		f, err := dwarfinfo.Open(img)
		if err != nil {
			t.Fatal(err)
		}
		tree, err := NewTree(f, false)
		if err != nil {
			t.Fatal(err)
		}
		want := tree.Map(Naming{}).All()
		m, err := NameMap(f, Naming{})
		if err != nil {
			t.Fatal(err)
		}
		got := m.All()
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("%s: %d symbols, the tree's map %d", img, len(got), len(want))
		}
		for i := range got {
			if string(got[i].Raw) != string(want[i].Raw) || got[i].Start != want[i].Start || got[i].End != want[i].End {
				t.Fatalf("%s: symbol %d is %q %#x-%#x, the tree's %q %#x-%#x", img, i,
					got[i].Raw, got[i].Start, got[i].End, want[i].Raw, want[i].Start, want[i].End)
			}
		}
		f.Close()
	}
}

// TestSortByStart: sortByStart is a stable sort by start (slices'
// SortStableFunc), on random starts with many ties, packed or not.
func TestSortByStart(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 19, 20, 21, 500, 3000} {
		syms := make([]Symbol, n)
		for i := range syms {
			syms[i] = Symbol{Start: 0x400000 + uint64(r.IntN(n/3+1)), End: uint64(i)}
		}
		if n == 500 { // starts too far apart to pack with an index
			syms[7].Start = 1 << 62
		}
		want := slices.Clone(syms)
		slices.SortStableFunc(want, func(a, b Symbol) int { return cmp.Compare(a.Start, b.Start) })
		got := slices.Clone(syms)
		sortByStart(got)
		for i := range got {
			if got[i].Start != want[i].Start || got[i].End != want[i].End {
				t.Fatalf("n=%d: symbol %d is %#x (was %d), want %#x (was %d)", n, i, got[i].Start, got[i].End, want[i].Start, want[i].End)
			}
		}
	}
}

func BenchmarkNameMap(b *testing.B) {
	f, err := dwarfinfo.Open("/usr/bin/python3.11")
	if err != nil {
		b.Skip(err)
	}
	defer f.Close()
	for b.Loop() {
		if _, err := NameMap(f, Naming{}); err != nil {
			b.Fatal(err)
		}
	}
}
