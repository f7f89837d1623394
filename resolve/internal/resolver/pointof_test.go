package resolver

import (
	"testing"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/resolve/spec"
)

// TestPointOfRoundTrip: the places -D gives for FUNC:LINE and FUNC+OFF map
// back to the same point, as perf -l shows installed probes.
func TestPointOfRoundTrip(t *testing.T) {
	r := resolver(t, testOpts{})
	for _, def := range []string{"do_sys_openat2:11", "do_sys_openat2", "do_sys_openat2%return", "vfs_read:6", "vfs_read:8"} {
		p, err := spec.ParseProbe(def)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := r.Probes(p)
		if err != nil {
			t.Fatalf("%s: %v", def, err)
		}
		for _, pr := range ps {
			back, ok := r.PointOf(pr.Target, pr.Return)
			if !ok {
				t.Errorf("%s (%s): not mapped back", def, pr.Target)
				continue
			}
			got := back.String()
			want := p.Point.String()
			if back.HasFile {
				want += "@" + spec.Point{File: back.File, HasFile: true}.String()[1:]
			}
			if got != want {
				t.Errorf("%s at %s maps back to %s, want %s", def, pr.Target, got, want)
			}
		}
	}
	if _, ok := r.PointOf(probe.Location{Symbol: "no_such_symbol"}, false); ok {
		t.Error("an unknown symbol mapped to a point")
	}
	// An offset with no DWARF line of its own is shown as FUNC+OFF.
	back, ok := r.PointOf(probe.Location{Symbol: "do_sys_openat2", Offset: 1}, false)
	if !ok || back.Function != "do_sys_openat2" || (back.Offset != 1 && back.Line == 0) {
		t.Errorf("do_sys_openat2+1: %+v %v", back, ok)
	}
	// perf writes a live kernel's probes as _text+N: _text shares its
	// address with _start, which perf's map keeps; it still maps back.
	rel := probe.Location{Symbol: "_text", Offset: 0x1e40}
	if back, ok := r.PointOf(rel, false); !ok || back.String() != "vfs_read@fs/read_write.c" {
		t.Errorf("_text+0x1e40: %v %v, want vfs_read@fs/read_write.c", back, ok)
	}
}
