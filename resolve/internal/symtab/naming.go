package symtab

import (
	"bytes"
	"sort"
	"strings"

	"github.com/gprobe/gprobe/internal/demangle"
	"github.com/gprobe/gprobe/resolve/spec"
)

// Naming is how perf names the symbols of a map: demangled, as
// symbol-elf.c's demangle_sym does when symbol_conf.demangle is set (for a
// user binary; symbol_conf.demangle_kernel for a kernel image or module),
// with C++ parameters under -v. perf lists (-F) and looks symbols up by
// these names, never by the ELF ones.
type Naming struct {
	// Demangle shows mangled names demangled; without it names are the
	// ELF symbol names (perf's --no-demangle).
	Demangle bool
	// Params shows C++ parameters (perf -v asks libiberty for DMGL_PARAMS).
	Params bool
}

func (n Naming) options() demangle.Options { return demangle.Options{Params: n.Params} }

// Of returns the name perf gives a symbol whose ELF name is raw.
func (n Naming) Of(raw []byte) string {
	s := string(raw)
	if !n.Demangle {
		return s
	}
	d, _ := demangle.Name(s, n.options())
	return d
}

// List is perf -F over raws, the ELF names of a symbol map: each as n
// names it, those keep accepts, sorted as strcmp sorts them.
func (n Naming) List(raws []string, keep func(string) bool) []string {
	if n.Demangle {
		return demangle.List(raws, n.options(), keep)
	}
	out := raws[:0]
	for _, r := range raws {
		if keep(r) {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// Query selects symbols by the names a map gives them (its Naming), as
// perf's find_probe_functions and map__for_each_symbol_by_name compare
// them: "@VERSION" cut off the name unless the pattern has an '@' or
// KeepVersion is set.
type Query struct {
	// Pattern is a perf glob; one without wildcards or escapes is
	// compared as it is.
	Pattern string
	// Exact compares Pattern as it is even when it has wildcards.
	Exact bool
	// KeepVersion compares whole names even when Pattern has no '@'.
	KeepVersion bool
	// TextOnly keeps only symbols of executable sections.
	TextOnly bool
}

// matcher returns q's test on a symbol: cheap on raw names, so that
// looking a literal name up among thousands of mangled ones demangles
// only the few whose ELF name holds its key identifier (demangle.Candidates).
//
// Beyond perf, a pattern with a '(' also matches the name with C++
// parameters, as -v shows it ("ns::Klass::method(int)" picks one overload).
func (q Query) matcher(n Naming) func(s Symbol) bool {
	cut := !q.KeepVersion && !strings.Contains(q.Pattern, "@")
	literal := q.Exact || !spec.IsGlob(q.Pattern) && !strings.Contains(q.Pattern, `\`)
	var maybe func([]byte) bool
	if literal && n.Demangle {
		// Candidates sees names without their versions: a versioned
		// pattern's name part (memcpy of memcpy@GLIBC_2.2.5).
		name, _, _ := strings.Cut(q.Pattern, "@")
		maybe = demangle.Candidates(name)
	}
	signature := n.Demangle && !n.Params && strings.Contains(q.Pattern, "(")
	want := []byte(q.Pattern)
	is := func(name string) bool {
		if cut {
			if i := strings.IndexByte(name, '@'); i >= 0 {
				name = name[:i]
			}
		}
		if literal {
			return name == q.Pattern
		}
		return spec.GlobMatch(name, q.Pattern)
	}
	return func(s Symbol) bool {
		if q.TextOnly && !s.Exec {
			return false
		}
		if !n.Demangle {
			raw := s.Raw
			if cut {
				raw = cutVersion(raw)
			}
			if literal {
				return bytes.Equal(raw, want)
			}
			return spec.GlobMatch(string(raw), q.Pattern)
		}
		if maybe != nil && !maybe(cutVersion(s.Raw)) {
			return false
		}
		// perf demangles the whole ELF name, then cuts the version.
		if is(n.Of(s.Raw)) {
			return true
		}
		return signature && is(Naming{Demangle: true, Params: true}.Of(s.Raw))
	}
}

func cutVersion(raw []byte) []byte {
	if i := bytes.IndexByte(raw, '@'); i >= 0 {
		return raw[:i]
	}
	return raw
}
