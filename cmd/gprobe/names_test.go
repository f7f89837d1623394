package main

// The differential table of C++ and Rust names: the programs of
// testenv.NamesBuilds (g++ and clang++ at -O0/-O2 with DWARF 4 and 5,
// rustc's debug, release and v0 builds) asked the same questions as perf
// probe 6.1 (-F with and without demangling, probe points by DWARF name,
// by linkage name and by perf 6.1's escaped qualified names, methods and
// overloads, this->field, %return, -L, -V), identical output and exit
// status required except for the documented differences
// (docs/differences.md), each proven when it shows (nameDifferences).

import (
	"bytes"
	"context"
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/gprobe/gprobe/internal/perfbug"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/spec"
)

// nameCase is one question of the table, asked with -x BINARY in front.
type nameCase struct {
	args []string
	// cxx, rust: which programs it is asked of.
	cxx, rust bool
	// pending, when set, says what is not wired yet: the case is listed,
	// not asked.
	pending string
}

func cxxCase(args ...string) nameCase  { return nameCase{args: args, cxx: true} }
func rustCase(args ...string) nameCase { return nameCase{args: args, rust: true} }
func bothCase(args ...string) nameCase { return nameCase{args: args, cxx: true, rust: true} }

func (c nameCase) wait(why string) nameCase { c.pending = why; return c }

const ()

