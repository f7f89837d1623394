package analyze_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze"
	recordings "github.com/gprobe/gprobe/analyze/internal/golden"
	"github.com/gprobe/gprobe/analyze/report"
	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/internal/tracefmt"
)

// golden is what testdata/golden/gen.sh recorded.
var golden = refprog{calls: 30, objs: 10, leaked: 3, dbl: 2}

func jsonOf(t *testing.T, rep *report.Report) []byte {
	var b bytes.Buffer
	if err := report.JSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGolden checks the exact counts on the committed recordings and
// compares the whole JSON report with the committed one.
func TestGolden(t *testing.T) {
	for _, name := range recordings.Files {
		t.Run(name, func(t *testing.T) {
			rep := analyzeFile(t, recordings.Path(t, name))
			golden.check(t, rep)
			got := jsonOf(t, rep)
			want := filepath.Join(recordings.Dir(), strings.TrimSuffix(name, ".zst")+".json")
			if *testenv.Update {
				if err := os.WriteFile(want, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			exp, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, exp) {
				t.Errorf("report differs from %s (go test -update rewrites it):\n%s", want, got)
			}
		})
	}
}

// TestJSONSchema checks the keys scripts rely on.
func TestJSONSchema(t *testing.T) {
	rep := analyzeFile(t, recordings.Path(t, "v7-zstd.dat"))
	var m map[string]any
	if err := json.Unmarshal(jsonOf(t, rep), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"events", "lost_events", "truncated", "latency", "refcount"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q", k)
		}
	}
	lat := m["latency"].([]any)[0].(map[string]any)
	for _, k := range []string{"function", "entry_event", "return_event", "count", "unmatched_entries", "unmatched_returns", "min_ns", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns", "histogram"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("latency has no %q", k)
		}
	}
	rc := m["refcount"].(map[string]any)
	for _, k := range []string{"objects", "outstanding", "underflows", "use_after_put", "leaks"} {
		if _, ok := rc[k]; !ok {
			t.Errorf("refcount has no %q", k)
		}
	}
	leak := rc["leaks"].([]any)[0].(map[string]any)
	for _, k := range []string{"key", "count", "first_ts", "last_ts", "site"} {
		if _, ok := leak[k]; !ok {
			t.Errorf("leak has no %q", k)
		}
	}
}

// recorded is what a real trace-cmd file holds, taken apart for the
// writer: its event formats, command lines and each CPU's pages.
type recorded struct {
	tracefmt.Content
	instance string
	cpus     [][]byte
}

// readRecorded takes a trace.dat apart with the reader.
func readRecorded(t testing.TB, path string) *recorded {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := tracefmt.Open(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	r := &recorded{Content: tracefmt.Content{HeaderPage: []byte(f.HeaderPageText), HeaderEvent: []byte("# compressed entry header\n"),
		PageSize: f.PageSize, LongSize: 8, Clock: "local"}}
	bySystem := map[string]int{}
	for _, id := range f.FormatIDs() {
		sys, text, _ := f.FormatSource(id)
		if sys == "ftrace" {
			continue
		}
		i, ok := bySystem[sys]
		if !ok {
			i = len(r.Systems)
			bySystem[sys] = i
			r.Systems = append(r.Systems, tracefmt.System{Name: sys})
		}
		r.Systems[i].Formats = append(r.Systems[i].Formats, []byte(text))
	}
	var cl strings.Builder
	for pid, comm := range f.Cmdlines.All() {
		fmt.Fprintf(&cl, "%d %s\n", pid, comm)
	}
	r.Cmdlines = []byte(cl.String())
	// What the reports tell of the recording itself: its host and the
	// kernel's loss counters.
	if f.Uname != "" {
		r.Options = append(r.Options, tracefmt.Option{ID: tracefmt.OptionUname, Data: tracefmt.CString(f.Uname)})
	}
	for _, st := range f.CPUStats {
		r.Options = append(r.Options, tracefmt.Option{ID: tracefmt.OptionCPUStat, Data: []byte(st)})
	}
	for bi := range f.Buffers {
		b := &f.Buffers[bi]
		if len(b.CPUs) == 0 {
			continue
		}
		r.instance = b.Name
		for ci := range b.CPUs {
			var data []byte
			p := f.Pages(b, ci)
			for {
				pg, err := p.Next()
				if err != nil {
					break
				}
				data = append(data, pg...)
			}
			r.cpus = append(r.cpus, data)
		}
	}
	return r
}

// write returns the recording written as trace.dat version (6 or 7) with
// compression comp, its buffer named after the recorded instance (v7)
// unless top.
func (r *recorded) write(t testing.TB, version int, comp string, top bool) []byte {
	t.Helper()
	c := r.Content
	c.Version, c.Compression = version, comp
	if version == 7 && !top {
		c.Instance = r.instance
	}
	for _, d := range r.cpus {
		c.CPUs = append(c.CPUs, tracefmt.CPUData{R: bytes.NewReader(d), Size: int64(len(d))})
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// traceCmdHasZlib tells whether the trace-cmd here reads zlib-compressed
// files: it may be built without zlib (`trace-cmd list -c`).
func traceCmdHasZlib(t testing.TB) bool {
	out, err := exec.Command("trace-cmd", "list", "-c").CombinedOutput()
	if err != nil {
		t.Fatalf("trace-cmd list -c: %v\n%s", err, out)
	}
	return strings.Contains(string(out), "zlib")
}

// TestWrittenVariants writes the golden recording's pages and formats
// back with the shipped writer as v6 and as v7 uncompressed, zlib and
// zstd, and expects the same report from each. trace-cmd reads the files
// it can read, as a check on the writer.
func TestWrittenVariants(t *testing.T) {
	in := readRecorded(t, recordings.Path(t, "v7-none.dat.zst"))
	base := analyzeFile(t, recordings.Path(t, "v7-zstd.dat"))
	dir := t.TempDir()
	variants := map[string][]byte{
		// the top-level buffer rather than a named instance
		"v7-top":  in.write(t, 7, "zstd", true),
		"v6":      in.write(t, 6, "", false),
		"v7-none": in.write(t, 7, "none", false),
		"v7-zlib": in.write(t, 7, "zlib", false),
		"v7-zstd": in.write(t, 7, "zstd", false),
	}
	for name, data := range variants {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".dat")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			rep := analyzeFile(t, path)
			golden.check(t, rep)
			rep.Format, base.Format = "", ""
			if !bytes.Equal(jsonOf(t, rep), jsonOf(t, base)) {
				t.Errorf("%s report differs from trace-cmd's v7:\n%s", name, jsonOf(t, rep))
			}
			if _, err := exec.LookPath("trace-cmd"); err != nil {
				return
			}
			if name == "v7-zlib" && !traceCmdHasZlib(t) {
				return
			}
			if n := traceCmdCount(t, path); n != golden.events() {
				t.Errorf("trace-cmd report reads %d events from our %s, want %d", n, name, golden.events())
			}
		})
	}
}

