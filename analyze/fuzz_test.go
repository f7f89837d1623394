package analyze_test

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze"
	recordings "github.com/gprobe/gprobe/analyze/internal/golden"
	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/internal/tracefmt"
)

// smallInput keeps only refprog's event formats, so that fuzz seeds stay
// small.
func smallInput(t testing.TB) *recorded {
	in := readRecorded(t, recordings.Path(t, "v7-none.dat.zst"))
	in.Systems = slices.DeleteFunc(in.Systems, func(s tracefmt.System) bool { return !strings.HasPrefix(s.Name, "gpa_") })
	return in
}

// FuzzDetect feeds arbitrary files to detection, decoding and both
// analyses: they must never panic or hang.
func FuzzDetect(f *testing.F) {
	in := smallInput(f)
	f.Add(in.write(f, 6, "", false))
	for _, c := range []string{"none", "zlib", "zstd"} {
		f.Add(in.write(f, 7, c, false))
	}
	txt, _ := os.ReadFile("testdata/golden/trace.txt")
	f.Add(txt[:2048])
	spec, _ := refcount.ParseSpec("get=obj_get,put=obj_put")
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := analyze.Detect(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		read, _ := analyze.Run(src, analyze.Config{Refcount: &spec})
		// Read in place (as from a mapped file), the same bytes give the
		// same report.
		src, err = analyze.Detect(tracefmt.InMemory(data), int64(len(data)))
		if err != nil {
			t.Fatalf("read through ReadAt, detected; in place: %v", err)
		}
		inPlace, _ := analyze.Run(src, analyze.Config{Refcount: &spec})
		if a, b := jsonOf(t, read), jsonOf(t, inPlace); !bytes.Equal(a, b) {
			t.Fatalf("through ReadAt:\n%s\nin place:\n%s", a, b)
		}
	})
}