var nameCases = []nameCase{
	// -F: perf 6.1 demangles (no parameters; -v adds them) and filters
	// the demangled names.
	bothCase("-F"),
	bothCase("-F", "*"),
	bothCase("--no-demangle", "-F", "*"),
	bothCase("-v", "-F", "*"),
	cxxCase("-F", "ns::*"),
	cxxCase("-F", "*Klass*"),
	cxxCase("-F", "ns::Klass::method"),
	cxxCase("-F", "std::vector<*"),
	cxxCase("-F", "_Z*"),
	cxxCase("--no-demangle", "-F", "_ZN2ns*"),
	rustCase("-F", "names::*"),
	rustCase("-F", "*work*"),
	rustCase("-F", "<names::*"),

	// Probe points by DWARF name: Rust's functions sit in namespaces
	// (work beside the namespace of its closure), size is defined three
	// times in three units, perf takes the first of each unit.
	cxxCase("-D", "method"), cxxCase("-D", "smethod"), cxxCase("-D", "scale"),
	cxxCase("-D", "hidden"), cxxCase("-D", "helper"), cxxCase("-D", "cfunc"),
	cxxCase("-D", "sum"), cxxCase("-D", "main"), cxxCase("-D", "main argc"),
	cxxCase("-D", "ev=~Klass"), cxxCase("-D", "ev=operator<"), cxxCase("-D", "ev=tadd<int>"),
	rustCase("-D", "work"), rustCase("-D", "size"), rustCase("-D", "bump"),
	rustCase("-D", "generic"), rustCase("-D", "plain_c"), rustCase("-D", "main"),
	rustCase("-D", "ev=size"),
	// By linkage name (DWARF), and its %return from the symbol table,
	// where perf 6.1 knows only demangled names.
	cxxCase("-D", "_ZN2ns5Klass7smethodEi"),
	cxxCase("-D", "_ZN2ns5Klass7smethodEi%return"),
	// Arguments, members, this.
	cxxCase("-D", "method a"), cxxCase("-D", "smethod v"), cxxCase("-D", "scale p->x"),
	cxxCase("-D", "scale p"), cxxCase("-D", "sum this->x"), cxxCase("-D", "sum this"),
	cxxCase("-D", "scale this->field"), cxxCase("-D", "scale this->field p->y"),
	cxxCase("-D", "method this->field"),
	cxxCase("-D", "scale $params"), cxxCase("-D", "main $vars"),
	rustCase("-D", "work n"), rustCase("-D", "bump by"), rustCase("-D", "bump self->n"),
	rustCase("-D", "size self"), rustCase("-D", "work $params"),
	// Returns, lines, offsets.
	cxxCase("-D", "smethod%return"), cxxCase("-D", "smethod%return $retval"),
	cxxCase("-D", "scale:2"), cxxCase("-D", "smethod+4"), cxxCase("-D", "method:1"),
	rustCase("-D", "work%return"), rustCase("-D", "work:2"), rustCase("-D", "bump+4"),
	// perf 6.1's escaped qualified names: DWARF knows only "smethod", the
	// symbol table "ns::Klass::smethod" (demangled).
	cxxCase("-D", `ev=ns\:\:Klass\:\:smethod`),
	cxxCase("-D", `ev=ns\:\:Klass\:\:method`),
	cxxCase("-D", `ev=ns\:\:Klass\:\:smethod v`),
	cxxCase("-D", `ev=ns\:\:Klass\:\:smethod%return`),
	cxxCase("-D", `ev=ns\:\:tadd<int>`),
	cxxCase("-D", `ev=ns\:\:Klass\:\:operator<`),
	cxxCase("-D", `ns\:\:Klass\:\:smethod`),
	cxxCase("-V", `ns\:\:Klass\:\:smethod`),
	rustCase("-D", `ev=names\:\:work`),
	rustCase("-D", `ev=names\:\:inner\:\:Counter\:\:bump`),
	rustCase("-D", `ev=names\:\:work%return`),
	rustCase("-D", `ev=names\:\:inner\:\:Counter\:\:bump%return`),
	// Several functions of one name: perf 6.1 probes the first (by
	// address) of a method's overloads, or of a generic's instances;
	// gprobe each, an event for each signature unless one is named;
	// %return (from the symbol table) gets both in perf too.
	cxxCase("-D", `ev=ns\:\:Klass\:\:method%return`),
	cxxCase("-D", `ev=ns\:\:Klass\:\:s*%return`),
	cxxCase("-D", `"ns::Klass::method"`),
	cxxCase("-D", `"ns::Klass::method"%return`),
	cxxCase("-D", `"ns::Klass::method" this`),
	cxxCase("-V", `"ns::Klass::method"`),
	rustCase("-D", `ev=names\:\:inner\:\:generic`),
	rustCase("-D", `"names::inner::generic"`),
	// One overload by its signature, as -v -F spells it.
	cxxCase("-D", `"ns::Klass::method(int)"`),
	cxxCase("-D", `"ns::Klass::method(char const*)" s`),
	cxxCase("-D", `"ns::Klass::method(int)" a`),
	// Arguments with a qualified name (perf 6.1 does not look it up).
	cxxCase("-D", `"ns::Klass::smethod" v`),
	rustCase("-D", `"names::work" n`),
	// Demangling off: the ELF names.
	cxxCase("--no-demangle", "-D", "ev=_ZN2ns5Klass7smethodEi%return"),
	cxxCase("--no-demangle", "-D", `ev=ns\:\:Klass\:\:smethod%return`),
	rustCase("--no-demangle", "-F", "_ZN5names*"),
	// Event names perf 6.1 cannot make from the function name.
	cxxCase("-D", "tadd<int>"), cxxCase("-D", "~Klass"), cxxCase("-D", "operator<"),
	// -L and -V.
	cxxCase("-L", "method"), cxxCase("-L", "smethod"), cxxCase("-L", "scale:1-3"),
	cxxCase("-V", "method"), cxxCase("-V", "scale"), cxxCase("-V", "scale:2"),
	rustCase("-L", "work"), rustCase("-L", "bump"), rustCase("-V", "work"), rustCase("-V", "bump"),
	rustCase("-L", "size"),
	// Newer perf's forms (perf 6.1 parses them otherwise).
	cxxCase("-D", `"ns::Klass::smethod"`),
	cxxCase("-D", "smethod@*"),
	cxxCase("-V", `"ns::Klass::smethod"`),
	cxxCase("-L", `"ns::Klass::smethod"`),
	rustCase("-D", `"names::work"`),
	rustCase("-D", "work@*"),
}

