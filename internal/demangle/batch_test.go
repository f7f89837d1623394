package demangle

import (
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	var syms []string
	for _, c := range corpora {
		syms = append(syms, readNames(t, c)...)
	}
	got := Names(syms, Options{})
	for i, s := range syms {
		if want, _ := Name(s, Options{}); got[i] != want {
			t.Fatalf("Names[%d] = %q, Name(%q) = %q", i, got[i], s, want)
		}
	}
}

// TestCandidates: the prefilter never refuses a name that demangles to
// the name looked up, for every name of every corpus (with and without
// parameters), and refuses most others.
func TestCandidates(t *testing.T) {
	var syms []string
	for _, c := range corpora {
		syms = append(syms, readNames(t, c)...)
	}
	refused, asked := 0, 0
	for _, o := range []Options{{}, {Params: true}} {
		for i, s := range syms {
			want, _ := Name(s, o)
			cand := Candidates(want)
			if !cand([]byte(s)) {
				t.Errorf("Candidates(%q) refuses %q", want, s)
			}
			// Against a sample of the other names.
			for j := i % 7; j < len(syms); j += 97 {
				if d, _ := Name(syms[j], o); d == want {
					if !cand([]byte(syms[j])) {
						t.Errorf("Candidates(%q) refuses %q", want, syms[j])
					}
					continue
				}
				asked++
				if !cand([]byte(syms[j])) {
					refused++
				}
			}
		}
	}
	if refused < asked*3/4 {
		t.Errorf("Candidates refused %d of %d other names", refused, asked)
	}
	for want, key := range map[string]string{
		"ns::Klass::method":                            "method",
		"ns::Klass::method(int)":                       "method",
		"ns::Klass::~Klass":                            "Klass",
		"ns::tadd<int>":                                "tadd",
		"std::vector<int, std::allocator<int> >::size": "size",
		"std::basic_string<char>::~basic_string":       "",
		"ns::Klass::operator<":                         "",
		"rs::work::{closure#0}":                        "",
		"<names::Square as names::Shape>::size":        "size",
		"vtable for ns::Klass":                         "Klass",
		"typeinfo for int":                             "",
		"Stdlib.array.map_154":                         "map_154",
		"java.lang.String.indexOf(int)":                "indexOf",
		"foo[abi:cxx11]":                               "foo",
		"f<3>":                                         "f",
	} {
		if got := keyIdentifier(want); got != key {
			t.Errorf("keyIdentifier(%q) = %q, want %q", want, got, key)
		}
	}
}

func TestList(t *testing.T) {
	raws := []string{"_ZN2ns5Klass6methodEi", "main", "_ZN2ns5Klass6methodEPKc", "_ZNKSt9type_info4nameEv@plt", "_start", "printf@plt"}
	got := List(raws, Options{}, func(n string) bool { return !strings.HasPrefix(n, "_") })
	want := []string{"main", "ns::Klass::method", "ns::Klass::method", "printf@plt", "std::type_info::name@plt"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("List = %q, want %q", got, want)
	}
	got = List(raws, Options{Params: true}, func(n string) bool { return strings.Contains(n, "method") })
	want = []string{"ns::Klass::method(char const*)", "ns::Klass::method(int)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("List(Params) = %q, want %q", got, want)
	}
}
