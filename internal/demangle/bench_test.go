package demangle

import (
	"os"
	"strings"
	"testing"
)

// BenchmarkLibstdcxx demangles the symbols of Debian's libstdc++ as -F
// does (NAMES=FILE benchmarks another list, one name a line).
func BenchmarkLibstdcxx(b *testing.B) {
	path := os.Getenv("NAMES")
	var names []string
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		names = strings.Split(strings.TrimSpace(string(data)), "\n")
	} else {
		names = readNames(b, "libstdc++")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, n := range names {
			Name(n, Options{})
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(names)), "ns/name")
}