// TestPerfDiffNames asks the table of each build of the programs of names
// of gprobe and of perf probe 6.1.
func TestPerfDiffNames(t *testing.T) {
	perf := testenv.RequirePerf(t)
	for _, b := range testenv.NamesBuilds() {
		t.Run(b.Name, func(t *testing.T) {
			bin := b.Build(t)
			stats := &diffStats{}
			c := &checker{t: t, perf: perf, image: bin, user: true, stats: stats}
			c.explain = func(args []string, p, g result) (string, bool) {
				return nameDifference(t, perf, bin, args, p, g)
			}
			var specs [][]string
			var pending []string
			for _, nc := range nameCases {
				if b.Rust() && !nc.rust || !b.Rust() && !nc.cxx {
					continue
				}
				if nc.pending != "" {
					pending = append(pending, fmt.Sprintf("%q (%s)", nc.args, nc.pending))
					continue
				}
				specs = append(specs, nc.args)
			}
			c.checkAll([]string{"-x", bin}, specs)
			stats.report(t)
			if len(pending) > 0 {
				t.Logf("not asked yet, %d: %s", len(pending), strings.Join(pending, "; "))
			}
		})
	}
}

var invalidEventRE = regexp.MustCompile(`^Internal error: "(.*)" is an invalid event name\.\n  Error: Failed to add events\.\n$`)

// nameDifference proves the documented differences of the table:
//
//   - an event name perf 6.1 cannot make from a C++/Rust name ("Internal
//     error: ... is an invalid event name."): gprobe makes newer perf's
//     (spec.EventName), and its lines are perf's for the same spec with
//     that event name given;
//   - FUNC@* and quoted names, which perf 6.1 reads as a file "*" or
//     cannot parse: gprobe's answer is perf's to the same point written
//     as perf 6.1 spells it (no "@*", ':' escaped, the event named).
func nameDifference(t *testing.T, perf *testenv.Perf, bin string, args []string, p, g result) (string, bool) {
	t.Helper()
	if len(args) < 4 {
		return "", false
	}
	opt, def := args[len(args)-2], args[len(args)-1]
	if opt == "-L" && p.Code == 0 && g.Code == 0 {
		if lines, ok := unreversibleLines(t, bin, p.Stdout, g.Stdout); ok {
			return fmt.Sprintf("perf wrong (-L lines %v: no is_stmt row at their inlined call sites, perf compares with line_range_walk_cb's uninitialised __lineno): %q", lines, args), true
		}
		return "", false
	}
	point, rest, _ := strings.Cut(def, " ")
	if strings.Contains(p.Stderr, "this is not a data structure nor a union.") && p.Code == exitEINVAL && g.Code == 0 && opt == "-D" {
		if note, ok := classMembers(t, perf, bin, args, g); ok {
			return note, true
		}
		return "", false
	}
	if m := invalidEventRE.FindStringSubmatch(p.Stderr); m != nil && p.Code == exitEINVAL && g.Code == 0 && opt == "-D" {
		ev := spec.EventName(m[1], false)
		named := ev + "=" + def
		if strings.HasSuffix(point, "%return") {
			named = strings.TrimSuffix(ev, "__return") + "=" + def
		}
		want := perf.Probe(append(args[:len(args)-1:len(args)-1], named)...)
		if same(want, g) {
			return fmt.Sprintf("gprobe names the event %s where perf 6.1 cannot: %q", ev, args), true
		}
		return "", false
	}
	if note, ok := altMistakes(t, perf, bin, args, p, g); ok {
		return note, true
	}
	if note, ok := overloads(t, perf, bin, args, g); ok {
		return note, true
	}
	if strings.Contains(point, "@*") || strings.ContainsAny(point, `"'`) {
		old := strings.Replace(point, "@*", "", 1)
		for _, q := range []string{`"`, `'`} {
			if strings.Count(old, q) == 2 {
				i, j := strings.Index(old, q), strings.LastIndex(old, q)
				old = old[:i] + strings.ReplaceAll(old[i+1:j], ":", `\:`) + old[j+1:]
			}
		}
		if rest != "" {
			old += " " + rest
		}
		want := perf.Probe(append(args[:len(args)-1:len(args)-1], old)...)
		if m := invalidEventRE.FindStringSubmatch(want.Stderr); m != nil && opt == "-D" {
			old = spec.EventName(m[1], false) + "=" + old
			want = perf.Probe(append(args[:len(args)-1:len(args)-1], old)...)
		}
		if same(want, g) {
			return fmt.Sprintf("newer perf's form, answered as perf 6.1 answers %q: %q", old, args), true
		}
		oldArgs := append(args[:len(args)-1:len(args)-1], old)
		if note, ok := altMistakes(t, perf, bin, oldArgs, want, g); ok {
			return fmt.Sprintf("newer perf's form, as perf 6.1's %q: %s", old, note), true
		}
		if note, ok := overloads(t, perf, bin, oldArgs, g); ok {
			return fmt.Sprintf("newer perf's form, as perf 6.1's %q: %s", old, note), true
		}
	}
	return "", false
}

