package demangle

import (
	"bytes"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// Names demangles every name of syms (as Name does), on up to GOMAXPROCS
// goroutines for a long list: -F demangles a library's every symbol
// (libjvm's 58k) before it filters them. out[i] is syms[i]'s name.
func Names(syms []string, o Options) []string {
	out := slices.Clone(syms)
	inPlace(out, o)
	return out
}

// inPlace replaces every name of syms by its demangled name (as Name
// does), as Names describes.
func inPlace(syms []string, o Options) {
	const chunk = 512
	workers := runtime.GOMAXPROCS(0)
	if n := (len(syms) + chunk - 1) / chunk; n < workers {
		workers = n
	}
	if workers <= 1 {
		for i, s := range syms {
			syms[i], _ = Name(s, o)
		}
		return
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				start := next
				next += chunk
				mu.Unlock()
				if start >= len(syms) {
					return
				}
				end := min(start+chunk, len(syms))
				for i := start; i < end; i++ {
					syms[i], _ = Name(syms[i], o)
				}
			}
		}()
	}
	wg.Wait()
}

// Candidates returns a cheap test on raw symbol names that is true for
// every name whose demangled name (as Name gives it) can be want, so that
// looking a demangled name up among thousands of symbols demangles only a
// few: a name no demangler takes must be want itself, and a mangled one
// must hold, verbatim, the longest identifier in the name of want's last
// component ("method" for "ns::Klass::method(int)", "Klass" for "~Klass",
// "map_154" for OCaml's "Stdlib.array.map_154"), which every mangling
// keeps as it is. When that component has no such
// identifier, or may be spelled otherwise (an operator, a lambda or
// closure, a special name, a standard abbreviation such as std::string),
// every mangled name is a candidate.
func Candidates(want string) func(raw []byte) bool {
	frag := []byte(keyIdentifier(want))
	return func(raw []byte) bool {
		// A view of raw, not a copy: it is not kept.
		if !Maybe(unsafe.String(unsafe.SliceData(raw), len(raw))) {
			return string(raw) == want
		}
		return len(frag) == 0 || bytes.Contains(raw, frag)
	}
}

// stdWords are identifiers the C++ ABI's standard abbreviations (St, Sa,
// Sb, Ss, Si, So, Sd) print without spelling them in the mangled name.
var stdWords = map[string]bool{
	"std": true, "allocator": true, "basic_string": true, "string": true,
	"char_traits": true, "basic_istream": true, "basic_ostream": true,
	"basic_iostream": true, "istream": true, "ostream": true, "iostream": true,
}

// keyIdentifier is Candidates' identifier of want, or "" for none: the
// longest identifier with a letter in the name of want's last component,
// outside template arguments and parameters (where substitutions and
// built-in types are not spelled out).
func keyIdentifier(want string) string {
	last, depth := 0, 0
	for i := 0; i < len(want); i++ {
		switch c := want[i]; {
		case c == '<' || c == '(' || c == '[':
			depth++
		case c == '>' || c == ')' || c == ']':
			depth--
		case c == ':' && depth == 0 && i+1 < len(want) && want[i+1] == ':':
			last = i + 2
			i++
		}
	}
	name := want[last:]
	if i := strings.IndexAny(name, "<(["); i >= 0 {
		name = name[:i]
	}
	if strings.HasPrefix(name, "operator") || strings.ContainsAny(name, " {") {
		return ""
	}
	best := ""
	for _, f := range strings.FieldsFunc(name, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		if len(f) > len(best) && strings.IndexFunc(f, func(r rune) bool { return r < '0' || r > '9' }) >= 0 && !stdWords[f] {
			best = f
		}
	}
	return best
}

// PLTSuffix ends the names perf synthesizes for a user binary's PLT
// entries ("memcpy@plt"): perf demangles the name before it.
const PLTSuffix = "@plt"

// List is perf -F's listing of a symbol map's names (util/probe-event.c
// show_available_funcs over the names dso__load_sym and
// dso__synthesize_plt_symbols made): each name demangled as Name does
// (a "NAME@plt" as NAME, then "@plt"), those keep accepts, sorted as strcmp
// sorts them, one line per symbol (overloads, aliases and the .symtab and
// .dynsym copies of a name stay, as in perf).
func List(raws []string, o Options, keep func(string) bool) []string {
	// One slice of names, demangled in place and then filtered in place
	// (libjvm's 58,000 names: each slice of them is 0.9 MB).
	names := make([]string, len(raws))
	for i, r := range raws {
		names[i] = strings.TrimSuffix(r, PLTSuffix)
	}
	inPlace(names, o)
	out := names[:0]
	for i, n := range names {
		if strings.HasSuffix(raws[i], PLTSuffix) {
			n += PLTSuffix
		}
		if keep(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
