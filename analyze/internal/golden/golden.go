// Package golden names analyze's golden recordings for the tests of
// analyze and of the packages that read what it reads (parquet,
// perfetto): refprog (analyze/testdata/prog) with Calls calls of work
// (recursing to depth i%3) and Objects objects of which Leaked leak and
// Double are put twice, recorded through real uprobes by trace-cmd (v7
// zstd, converted to v6 and v7 uncompressed), by gprobe record, and as
// the kernel's text outputs.
package golden

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// What refprog did in the golden recordings.
const (
	Calls   = 30
	Objects = 10
	Leaked  = 3
	Double  = 2
)

// RefSpec is the refcount spec of the golden recordings' object probes.
const RefSpec = "get=obj_get,put=obj_put"

// Files are the golden recordings, by name in the directory Dir returns;
// names ending in .zst are stored compressed (Path inflates them).
var Files = []string{"v7-zstd.dat", "v7-none.dat.zst", "v6.dat.zst", "gprobe.dat.zst",
	"trace.txt", "trace-tgid.txt", "trace-noirq.txt", "trace-lat.txt", "trace-pipe.txt", "report.txt"}

// Dir is analyze/testdata/golden, wherever the test runs from.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "golden")
}

// Path returns a readable path for a golden file, inflating a .zst copy
// into the test's temporary directory.
func Path(t testing.TB, name string) string {
	t.Helper()
	src := filepath.Join(Dir(), name)
	if !strings.HasSuffix(name, ".zst") {
		return src
	}
	z, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	d, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	raw, err := d.DecodeAll(z, nil)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), strings.TrimSuffix(name, ".zst"))
	if err := os.WriteFile(dst, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}
