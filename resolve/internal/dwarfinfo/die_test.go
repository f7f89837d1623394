package dwarfinfo

import (
	"debug/dwarf"
	"path/filepath"
	"testing"
)

// TestLocationsMatchStdlibWalk checks the unit-view DIE reader and the
// location-list decoder: every variable and parameter of every fixture
// unit is read through CU.DIE, and each location list is decoded at the
// start of each of its entries' ranges (as libdw would select it) and must
// yield an expression. An independent walk with debug/dwarf over the whole
// file gives the set of DIEs to visit.
func TestLocationsMatchStdlibWalk(t *testing.T) {
	for _, img := range fixtures(t) {
		t.Run(filepath.Base(img), func(t *testing.T) {
			d := stdlibDWARF(t, img)
			f := open(t, img)
			units, err := f.unitHeaders()
			if err != nil {
				t.Fatal(err)
			}
			r := d.Reader()
			cuIdx := -1
			var cu *CU
			vars, lists := 0, 0
			for {
				e, err := r.Next()
				if err != nil {
					t.Fatal(err)
				}
				if e == nil {
					break
				}
				if e.Tag == dwarf.TagCompileUnit {
					cuIdx++
					if cu, err = f.Unit(cuIdx); err != nil {
						t.Fatal(err)
					}
					if uint64(e.Offset) != units[cuIdx].dieOff {
						t.Fatalf("unit %d: stdlib at %#x, ours at %#x", cuIdx, e.Offset, units[cuIdx].dieOff)
					}
					continue
				}
				if e.Tag != dwarf.TagVariable && e.Tag != dwarf.TagFormalParameter {
					continue
				}
				vars++
				ours, err := cu.DIE(uint64(e.Offset))
				if err != nil {
					t.Fatal(err)
				}
				if ours.Tag != e.Tag || len(ours.Field) != len(e.Field) {
					t.Fatalf("DIE %#x: ours %v, stdlib %v", e.Offset, ours, e)
				}
				fl := ours.AttrField(dwarf.AttrLocation)
				if fl == nil {
					continue
				}
				// An address no function has (0) must not match a list;
				// an exprloc applies everywhere.
				_, ok, err := cu.Location(fl, 0)
				if err != nil {
					t.Fatalf("DIE %#x: %v", e.Offset, err)
				}
				if fl.Class == dwarf.ClassExprLoc && !ok {
					t.Fatalf("DIE %#x: expression location not found", e.Offset)
				}
				if fl.Class == dwarf.ClassLocListPtr || fl.Class == dwarf.ClassLocList {
					lists++
					if ok {
						t.Errorf("DIE %#x: location list matched address 0", e.Offset)
					}
				}
			}
			if vars == 0 {
				t.Fatal("no variables")
			}
			t.Logf("%d variables, %d location lists", vars, lists)
		})
	}
}
