package sdt

import (
	"errors"
	"testing"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/resolve/spec"
)

// TestSpecs: only the SDT points are resolved, keyed by their index; a
// check's refusal is a *RefusedError wrapping it, a missing event
// ErrNotFound.
func TestSpecs(t *testing.T) {
	b := testPrograms(t)[0]
	parse := func(defs ...string) []*spec.Probe {
		var out []*spec.Probe
		for _, d := range defs {
			p, err := spec.ParseProbe(d)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
		return out
	}
	r := &Resolver{}
	var checked []string
	ok := func(p probe.Probe) error { checked = append(checked, p.Event); return nil }
	got, err := r.Specs(parse("main", "%sdt_gprobe_test:twice", "%sdt_gprobe_test:noargs"), b.path, ok)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != nil || len(got[1]) != 2 || len(got[2]) != 1 || len(checked) != 3 {
		t.Fatalf("Specs = %v (checked %v), want twice's 2 probes at 1 and noargs at 2", got, checked)
	}
	refused := errors.New("refused")
	_, err = r.Specs(parse("%sdt_gprobe_test:noargs"), b.path, func(probe.Probe) error { return refused })
	var re *RefusedError
	if !errors.As(err, &re) || !errors.Is(err, refused) || err.Error() != "refused" {
		t.Errorf("a refusal: %v, want a *RefusedError wrapping it", err)
	}
	if _, err = r.Specs(parse("%sdt_gprobe_test:nosuch"), b.path, ok); !errors.Is(err, ErrNotFound) || errors.As(err, &re) {
		t.Errorf("a missing event: %v, want ErrNotFound", err)
	}
}
