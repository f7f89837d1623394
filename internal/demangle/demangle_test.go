package demangle

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

// The corpora are symbol names of real programs (Debian's libstdc++,
// libjvm, LLVM 14/15, the Rust toolchain's librustc_driver with v0 names,
// a Rust program built with rustc 1.95) and hand-written edge cases
// (testdata/edge.txt: OCaml, Java, Rust escapes and hashes, clone
// suffixes, empty packs, addresses of functions, malformed names).
// golden/CORPUS.golden holds each name, its name as perf shows it, and as
// perf -v shows it; TestPerf proves those are perf 6.1's answers.
var corpora = []string{"edge", "libstdc++", "libjvm", "llvm", "rust-legacy", "rust-v0"}

func readNames(t testing.TB, corpus string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", corpus+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if sc.Text() != "" {
			names = append(names, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

func golden(names []string) string {
	var b strings.Builder
	for _, n := range names {
		d, _ := Name(n, Options{})
		p, _ := Name(n, Options{Params: true})
		fmt.Fprintf(&b, "%s\t%s\t%s\n", n, d, p)
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	for _, c := range corpora {
		t.Run(c, func(t *testing.T) {
			got := golden(readNames(t, c))
			path := filepath.Join("testdata", "golden", c+".golden")
			if *testenv.Update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
			if len(gl) != len(wl) {
				t.Fatalf("%d lines, golden has %d (go test -update rewrites it)", len(gl), len(wl))
			}
			bad := 0
			for i := range gl {
				if gl[i] != wl[i] {
					t.Errorf("got  %q\nwant %q", gl[i], wl[i])
					if bad++; bad > 10 {
						t.FailNow()
					}
				}
			}
		})
	}
}

func TestName(t *testing.T) {
	for _, c := range []struct {
		sym, want, params string
	}{
		{"main", "main", "main"},
		{"_Z3foov", "foo", "foo()"},
		{"_Z3foov.cold", "foo", "foo() [clone .cold]"},
		{"_ZN2ns5Klass7smethodEi", "ns::Klass::smethod", "ns::Klass::smethod(int)"},
		{"_ZL6helperi", "helper", "helper(int)"},
		{"_ZTVN2ns5KlassE", "vtable for ns::Klass", "vtable for ns::Klass"},
		{"_ZNSt6vectorIiSaIiEE4sizeEv", "std::vector<int, std::allocator<int> >::size", "std::vector<int, std::allocator<int> >::size()"},
		// Empty packs: libiberty's ", " taken back, and no space before '>'.
		{"_ZN1AI1BIiEJEE1fEv", "A<B<int>>::f", "A<B<int>>::f()"},
		{"_Z1fIJEEvT_DpT0_", "f<>", "_Z1fIJEEvT_DpT0_"},
		// The address of a function: its signature unless qualified.
		{"_ZN1SIXadL_Z1fvEEE1gEv", "S<&(f())>::g", "S<&(f())>::g()"},
		{"_ZN1SIXadL_ZN2ns1fEvEEE1gEv", "S<&ns::f>::g", "S<&ns::f>::g()"},
		// Rust: legacy without the hash, v0 without disambiguators.
		{"_ZN2rs4work17h8b2f9bb50bc3bfa9E", "rs::work", "rs::work"},
		{"_ZN3std3sys9backtrace28__rust_begin_short_backtrace17h0123456789abcdefE", "std::sys::backtrace::__rust_begin_short_backtrace", "std::sys::backtrace::__rust_begin_short_backtrace"},
		{"_RNCNvCsbFYJioi4cCO_2rs4work0B3_", "rs::work::{closure#0}", "rs::work::{closure#0}"},
		{"_RNvNCNCNvCs1234_7mycrate4main0010___CALLSITE", "mycrate::main::{closure#0}::{closure#0}::__CALLSITE", "mycrate::main::{closure#0}::{closure#0}::__CALLSITE"},
		// perf's own Rust step on a name libiberty's Rust demangler refused.
		{"_ZN3foo3bar17h0123456789abcdeeEv", "foo::bar", "foo::bar::h0123456789abcdee()"},
		{"camlStdlib__array__map_154", "Stdlib.array.map_154", "Stdlib.array.map_154"},
		{"Ljava/lang/String;indexOf(I)I", "java.lang.String.indexOf(int)", "java.lang.String.indexOf(int)"},
		{"_Zfoo", "_Zfoo", "_Zfoo"},
	} {
		if got, _ := Name(c.sym, Options{}); got != c.want {
			t.Errorf("Name(%q) = %q, want %q", c.sym, got, c.want)
		}
		if got, _ := Name(c.sym, Options{Params: true}); got != c.params {
			t.Errorf("Name(%q, Params) = %q, want %q", c.sym, got, c.params)
		}
	}
}

// TestMaybe: a name Maybe refuses is never changed, whatever its bytes.
func TestMaybe(t *testing.T) {
	for _, c := range corpora {
		for _, n := range readNames(t, c) {
			for _, o := range []Options{{}, {Params: true}} {
				if got, ok := Name(n, o); !Maybe(n) && (ok || got != n) {
					t.Errorf("Maybe(%q) is false but Name gives %q", n, got)
				}
			}
		}
	}
}

func FuzzName(f *testing.F) {
	for _, c := range corpora {
		for _, n := range readNames(f, c) {
			f.Add(n)
		}
	}
	f.Fuzz(func(t *testing.T, sym string) {
		for _, o := range []Options{{}, {Params: true}} {
			got, ok := Name(sym, o)
			if !ok && got != sym {
				t.Fatalf("Name(%q) = %q without demangling", sym, got)
			}
			if !Maybe(sym) && ok {
				t.Fatalf("Maybe(%q) is false but Name demangled it to %q", sym, got)
			}
			if again, _ := Name(sym, o); again != got {
				t.Fatalf("Name(%q) gave %q, then %q", sym, got, again)
			}
		}
	})
}

// multiset compares two lists of lines regardless of order, returning what
// only one of them has.
func multiset(a, b []string) (onlyA, onlyB []string) {
	count := map[string]int{}
	for _, x := range a {
		count[x]++
	}
	for _, x := range b {
		count[x]--
	}
	for x, n := range count {
		for ; n > 0; n-- {
			onlyA = append(onlyA, x)
		}
		for ; n < 0; n++ {
			onlyB = append(onlyB, x)
		}
	}
	sort.Strings(onlyA)
	sort.Strings(onlyB)
	return onlyA, onlyB
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// difference is a name whose demangling is known to differ from perf's
// (testdata/differences.txt).
type difference struct{ perf, gprobe string }

// differences reads testdata/differences.txt: corpus and mode ("default"
// or "params") → name → the two answers.
func differences(t testing.TB) map[string]map[string]difference {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "differences.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]difference{}
	for _, l := range lines(string(b)) {
		if strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Split(l, "\t")
		if len(f) != 5 {
			t.Fatalf("differences.txt: %q has %d fields", l, len(f))
		}
		k := f[0] + "/" + f[1]
		if out[k] == nil {
			out[k] = map[string]difference{}
		}
		out[k][f[2]] = difference{perf: f[3], gprobe: f[4]}
	}
	return out
}

// comparePerf asks perf for the functions of obj raw (--no-demangle) and
// demangled, with and without -v, and checks that demangling perf's raw
// list gives perf's demangled lists: the same names, each as many times.
// A raw name's "@plt" is kept after the demangled name, as perf does.
// Names of known differences must still be demangled as recorded, and
// perf must still answer as recorded.
func comparePerf(t *testing.T, perf *testenv.Perf, obj, corpus string) int {
	t.Helper()
	known := differences(t)
	raw := perf.Probe("-x", obj, "--no-demangle", "-F", "*")
	if raw.Code != 0 || raw.Stdout == "" {
		t.Fatalf("perf probe -x %s --no-demangle -F '*':\n%s", obj, raw)
	}
	for _, o := range []Options{{}, {Params: true}} {
		args := []string{"-x", obj, "-F", "*"}
		if o.Params {
			args = append([]string{"-v"}, args...)
		}
		want := perf.Probe(args...)
		if want.Code != 0 {
			t.Fatalf("perf probe %s:\n%s", strings.Join(args, " "), want)
		}
		mode := "default"
		if o.Params {
			mode = "params"
		}
		diffs := known[corpus+"/"+mode]
		var got []string
		for _, n := range lines(raw.Stdout) {
			plt := strings.HasSuffix(n, "@plt")
			n = strings.TrimSuffix(n, "@plt")
			d, _ := Name(n, o)
			if k, ok := diffs[n]; ok {
				if d != k.gprobe {
					t.Errorf("%s (%s) is now %q, not the recorded difference %q", n, mode, d, k.gprobe)
				}
				d = k.perf
			}
			if plt {
				d += "@plt"
			}
			got = append(got, d)
		}
		onlyPerf, onlyOurs := multiset(lines(want.Stdout), got)
		if len(onlyPerf)+len(onlyOurs) > 0 {
			t.Errorf("perf probe %s: %d names only perf shows, %d only gprobe\nperf: %q\ngprobe: %q",
				strings.Join(args, " "), len(onlyPerf), len(onlyOurs), head(onlyPerf), head(onlyOurs))
		}
	}
	return len(lines(raw.Stdout))
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}

// TestPerf proves the corpora's golden answers are perf 6.1's: each
// corpus's names as the symbols of a shared object, listed by perf probe
// -F with and without -v.
func TestPerf(t *testing.T) {
	perf := testenv.RequirePerf(t)
	testenv.Tool(t, "gcc")
	for _, c := range corpora {
		t.Run(c, func(t *testing.T) {
			names := readNames(t, c)
			obj := testenv.BuildSymbols(t, c+".so", names)
			if n := comparePerf(t, perf, obj, c); n < len(names) {
				t.Errorf("perf lists %d names of %d", n, len(names))
			}
		})
	}
}

// TestPerfLibraries compares every symbol of Debian's libstdc++ and, when
// openjdk-17-jre-headless is installed, libjvm (58k symbols) with perf.
func TestPerfLibraries(t *testing.T) {
	perf := testenv.RequirePerf(t)
	for _, lib := range []string{
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so",
	} {
		t.Run(filepath.Base(lib), func(t *testing.T) {
			if _, err := os.Stat(lib); err != nil {
				testenv.Missing(t, "%s: %v", lib, err)
			}
			if n := comparePerf(t, perf, lib, filepath.Base(lib)); n < 1000 {
				t.Errorf("perf lists only %d names of %s", n, lib)
			}
		})
	}
}
