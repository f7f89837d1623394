package demangle

import (
	"os"
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
