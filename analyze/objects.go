package analyze

import (
	"fmt"
	"io"

	"github.com/gprobe/gprobe/analyze/objtrace"
	"github.com/gprobe/gprobe/analyze/report"
	"github.com/gprobe/gprobe/analyze/trace"
)

// ReportObject writes to w every event of the recordings whose arguments
// carry addr, then the object's life (gprobe analyze --object), as text
// or with asJSON as JSON.
func ReportObject(w io.Writer, paths []string, addr objtrace.Addr, asJSON bool, unit report.Unit) error {
	t := objtrace.NewTracer(addr)
	ot := report.NewObjectTrace(w, addr, asJSON, unit)
	if err := TraceObject(paths, t, ot.Hit); err != nil {
		return err
	}
	return ot.Close(t.Summary())
}

// ReportRanking feeds the recordings to r and writes its ranking to w
// (gprobe analyze --objects), as text or with asJSON as JSON.
func ReportRanking(w io.Writer, paths []string, r *objtrace.Ranker, asJSON bool, unit report.Unit) error {
	if err := RankObjects(paths, r); err != nil {
		return err
	}
	return report.Ranking(w, r.Ranking(), asJSON, unit)
}

// TraceObject reads the recordings one after the other and calls each
// with every event of t's object, in time order within each recording;
// hits name their file when there are several.
func TraceObject(paths []string, t *objtrace.Tracer, each func(objtrace.Hit) error) error {
	return eachRecording(paths, func(p string, src trace.Source) error {
		name := ""
		if len(paths) > 1 {
			name = p
		}
		t.Recording(name, src.Info())
		return src.Run(func(e *trace.Event) error {
			if h, ok := t.Event(e); ok {
				return each(h)
			}
			return nil
		})
	})
}

// RankObjects feeds every event of the recordings to r.
func RankObjects(paths []string, r *objtrace.Ranker) error {
	return eachRecording(paths, func(_ string, src trace.Source) error {
		r.Recording(src.Info())
		return src.Run(func(e *trace.Event) error {
			r.Event(e)
			return nil
		})
	})
}

// Scan calls fn for every event (data and loss markers) of the recording
// at path, in order, and closes it; fn must not keep an event past its
// call.
func Scan(path string, fn func(*trace.Event) error) error {
	return eachRecording([]string{path}, func(_ string, src trace.Source) error { return src.Run(fn) })
}

// eachRecording opens each recording in turn and hands it to fn.
func eachRecording(paths []string, fn func(path string, src trace.Source) error) error {
	for _, p := range paths {
		rec, err := Open(p)
		if err != nil {
			return err
		}
		err = fn(p, rec)
		rec.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}