// qualifiedQuestion is a question about a function by a C++ or Rust name
// qualified with '::' (perf 6.1's escaped spelling): OPT [EV=]NAME[TAIL]
// [REST].
type qualifiedQuestion struct {
	head             []string // the arguments before OPT
	opt, ev          string   // ev is "" or "EVENT="
	name, tail, rest string   // the name unescaped; tail is %return, +OFF, :LINE
}

func parseQualified(args []string) (qualifiedQuestion, bool) {
	q := qualifiedQuestion{head: args[: len(args)-2 : len(args)-2], opt: args[len(args)-2]}
	if q.opt != "-D" && q.opt != "-V" && q.opt != "-L" {
		return q, false
	}
	def := args[len(args)-1]
	// The point ends at the first blank outside quotes.
	point := def
	var quote byte
	for i := 0; i < len(def); i++ {
		switch c := def[i]; {
		case c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == ' ':
			point, q.rest = def[:i], def[i+1:]
			i = len(def)
		}
	}
	if i := strings.IndexAny(point, "=\"'"); i >= 0 && point[i] == '=' && q.opt == "-D" {
		q.ev, point = point[:i+1], point[i+1:]
	}
	if point != "" && (point[0] == '"' || point[0] == '\'') {
		end := strings.IndexByte(point[1:], point[0])
		if end < 0 {
			return q, false
		}
		q.name, q.tail = point[1:end+1], point[end+2:]
		return q, strings.Contains(q.name, "::")
	}
	fn := point
	// The first '%', '+' or ':' that is neither escaped nor part of "::".
	for j := 0; j < len(point); j++ {
		c := point[j]
		if c == '\\' {
			j++
			continue
		}
		if c == ':' && j+1 < len(point) && point[j+1] == ':' {
			j++
			continue
		}
		if strings.IndexByte("%+:", c) >= 0 {
			fn, q.tail = point[:j], point[j:]
			break
		}
	}
	q.name = strings.ReplaceAll(fn, `\:`, ":")
	return q, strings.Contains(q.name, "::")
}

// ask is q asked of perf with the function named fn and the event ev,
// demangling off so that perf's symbol table knows the ELF name too.
func (q qualifiedQuestion) ask(perf *testenv.Perf, ev, fn string) result {
	def := ev + fn + q.tail
	if q.rest != "" {
		def += " " + q.rest
	}
	return perf.Probe(append(append(q.head, "--no-demangle"), q.opt, def)...)
}

