package analyze

import (
	"io"

	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/internal/atomicfile"
)

// An Exporter writes what one pass over recordings sees in an output
// format of other tools (timeline, perfetto, folded, parquet). A pass
// (File, RunFiles) hands every exporter of Config.Exporters:
//
//   - each recording, before it is read: Source returns the source the
//     pass reads instead of src, which is src itself when the exporter
//     does not look at events, or src with the exporter seeing each event
//     (data and loss markers, in order) before the analyses do;
//   - every call the latency analysis matches, as it returns (innermost
//     first): Call;
//   - the end of the pass: Close finishes the output and reports the
//     first error met writing it.
//
// Analyze and Run, which are given a source rather than a path, hand the
// exporters only the calls. A new format is a package implementing
// Exporter and a row in the CLI's table of formats.
type Exporter interface {
	Source(path string, src trace.Source) trace.Source
	Call(c latency.Call)
	Close() error
}

// Outputs are the exporters of one pass and the files they write. Each
// file is written under a temporary name beside its path and put in place
// by Close: a pass that fails leaves no partial output.
type Outputs struct {
	files []*atomicfile.File
	exps  []Exporter
}

// Create starts the file at path and the exporter that newExporter makes
// to write it.
func (o *Outputs) Create(path string, newExporter func(io.Writer) (Exporter, error)) error {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return err
	}
	e, err := newExporter(f)
	if err != nil {
		f.Abort()
		return err
	}
	o.files = append(o.files, f)
	o.exps = append(o.exps, e)
	return nil
}

// Exporters are the outputs' exporters, in the order created, for
// Config.Exporters.
func (o *Outputs) Exporters() []Exporter { return o.exps }

// Close finishes each exporter and puts its file in place, in order. At
// the first error the files not yet in place are removed.
func (o *Outputs) Close() error {
	defer o.Abort()
	for i, e := range o.exps {
		err := e.Close()
		if err == nil {
			err = o.files[i].Commit()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Abort removes the files not yet in place.
func (o *Outputs) Abort() {
	for _, f := range o.files {
		f.Abort()
	}
}

// onCall is the latency analyzer's OnCall for exporters: nil without
// exporters (the analyzer then keeps no per-call state).
func onCall(exps []Exporter) func(latency.Call) {
	switch len(exps) {
	case 0:
		return nil
	case 1:
		return exps[0].Call
	}
	return func(c latency.Call) {
		for _, e := range exps {
			e.Call(c)
		}
	}
}
