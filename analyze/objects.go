package analyze

import (
	"fmt"

	"github.com/gprobe/gprobe/analyze/objtrace"
	"github.com/gprobe/gprobe/analyze/trace"
)

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
