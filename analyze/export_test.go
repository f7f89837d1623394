package analyze_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/folded"
	recordings "github.com/gprobe/gprobe/analyze/internal/golden"
	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/parquet"
	"github.com/gprobe/gprobe/analyze/perfetto"
	"github.com/gprobe/gprobe/analyze/timeline"
	"github.com/gprobe/gprobe/analyze/trace"
)

// Every output format is an Exporter.
var (
	_ analyze.Exporter = (*timeline.Writer)(nil)
	_ analyze.Exporter = (*perfetto.Writer)(nil)
	_ analyze.Exporter = (*folded.Writer)(nil)
	_ analyze.Exporter = (*parquet.Writer)(nil)
)

// probe is an Exporter that logs what a pass hands it.
type probe struct {
	log      []string
	events   int
	calls    int
	closeErr error
	w        io.Writer
}

func (p *probe) Source(path string, src trace.Source) trace.Source {
	p.log = append(p.log, "source "+filepath.Base(path))
	return &counting{src, p}
}

func (p *probe) Call(latency.Call) { p.calls++ }

func (p *probe) Close() error {
	p.log = append(p.log, "close")
	if p.w != nil {
		io.WriteString(p.w, strings.Join(p.log, "\n"))
	}
	return p.closeErr
}

type counting struct {
	trace.Source
	p *probe
}

func (c *counting) Run(fn func(*trace.Event) error) error {
	return c.Source.Run(func(e *trace.Event) error {
		c.p.events++
		return fn(e)
	})
}

// TestPassHandsExporters: RunFiles hands each exporter every recording
// through Source, in order, every event of each, and every matched call;
// it does not close them.
func TestPassHandsExporters(t *testing.T) {
	paths := []string{recordings.Path(t, "v7-zstd.dat"), recordings.Path(t, "trace.txt")}
	a, b := &probe{}, &probe{}
	total, err := analyze.RunFiles(paths, analyze.Config{Exporters: []analyze.Exporter{a, b}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := total.Report()
	for _, p := range []*probe{a, b} {
		if got := strings.Join(p.log, ","); got != "source v7-zstd.dat,source trace.txt" {
			t.Errorf("exporter saw %s", got)
		}
		if int64(p.events) < rep.Events || p.calls == 0 || uint64(p.calls) != rep.Latency[0].Count {
			t.Errorf("exporter saw %d events and %d calls; the analyses %d events and %d calls", p.events, p.calls, rep.Events, rep.Latency[0].Count)
		}
	}
}

// TestOutputs: files appear, complete, when Close succeeds; an exporter
// that cannot be made, a failed Close or an Abort leave none.
func TestOutputs(t *testing.T) {
	dir := t.TempDir()
	var outs analyze.Outputs
	var ps []*probe
	for _, name := range []string{"a", "b"} {
		err := outs.Create(filepath.Join(dir, name), func(w io.Writer) (analyze.Exporter, error) {
			p := &probe{w: w}
			ps = append(ps, p)
			return p, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	bad := errors.New("no exporter")
	if err := outs.Create(filepath.Join(dir, "c"), func(io.Writer) (analyze.Exporter, error) { return nil, bad }); err != bad {
		t.Errorf("Create: %v", err)
	}
	if len(outs.Exporters()) != 2 {
		t.Fatalf("%d exporters", len(outs.Exporters()))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("before Close: %v (want two temporary files)", ents)
	}
	err := analyze.File(recordings.Path(t, "trace.txt"), analyze.Config{Exporters: outs.Exporters()}, func(*analyze.Analysis) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := outs.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != "source trace.txt\nclose" {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("after Close: %v", ents)
	}

	// The second exporter fails to close: the first file is in place, the
	// second is not.
	dir = t.TempDir()
	outs = analyze.Outputs{}
	for i, name := range []string{"a", "b", "c"} {
		outs.Create(filepath.Join(dir, name), func(w io.Writer) (analyze.Exporter, error) {
			p := &probe{w: w}
			if i == 1 {
				p.closeErr = bad
			}
			return p, nil
		})
	}
	if err := outs.Close(); err != bad {
		t.Errorf("Close: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 || ents[0].Name() != "a" {
		t.Errorf("after a failed Close: %v", ents)
	}

	dir = t.TempDir()
	outs = analyze.Outputs{}
	outs.Create(filepath.Join(dir, "a"), func(w io.Writer) (analyze.Exporter, error) { return &probe{w: w}, nil })
	outs.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("after Abort: %v", ents)
	}
}

// TestParquetWriterOrder: the pass must read the recordings the schema was
// read from, in order.
func TestParquetWriterOrder(t *testing.T) {
	a, b := recordings.Path(t, "trace.txt"), recordings.Path(t, "trace-pipe.txt")
	w, err := parquet.New(io.Discard, []string{a, b}, analyze.Scan, parquet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = analyze.RunFiles([]string{b, a}, analyze.Config{Exporters: []analyze.Exporter{w}}, nil)
	if err == nil || !strings.Contains(err.Error(), "is not the next of the recordings the schema was read from") {
		t.Errorf("recordings out of order: %v", err)
	}
	if err := w.Close(); err == nil {
		t.Error("Close after no recording was written succeeded")
	}
}
