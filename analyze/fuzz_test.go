package analyze_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/internal/datgen"
	"github.com/gprobe/gprobe/analyze/refcount"
)

// smallInput keeps only refprog's event formats and 1 KB pages, so that
// fuzz seeds stay small.
func smallInput(t testing.TB) datgen.Input {
	in := datgenInput(t, goldenPath(t, "v7-none.dat.zst"))
	for sys := range in.Systems {
		if !strings.HasPrefix(sys, "gpa_") {
			delete(in.Systems, sys)
		}
	}
	return in
}

// FuzzDetect feeds arbitrary files to detection, decoding and both
// analyses: they must never panic or hang.
func FuzzDetect(f *testing.F) {
	in := smallInput(f)
	f.Add(datgen.V6(in))
	for _, c := range []string{"none", "zlib", "zstd"} {
		f.Add(datgen.V7(in, c))
	}
	txt, _ := os.ReadFile("testdata/golden/trace.txt")
	f.Add(txt[:2048])
	spec, _ := refcount.ParseSpec("get=obj_get,put=obj_put")
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := analyze.Detect(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		analyze.Run(src, analyze.Config{Refcount: &spec})
	})
}
