package resolve

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// TestSymbolMapFind: find through the sorted symbol table gives what a
// search of the whole map gives, at every symbol's start, end, last byte
// and the byte before its start, on the fixtures, a user binary and the
// real vmlinux (every 20th of its symbols); each walks what all holds.
func TestSymbolMapFind(t *testing.T) {
	imgs, _ := filepath.Glob("../testdata/vmlinux-fixtures/*.elf")
	imgs = append(imgs, testenv.BuildC(t, "gcc", "../cmd/gprobe/testdata/uprobe/prog.c", "prog", "-O2", "-g"))
	if p := testenv.Linux61.Vmlinux(); fileExists(p) {
		imgs = append(imgs, p)
	}
	for _, img := range imgs {
		f, err := dwarfinfo.Open(img)
		if err != nil {
			t.Fatal(err)
		}
		sorted, err := newSymbolMap(f)
		if err != nil {
			t.Fatal(err)
		}
		whole, _ := newSymbolMap(f)
		all := whole.all()
		// each, on a map not yet made whole, walks the same symbols.
		fresh, _ := newSymbolMap(f)
		k := 0
		fresh.each(func(s symbol) bool {
			if k >= len(all) || all[k].start != s.start || string(all[k].raw) != string(s.raw) {
				t.Fatalf("%s: each's symbol %d is %q at %#x, all's is %v", img, k, s.raw, s.start, all[min(k, len(all)-1)])
			}
			k++
			return true
		})
		if k != len(all) {
			t.Fatalf("%s: each walked %d symbols, all has %d", img, k, len(all))
		}
		n, i := 0, 0
		_ = f.Symbols(func(s dwarfinfo.Symbol) {
			if i++; f.SymbolCount() > 10000 && i%20 != 0 {
				return
			}
			for _, addr := range []uint64{s.Value - 1, s.Value, s.Value + s.Size - 1, s.Value + s.Size} {
				a, aok, done := sorted.findSorted(addr)
				if !done {
					a, aok = whole.find(addr)
				}
				b, bok := whole.find(addr)
				if aok != bok || string(a.raw) != string(b.raw) || a.start != b.start || a.end != b.end || a.typ != b.typ || a.exec != b.exec {
					t.Fatalf("%s: find(%#x) = %q %#x-%#x %v, the whole map says %q %#x-%#x %v", img, addr, a.raw, a.start, a.end, aok, b.raw, b.start, b.end, bok)
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
