package symtab

import (
	"os"
	"path/filepath"
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
