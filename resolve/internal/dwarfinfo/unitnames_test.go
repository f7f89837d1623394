package dwarfinfo

import (
	"slices"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

// TestUnitsNamed: every unit's name, read from its root DIE alone, is the
// name the full decoder (and the standard library's, decodeUnit) reads,
// for every fixture; a name no unit has finds none.
func TestUnitsNamed(t *testing.T) {
	for _, path := range fixtures(t) {
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		units, err := f.unitHeaders()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]int{}
		for i := range units {
			cu, err := f.decodeUnit(i, &units[i])
			if err != nil {
				t.Fatal(err)
			}
			want[cu.Lines.Name] = append(want[cu.Lines.Name], i)
		}
		for name, idx := range want {
			got, err := f.UnitsNamed(name)
			if err != nil || !slices.Equal(got, idx) {
				t.Errorf("%s: UnitsNamed(%q) = %v, %v; want %v", path, name, got, err, idx)
			}
		}
		if got, err := f.UnitsNamed("no such unit"); err != nil || got != nil {
			t.Errorf("%s: UnitsNamed of a missing name = %v, %v", path, got, err)
		}
		f.Close()
	}
}

// TestUnitCovering: the units' own ranges give the unit .debug_aranges
// gives, for every function of every fixture (whose compilers wrote both);
// and in a Go program, which has no .debug_aranges, every function's entry
// is found in the unit that defines it.
func TestUnitCovering(t *testing.T) {
	for _, path := range fixtures(t) {
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := f.readUnitRanges()
		if err != nil {
			t.Fatal(err)
		}
		refs, err := f.FindFuncs(func([]byte) bool { return true }, false)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		units := map[int]*CU{}
		for _, r := range refs {
			cu := cachedUnit(t, f, units, r.Unit)
			entry, ok := cu.Scopes[r.Offset].LowestPC()
			if !ok || entry == 0 {
				continue
			}
			want, err := f.UnitForAddr(entry)
			if err != nil {
				t.Fatal(err)
			}
			got := -1
			for _, ur := range rs {
				if ur.lo <= entry && entry < ur.hi {
					got = ur.unit
				}
			}
			if got != want {
				t.Errorf("%s: %#x: the units' ranges say unit %d, .debug_aranges %d", path, entry, got, want)
			}
			n++
		}
		if n == 0 {
			t.Errorf("%s: no function compared", path)
		}
		f.Close()
	}
}

func TestUnitCoveringGo(t *testing.T) {
	bin := testenv.BuildGo(t, testenv.GoProgram(t, "values"), "")
	f, err := Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.hasSection(".debug_aranges") {
		t.Fatalf("%s has .debug_aranges: the test no longer tests the fallback", bin)
	}
	refs, err := f.FindFuncs(func([]byte) bool { return true }, false)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	units := map[int]*CU{}
	for _, r := range refs {
		cu := cachedUnit(t, f, units, r.Unit)
		entry, ok := cu.Scopes[r.Offset].LowestPC()
		if !ok {
			continue
		}
		if got, err := f.UnitCovering(entry); err != nil || got != r.Unit {
			t.Errorf("%s at %#x: unit %d, %v; defined in %d", cu.Scopes[r.Offset].Name, entry, got, err, r.Unit)
		}
		n++
	}
	if got, err := f.UnitCovering(0x10); got != -1 || err != nil {
		t.Errorf("an address of no unit: %d, %v", got, err)
	}
	t.Logf("%d functions found in their units", n)
	if n < 1000 {
		t.Errorf("only %d functions", n)
	}
}

// cachedUnit decodes unit idx of f once.
func cachedUnit(t *testing.T, f *File, units map[int]*CU, idx int) *CU {
	t.Helper()
	cu := units[idx]
	if cu == nil {
		var err error
		if cu, err = f.Unit(idx); err != nil {
			t.Fatal(err)
		}
		units[idx] = cu
	}
	return cu
}