// byELFName is perf's answer to q asked by the ELF name of each function
// in syms (which DWARF knows as its linkage name), in order, as gprobe
// gives it: -V under one header naming what was asked, each -D line's
// event as gprobe names it (the user's; else gEvent's for one function,
// the function's signature for several). ok is false when perf fails on
// one of them.
func (q qualifiedQuestion) byELFName(perf *testenv.Perf, syms []namedSymbol, gEvent string) (result, bool) {
	var out result
	for _, s := range syms {
		ev := q.ev
		if q.opt == "-D" && ev == "" {
			ev = strings.TrimSuffix(gEvent, "__return") + "="
			if len(syms) > 1 {
				base := strings.TrimRightFunc(s.full, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
				ev = spec.EventName(base, false) + "="
			}
		}
		a := q.ask(perf, ev, s.raw)
		if len(syms) > 1 && a.Code != 0 {
			return result{}, false
		}
		if q.opt == "-V" {
			header := "Available variables at " + s.raw + q.tail + "\n"
			if !strings.HasPrefix(a.Stdout, header) {
				return result{}, false
			}
			if out.Stdout == "" {
				out.Stdout = "Available variables at " + q.name + q.tail + "\n"
			}
			a.Stdout = strings.TrimPrefix(a.Stdout, header)
		}
		out.Stdout += a.Stdout
		out.Stderr += a.Stderr
		out.Code = a.Code
	}
	return out, true
}

// altMistakes proves a disagreement on a function DWARF does not know by
// that name (a C++ or Rust name qualified with '::'), which perf 6.1
// looks up in the symbol table and maps back to DWARF by address
// (find_alternative_probe_point) with two mistakes gprobe does not make
// (internal/perfbug): it takes a symbol's file offset for its address
// (UserAlt; rustc's binaries, whose .text address is not its offset, get
// another function or none), and it finds the unit of an address through
// .debug_aranges alone (ArangesOnly; clang writes none, so the search
// fails). gprobe made to repeat them must answer exactly as perf did, and
// its own answer must be perf's to the same question asked by the ELF name
// of the function's symbol (byELFName). p is perf's answer to args, in
// perf 6.1's spelling.
func altMistakes(t *testing.T, perf *testenv.Perf, bin string, args []string, p, g result) (string, bool) {
	t.Helper()
	q, ok := parseQualified(args)
	if !ok || g.Code != 0 || strings.Contains(q.name, "(") {
		return "", false
	}
	var out, errb bytes.Buffer
	a := newApp(&out, &errb)
	a.ctx = perfbug.With(context.Background(), perfbug.UserAlt|perfbug.ArangesOnly|perfbug.AltArgs)
	code := a.run(append([]string{"gprobe"}, args...))
	if mistaken := (result{Stdout: out.String(), Stderr: errb.String(), Code: code}); !same(p, mistaken) {
		return "", false
	}
	syms := symbolsNamed(t, bin, q.name, false)
	if len(syms) == 0 {
		return "", false
	}
	if want, ok := q.byELFName(perf, syms[:1], firstEvent(g)); !ok || !same(want, g) {
		return "", false
	}
	why := "it asks DWARF about the symbol's file offset, another function's address here"
	switch {
	case q.rest != "" && p.Code == exitENOENT && p.Stdout == "":
		why = "with arguments it fails before its symbol-table search"

	case p.Code == exitUsage:
		why = "perf 6.1 cannot parse the qualified name there"
	case strings.Contains(p.Stderr, "Failed to find debug information for address") && !hasSection(t, bin, ".debug_aranges"):
		why = "no .debug_aranges: libdw finds no unit for the symbol's address"
	case strings.Contains(p.Stderr, "Failed to find debug information for address"):
		why = "it asks DWARF about the symbol's file offset, which no unit covers"
	}
	return fmt.Sprintf("perf wrong (%s; gprobe answers as perf does for %s): %q", why, syms[0].raw, args), true
}

// overloads proves gprobe's answer to a qualified name several functions
// have (C++ overloads, Rust generic instances) and to one function's
// signature ("ns::Klass::method(int)", as -v -F spells it), which perf 6.1
// does not look up: perf probes the first function of a name (by address)
// only; gprobe probes each, and its answer is perf's to the question
// asked by each function's ELF name, in address order (byELFName: each
// event named after the function's signature unless the probe names it).
func overloads(t *testing.T, perf *testenv.Perf, bin string, args []string, g result) (string, bool) {
	t.Helper()
	q, ok := parseQualified(args)
	if !ok || g.Code != 0 || q.opt == "-L" {
		return "", false
	}
	signature := strings.Contains(q.name, "(")
	syms := symbolsNamed(t, bin, q.name, signature)
	if len(syms) < 2 && !signature || len(syms) == 0 {
		return "", false
	}
	want, ok := q.byELFName(perf, syms, firstEvent(g))
	if !ok || !same(want, g) {
		return "", false
	}
	if signature {
		return fmt.Sprintf("one function by its signature, which perf 6.1 does not look up; gprobe answers as perf does for %s: %q", syms[0].raw, args), true
	}
	names := make([]string, len(syms))
	for i, s := range syms {
		names[i] = s.raw
	}
	return fmt.Sprintf("every function of the name (perf 6.1's search by name stops at the first); gprobe answers as perf does for each of %s: %q", strings.Join(names, ", "), args), true
}

// firstEvent is the event name of the first probe line of g, "" if none.
func firstEvent(g result) string {
	if m := eventRE.FindStringSubmatch(g.Stdout); m != nil {
		return m[1]
	}
	return ""
}

var eventRE = regexp.MustCompile(`^[pr]:[^/]+/(\S+) `)

// namedSymbol is a function symbol of a binary and its demangled names.
type namedSymbol struct {
	raw   string // the ELF name
	addr  uint64
	short string // as perf shows it (c++filt -p, Rust's hashes and crate disambiguators dropped)
	full  string // with parameters (c++filt, the same dropped)
}

var (
	demangledMu sync.Mutex
	demangled   = map[string][]namedSymbol{}
)

// rustHash and rustCrate are what perf leaves out of c++filt's Rust names:
// a legacy name's hash, a v0 name's crate disambiguators.
var (
	rustHash  = regexp.MustCompile(`::h[0-9a-f]{16}$`)
	rustCrate = regexp.MustCompile(`\[[0-9a-f]+\]`)
)

// symbolsNamed lists bin's function symbols whose name as perf shows it
// (or, with full, with parameters) is name, one per address, in address
// order; c++filt, not gprobe's demangler, is the oracle.
func symbolsNamed(t *testing.T, bin, name string, full bool) []namedSymbol {
	t.Helper()
	demangledMu.Lock()
	defer demangledMu.Unlock()
	all, ok := demangled[bin]
	if !ok {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		syms, err := f.Symbols()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var in strings.Builder
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF {
				all = append(all, namedSymbol{raw: s.Name, addr: s.Value})
				in.WriteString(s.Name + "\n")
			}
		}
		for _, flags := range [][]string{{"-p"}, nil} {
			cmd := exec.Command(testenv.Tool(t, "c++filt"), flags...)
			cmd.Stdin = strings.NewReader(in.String())
			outb, err := cmd.Output()
			if err != nil {
				t.Fatalf("c++filt: %v", err)
			}
			lines := strings.Split(strings.TrimSuffix(string(outb), "\n"), "\n")
			if len(lines) != len(all) {
				t.Fatalf("c++filt gave %d names for %d", len(lines), len(all))
			}
			for i, l := range lines {
				l = rustCrate.ReplaceAllString(rustHash.ReplaceAllString(l, ""), "")
				if flags != nil {
					all[i].short = l
				} else {
					all[i].full = l
				}
			}
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].addr < all[j].addr })
		demangled[bin] = all
	}
	var out []namedSymbol
	for _, s := range all {
		n := s.short
		if full {
			n = s.full
		}
		if n == name && (len(out) == 0 || out[len(out)-1].addr != s.addr) {
			out = append(out, s)
		}
	}
	return out
}

