package resolver

import (
	"strings"
	"testing"

	"github.com/gprobe/gprobe/resolve/spec"
)

// TestWriteFunctions: -F's lines are EachFunction's names, in its order.
func TestWriteFunctions(t *testing.T) {
	r := resolver(t, testOpts{})
	flt, err := spec.ParseFilter("do_sys_*")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if err := r.EachFunction(flt, func(n string) bool { want = append(want, n); return true }); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := r.WriteFunctions(&b, flt); err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || b.String() != strings.Join(want, "\n")+"\n" {
		t.Errorf("%q, want the lines of %q", b.String(), want)
	}
}