func runAll(src trace.Source) (int64, error) {
	var n int64
	err := src.Run(func(e *trace.Event) error {
		if e.Kind == trace.Data {
			_, _ = e.Value("obj")
			n++
		}
		return nil
	})
	return n, err
}

// TestTruncated cuts every golden recording at many points: the reader
// never panics, reads what is sound, and says when data was cut.
func TestTruncated(t *testing.T) {
	for _, name := range recordings.Files {
		raw, err := os.ReadFile(recordings.Path(t, name))
		if err != nil {
			t.Fatal(err)
		}
		full := int64(golden.events())
		sawPartial := false
		var cuts []int
		for i := 1; i < 60; i++ {
			cuts = append(cuts, len(raw)*i/60)
		}
		// Cuts inside each CPU's data.
		if f, err := tracefmt.Open(bytes.NewReader(raw), int64(len(raw))); err == nil {
			for _, b := range f.Buffers {
				for _, c := range b.CPUs {
					for k := int64(1); k < 8; k++ {
						cuts = append(cuts, int(c.Offset+c.Size*k/8))
					}
				}
			}
		}
		for _, cut := range cuts {
			src, err := analyze.Detect(bytes.NewReader(raw[:cut]), int64(cut))
			if err != nil {
				if !strings.HasSuffix(name, ".dat") && !strings.HasSuffix(name, ".zst") {
					t.Errorf("%s cut at %d: %v", name, cut, err)
				}
				continue
			}
			n, err := runAll(src)
			if err != nil {
				t.Errorf("%s cut at %d: %v", name, cut, err)
				continue
			}
			info := src.Info()
			if n > full || n != info.Events {
				t.Errorf("%s cut at %d: %d events (info %d), full file has %d", name, cut, n, info.Events, full)
			}
			if n < full && !info.Truncated && strings.Contains(name, ".dat") {
				t.Errorf("%s cut at %d: %d of %d events but not marked truncated", name, cut, n, full)
			}
			if n > 0 && n < full {
				sawPartial = true
			}
		}
		// A cut inside a compressed chunk loses the chunk; the golden
		// recordings hold one chunk per CPU.
		if !sawPartial && !strings.HasPrefix(name, "v7-zstd") {
			t.Errorf("%s: no cut gave a partial read", name)
		}
	}
}

// TestRandomInput: random bytes are refused with a clear error; random
// bytes behind a valid magic never panic.
func TestRandomInput(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		b := make([]byte, 1+rng.Intn(20000))
		rng.Read(b)
		_, err := analyze.Detect(bytes.NewReader(b), int64(len(b)))
		if !errors.Is(err, analyze.ErrUnknownFormat) {
			t.Fatalf("random %d bytes: %v, want ErrUnknownFormat", len(b), err)
		}
		m := append(append([]byte(nil), tracefmt.Magic...), b...)
		if src, err := analyze.Detect(bytes.NewReader(m), int64(len(m))); err == nil {
			runAll(src)
		}
	}
	if _, err := analyze.Detect(bytes.NewReader(nil), 0); !errors.Is(err, analyze.ErrUnknownFormat) {
		t.Errorf("empty: %v", err)
	}
	txt := []byte("hello world\nthis is not a trace\n")
	src, err := analyze.Detect(bytes.NewReader(txt), int64(len(txt)))
	if err == nil {
		_, err = runAll(src)
	}
	if !errors.Is(err, analyze.ErrUnknownFormat) {
		t.Errorf("prose: %v, want ErrUnknownFormat", err)
	}
}

// TestGprobeMetadata: gprobe record's own option gives the probe
// definitions (used to pair probes) and the thread-to-process map.
func TestGprobeMetadata(t *testing.T) {
	rec, err := analyze.Open(recordings.Path(t, "gprobe.dat.zst"))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	tgids := 0
	if err := rec.Run(func(e *trace.Event) error {
		if e.TGID != 0 {
			tgids++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	probes := rec.Info().Probes
	if len(probes) != 4 || !strings.Contains(strings.Join(probes, "\n"), "work__return") {
		t.Errorf("probes %q", probes)
	}
	if tgids != golden.events() {
		t.Errorf("%d of %d events have a TGID", tgids, golden.events())
	}
}