// hasSection reports whether bin has the named section.
func hasSection(t *testing.T, bin, name string) bool {
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.Section(name) != nil
}

var listingLineRE = regexp.MustCompile(`^ *(\d+)  `)

// unreversibleLines proves a -L listing where gprobe numbers lines perf
// leaves unnumbered, and nothing else differs, as perf 6.1's mistake in
// line_range_walk_cb: a line is listed if cu_find_lineinfo maps its
// address back to it, and where cu_getsrc_die finds no is_stmt row at the
// address, cu_find_lineinfo leaves the callback's __lineno and __fname as
// they were, uninitialised, and perf drops the line. Each such line must
// be the call line of an inlined subroutine (read with debug/dwarf) whose
// entry address has no is_stmt row at or before it in its run of rows
// (cu_getsrc_die's search), which is where gprobe's walk keeps it.
func unreversibleLines(t *testing.T, bin, perfOut, gOut string) ([]int, bool) {
	pl, gl := strings.Split(perfOut, "\n"), strings.Split(gOut, "\n")
	if len(pl) != len(gl) || len(pl) < 2 {
		return nil, false
	}
	// The header gives the function's declaration line: "<work@FILE:0>"
	// lists lines relative to it; find it through debug/dwarf below.
	var extra []int
	for i := range pl {
		if pl[i] == gl[i] {
			continue
		}
		m := listingLineRE.FindStringSubmatch(gl[i])
		if m == nil || strings.TrimLeft(pl[i], " ") != strings.TrimLeft(gl[i][len(m[0]):], " ") {
			return nil, false
		}
		n, _ := strconv.Atoi(m[1])
		extra = append(extra, n)
	}
	if len(extra) == 0 {
		return nil, false
	}
	fn := strings.TrimPrefix(strings.SplitN(gl[0], "@", 2)[0], "<")
	d := dwarfOf(t, bin)
	for r := d.Reader(); ; {
		cu, err := r.Next()
		if err != nil || cu == nil {
			return nil, false
		}
		if cu.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(cu)
		if err != nil || lr == nil {
			r.SkipChildren()
			continue
		}
		var rows []dwarf.LineEntry
		for {
			var e dwarf.LineEntry
			if lr.Next(&e) != nil {
				break
			}
			rows = append(rows, e)
		}
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].Address < rows[j].Address })
		// The function's definition in this unit, and its inlined calls.
		var decl int64
		calls := map[int64][]uint64{} // call line -> entry addresses
		depth, in := 0, -1
		for {
			e, err := r.Next()
			if err != nil || e == nil {
				break
			}
			if e.Tag == 0 {
				depth--
				if depth == in {
					in = -1
				}
				if depth < 0 {
					break
				}
				continue
			}
			if in < 0 && e.Tag == dwarf.TagSubprogram && e.Val(dwarf.AttrName) == fn && e.Val(dwarf.AttrLowpc) != nil {
				decl, _ = e.Val(dwarf.AttrDeclLine).(int64)
				in = depth
			} else if in >= 0 && e.Tag == dwarf.TagInlinedSubroutine {
				line, _ := e.Val(dwarf.AttrCallLine).(int64)
				if low, ok := e.Val(dwarf.AttrLowpc).(uint64); ok {
					calls[line] = append(calls[line], low)
				} else if rs, err := d.Ranges(e); err == nil && len(rs) > 0 {
					calls[line] = append(calls[line], rs[0][0])
				}
			}
			if e.Children {
				depth++
			}
		}
		if decl == 0 {
			continue
		}
		for _, n := range extra {
			proven := false
			for _, addr := range calls[decl+int64(n)] {
				if !stmtRowAt(rows, addr) {
					proven = true
				}
			}
			if !proven {
				return nil, false
			}
		}
		return extra, true
	}
}

