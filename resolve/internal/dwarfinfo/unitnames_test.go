package dwarfinfo

import (
	"slices"
	"testing"
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
