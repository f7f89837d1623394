package demangle

import (
	"debug/elf"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// benchNames is the corpus of a benchmark: NAMES=FILE (one name a line,
// such as perf probe -x LIB --no-demangle -F '*' prints) or libstdc++'s.
func benchNames(b *testing.B) []string {
	if path := os.Getenv("NAMES"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	return readNames(b, "libstdc++")
}

// BenchmarkName demangles the corpus one name at a time.
func BenchmarkName(b *testing.B) {
	names := benchNames(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, n := range names {
			Name(n, Options{})
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(names)), "ns/name")
}

// BenchmarkNames demangles the corpus as -F does (Names).
func BenchmarkNames(b *testing.B) {
	names := benchNames(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Names(names, Options{})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(names)), "ns/name")
}

// libjvm is Debian's openjdk-17 JVM: 58,000 C++ symbols, the largest
// library -F is measured on (scripts/bench-names.sh).
const libjvm = "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"

// elfNames returns the names of path's .symtab and .dynsym, as -F lists
// them (skipping the benchmark when path is not installed).
func elfNames(b *testing.B, path string) []string {
	f, err := elf.Open(path)
	if err != nil {
		b.Skipf("%s: %v", path, err)
	}
	defer f.Close()
	var names []string
	for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, err := read()
		if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
			b.Fatal(err)
		}
		for _, s := range syms {
			if s.Name != "" {
				names = append(names, s.Name)
			}
		}
	}
	return names
}

// libstdcxx is Debian's libstdc++ (7,000 symbols, long template names).
const libstdcxx = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

// BenchmarkDemangleLibjvm is a library's first -F: List over libjvm's
// every symbol name.
func BenchmarkDemangleLibjvm(b *testing.B) { benchList(b, libjvm) }

// BenchmarkDemangleLibstdcxx is List over libstdc++'s symbol names.
func BenchmarkDemangleLibstdcxx(b *testing.B) { benchList(b, libstdcxx) }

// benchList times List over the names of the library at path.
func benchList(b *testing.B, path string) {
	names := elfNames(b, path)
	keep := func(string) bool { return true }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		List(slices.Clone(names), Options{}, keep, nil)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(names)), "ns/name")
}