// stmtRowAt is cu_getsrc_die's search: the rows at the last address at or
// below addr, then the first is_stmt row from there not beyond addr.
func stmtRowAt(rows []dwarf.LineEntry, addr uint64) bool {
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Address > addr }) - 1
	if i < 0 {
		return false
	}
	for i > 0 && rows[i-1].Address == rows[i].Address {
		i--
	}
	for ; i < len(rows) && rows[i].Address <= addr; i++ {
		if rows[i].IsStmt && !rows[i].EndSequence {
			return true
		}
	}
	return false
}

var thisArgRE = regexp.MustCompile(` this->(\w+)`)

// classMembers proves this->MEMBER in a method of a C++ class, which perf
// 6.1 refuses ("this is not a data structure nor a union."; it takes only
// structures and unions): gprobe's line is perf's for the same point with
// "this" alone, its this=LOC[:x64] read as MEMBER=+OFF(LOC):TYPE, where OFF
// and TYPE are the member's in the class's DWARF (read with debug/dwarf),
// and every other argument as perf gives it.
func classMembers(t *testing.T, perf *testenv.Perf, bin string, args []string, g result) (string, bool) {
	def := args[len(args)-1]
	m := thisArgRE.FindStringSubmatch(def)
	if m == nil {
		return "", false
	}
	member := m[1]
	p := perf.Probe(append(args[:len(args)-1:len(args)-1], thisArgRE.ReplaceAllString(def, " this"))...)
	if p.Code != 0 || p.Stderr != g.Stderr {
		return "", false
	}
	off, typ, ok := classMember(t, bin, member)
	if !ok {
		return "", false
	}
	// perf types this x64, or not at all where it is a const pointer
	// (clang's "Klass *const").
	loc := regexp.MustCompile(`(?m) this=(\S+?)(?::x64)?( |$)`)
	want := loc.ReplaceAllStringFunc(p.Stdout, func(s string) string {
		m := loc.FindStringSubmatch(s)
		return fmt.Sprintf(" %s=+%d(%s):%s%s", member, off, m[1], typ, m[2])
	})
	if want != g.Stdout {
		return "", false
	}
	return fmt.Sprintf("gprobe reads this->%s through a class (perf 6.1 only through a structure): %q", member, args), true
}

