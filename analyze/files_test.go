package analyze_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gprobe/gprobe/analyze"
	recordings "github.com/gprobe/gprobe/analyze/internal/golden"
	"github.com/gprobe/gprobe/analyze/refcount"
)

// fleet makes a directory of n recordings: links to the golden trace.dat
// files in turn, some in subdirectories, beside files that are not
// recordings.
func fleet(t *testing.T, n int) string {
	t.Helper()
	var dats []string
	for _, name := range []string{"v7-zstd.dat", "v7-none.dat.zst", "v6.dat.zst", "gprobe.dat.zst"} {
		p, err := filepath.Abs(recordings.Path(t, name))
		if err != nil {
			t.Fatal(err)
		}
		dats = append(dats, p)
	}
	dir := t.TempDir()
	for i := 0; i < n; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("host%d", i%7))
		os.MkdirAll(sub, 0o755)
		if err := os.Symlink(dats[i%len(dats)], filepath.Join(sub, fmt.Sprintf("r%04d.dat", i))); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "README"), []byte("not a recording\n"), 0o644)
	return dir
}

// TestManyFiles analyses a directory of recordings in one pass: exact
// totals, one report per file, and memory that does not grow with the
// number of files (each file's state is dropped once it is reported).
func TestManyFiles(t *testing.T) {
	spec, _ := refcount.ParseSpec("get=obj_get,put=obj_put")
	cfg := analyze.Config{Refcount: &spec, MaxListed: 5}
	heapAfter := func(n int) (uint64, int) {
		paths, err := analyze.Inputs([]string{fleet(t, n)})
		if err != nil {
			t.Fatal(err)
		}
		if len(paths) != n {
			t.Fatalf("%d inputs, want %d", len(paths), n)
		}
		reports := 0
		total, err := analyze.RunFiles(paths, cfg, func(a *analyze.Analysis) error {
			r := a.Report()
			golden.check(t, r)
			if r.File == "" {
				t.Errorf("report without its file")
			}
			reports++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		r := total.Report()
		if r.Recordings != n || r.Events != int64(n*golden.events()) || r.Latency[0].Count != uint64(n*golden.work()) {
			t.Errorf("total: %d recordings, %d events, %d calls", r.Recordings, r.Events, r.Latency[0].Count)
		}
		rc := r.Refcount
		if rc.Objects != n*golden.objs || rc.Outstanding != n*golden.leaked || rc.Underflows != n*golden.dbl || len(rc.Leaks) != 5 || rc.LeakSites != 2 {
			t.Errorf("total refcount %+v", rc)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse, reports
	}
	few, n := heapAfter(20)
	if n != 20 {
		t.Fatalf("%d reports, want 20", n)
	}
	many, _ := heapAfter(400)
	t.Logf("heap in use after 20 files: %d KiB, after 400: %d KiB", few>>10, many>>10)
	if many > few+1<<20 {
		t.Errorf("memory grows with the number of files: %d KiB after 20, %d KiB after 400", few>>10, many>>10)
	}
}
