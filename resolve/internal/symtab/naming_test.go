package symtab

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/demangle"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// TestQueryDemangled: looking a demangled name up (Query with a literal
// pattern, which demangles only the candidates demangle.Candidates lets
// through) finds exactly the symbols whose demangled name, version cut, is
// that name, as demangling every symbol finds them; on libstdc++ (every
// 29th function's name, every 997th under -short) with and without
// parameters, and with demangling off; and a name with parameters picks
// the symbols that have it.
func TestQueryDemangled(t *testing.T) {
	const lib = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
	if _, err := os.Stat(lib); err != nil {
		t.Skipf("%s: %v", lib, err)
	}
	f, err := dwarfinfo.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	step, least := 29, 100
	if testing.Short() {
		step, least = 997, 4
	}
	for _, n := range []Naming{{Demangle: true}, {Demangle: true, Params: true}, {}} {
		whole, err := NewMap(f, n)
		if err != nil {
			t.Fatal(err)
		}
		all := whole.All()
		// The lookups run on a map never made whole (ByName walks the
		// table in address order).
		m, _ := NewMap(f, n)
		names := make([]string, len(all))
		for i, s := range all {
			names[i] = whole.Name(s)
			if i := strings.IndexByte(names[i], '@'); i >= 0 {
				names[i] = names[i][:i]
			}
		}
		fulls := make([]string, len(all))
		for i, s := range all {
			fulls[i] = Naming{Demangle: true, Params: true}.Of(s.Raw)
		}
		asked := 0
		for i, s := range all {
			if i%step != 0 || s.Type.String() != "STT_FUNC" {
				continue
			}
			want := names[i]
			var brute []uint64
			for j := range all {
				if names[j] == want {
					brute = append(brute, all[j].Start)
				}
			}
			var got []uint64
			for _, s := range m.ByName(Query{Pattern: want, Exact: true}) {
				got = append(got, s.Start)
				if w, _ := whole.Find(s.Start); w.End != s.End {
					t.Fatalf("ByName(%q) gives %#x-%#x, the whole map %#x-%#x", want, s.Start, s.End, w.Start, w.End)
				}
			}
			if !slices.Equal(got, brute) {
				t.Fatalf("%+v: ByName(%q) = %x, demangling every symbol finds %x", n, want, got, brute)
			}
			if first, ok := m.FirstByName(Query{Pattern: want, Exact: true}); !ok || first.Start != brute[0] {
				t.Fatalf("%+v: FirstByName(%q) = %x %v, want %x", n, want, first.Start, ok, brute[0])
			}
			asked++
			if !n.Demangle || n.Params {
				continue
			}
			// Beyond perf: a name with parameters picks the symbols
			// whose name with parameters it is.
			full := fulls[i]
			if !strings.Contains(full, "(") || strings.Contains(full, "@") {
				continue
			}
			brute = brute[:0]
			for j, o := range all {
				if fulls[j] == full || names[j] == full {
					brute = append(brute, o.Start)
				}
			}
			got = got[:0]
			for _, s := range m.ByName(Query{Pattern: full, Exact: true}) {
				got = append(got, s.Start)
			}
			if !slices.Equal(got, brute) {
				t.Fatalf("ByName(%q) by signature = %x, want %x", full, got, brute)
			}
		}
		if asked < least {
			t.Fatalf("%+v: only %d names asked", n, asked)
		}
	}
}

// TestNamingList: -F's listing demangles (or not) each name, then filters
// and sorts.
func TestNamingList(t *testing.T) {
	raws := []string{"_ZN2ns5Klass6methodEi", "cfunc", "_ZN2ns5Klass6methodEPKc", "memcpy@plt", "_ZdlPv@plt"}
	keepAll := func(string) bool { return true }
	got := Naming{Demangle: true}.List(slices.Clone(raws), keepAll)
	want := []string{"cfunc", "memcpy@plt", "ns::Klass::method", "ns::Klass::method", "operator delete@plt"}
	if !slices.Equal(got, want) {
		t.Errorf("demangled: %q, want %q", got, want)
	}
	got = Naming{Demangle: true, Params: true}.List(slices.Clone(raws), func(s string) bool { return strings.HasPrefix(s, "ns::") })
	want = []string{"ns::Klass::method(char const*)", "ns::Klass::method(int)"}
	if !slices.Equal(got, want) {
		t.Errorf("with parameters: %q, want %q", got, want)
	}
	got = Naming{}.List(slices.Clone(raws), func(s string) bool { return !strings.HasPrefix(s, "_") })
	want = []string{"cfunc", "memcpy@plt"}
	if !slices.Equal(got, want) {
		t.Errorf("not demangled: %q, want %q", got, want)
	}
	if s, _ := demangle.Name("_ZN2ns5Klass6methodEi", demangle.Options{}); s != (Naming{Demangle: true}).Of([]byte("_ZN2ns5Klass6methodEi")) {
		t.Errorf("Of differs from demangle.Name: %q", s)
	}
}