// classMember finds member in a class of bin's DWARF: its offset and its
// fetch type (s/u and its size in bits, for a base type).
func classMember(t *testing.T, bin, member string) (int64, string, bool) {
	d := dwarfOf(t, bin)
	r := d.Reader()
	inClass := false
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return 0, "", false
		}
		switch {
		case e.Tag == dwarf.TagClassType:
			inClass = e.Children
			continue
		case e.Tag == 0:
			inClass = false
			continue
		case !inClass || e.Tag != dwarf.TagMember || e.Val(dwarf.AttrName) != member:
			if inClass && e.Children {
				r.SkipChildren()
			}
			continue
		}
		off, ok := e.Val(dwarf.AttrDataMemberLoc).(int64)
		toff, tok := e.Val(dwarf.AttrType).(dwarf.Offset)
		if !ok || !tok {
			return 0, "", false
		}
		tr := d.Reader()
		tr.Seek(toff)
		te, err := tr.Next()
		if err != nil || te == nil || te.Tag != dwarf.TagBaseType {
			return 0, "", false
		}
		size, _ := te.Val(dwarf.AttrByteSize).(int64)
		enc, _ := te.Val(dwarf.AttrEncoding).(int64)
		sign := "u"
		if enc == 0x05 || enc == 0x06 { // DW_ATE_signed, DW_ATE_signed_char
			sign = "s"
		}
		return off, fmt.Sprintf("%s%d", sign, size*8), true
	}
}

// dwarfOf reads an image's DWARF with the standard library (the oracle of
// the differential tests).
func dwarfOf(t *testing.T, path string) *dwarf.Data {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestNamesRetInsn: --ret-insn takes a qualified name as FUNC%return does:
// every overload, each event named after its signature, at the exits
// --ret-insn finds for each function asked by its ELF name (demangling
// off, as perf needs it for a symbol-table lookup); a glob
// matches demangled names.
func TestNamesRetInsn(t *testing.T) {
	testenv.Heavy(t, "building the C++ program of names")
	for _, b := range testenv.NamesBuilds() {
		if b.Rust() || !strings.Contains(b.Name, "O2") {
			continue
		}
		bin := b.Build(t)
		var want string
		for _, raw := range []struct{ elf, event string }{
			{"_ZN2ns5Klass6methodEi", "ns_Klass_method_int"},
			{"_ZN2ns5Klass6methodEPKc", "ns_Klass_method_char_const"},
		} {
			r := runGprobe("-x", bin, "--no-demangle", "--ret-insn", "-D", raw.event+"="+raw.elf+"%return")
			if r.Code != 0 || r.Stdout == "" {
				t.Fatalf("%s: --ret-insn by ELF name %s: %s", b.Name, raw.elf, r)
			}
			want += r.Stdout
		}
		if r := runGprobe("-x", bin, "--ret-insn", "-D", `"ns::Klass::method"%return`); r.Code != 0 || r.Stdout != want {
			t.Errorf("%s: --ret-insn \"ns::Klass::method\"%%return: %s\nwant:\n%s", b.Name, r, want)
		}
		r := runGprobe("-x", bin, "--ret-insn", "-D", `ns\:\:Klass\:\:s*%return`)
		if r.Code != 0 || !strings.Contains(r.Stdout, "/ns_Klass_smethod_int__retinsn ") || !strings.Contains(r.Stdout, "/ns_Klass_scale_ns_Point__retinsn ") {
			t.Errorf("%s: --ret-insn ns\\:\\:Klass\\:\\:s*%%return: %s", b.Name, r)
		}
	}
}
