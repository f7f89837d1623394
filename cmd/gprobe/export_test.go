package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"
)

// TestExportParquet: the golden recording becomes a Parquet file with one
// row per event (DuckDB's answers on it are analyze/parquet's tests).
func TestExportParquet(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ev.parquet")
	r := runGprobe("export", "--parquet", out, "--host", "h1", "--row-group-rows", "40", goldenDir+"/v7-zstd.dat", goldenDir+"/trace.txt")
	if r.Code != 0 || r.Stdout != out+": 310 events, 13 columns, 8 row groups\n" || r.Stderr != "" {
		t.Fatal(r)
	}
	fh, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, _ := fh.Stat()
	f, err := pq.OpenFile(fh, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range f.Schema().Fields() {
		names = append(names, c.Name())
	}
	if got := strings.Join(names, " "); f.NumRows() != 310 || got != "ts cpu pid tid comm system event host file depth ret obj site" {
		t.Errorf("%d rows, columns %s", f.NumRows(), got)
	}
	if v, _ := f.Lookup("gprobe.events"); v != "310" {
		t.Errorf("gprobe.events = %q", v)
	}
}

// TestExportErrors: one line naming what is wrong, non-zero exit, no
// output file left behind.
func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "ev.parquet")
	os.WriteFile(filepath.Join(dir, "random"), []byte{1, 2, 3, 0, 5}, 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"export", goldenDir + "/trace.txt"}, exitEINVAL, "--parquet OUT.parquet is required"},
		{[]string{"export", "--parquet", out}, exitEINVAL, "no recording to export"},
		{[]string{"export", "--parquet", out, filepath.Join(dir, "missing")}, exitENOENT, "no such file"},
		{[]string{"export", "--parquet", out, goldenDir + "/trace.txt", filepath.Join(dir, "random")}, exitEINVAL, "not a trace.dat or ftrace text recording"},
		{[]string{"export", "--parquet", out, "--row-group-rows", "0", goldenDir + "/trace.txt"}, exitEINVAL, "--row-group-rows 0"},
		{[]string{"export", "--parquet", filepath.Join(dir, "no", "ev.parquet"), goldenDir + "/trace.txt"}, exitENOENT, "no such file"},
	} {
		r := runGprobe(c.args...)
		if r.Code != c.code || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, c.want) || !strings.HasPrefix(r.Stderr, "gprobe export: ") {
			t.Errorf("%q: %s\nwant exit %d and one line with %q", c.args, r, c.code, c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}
