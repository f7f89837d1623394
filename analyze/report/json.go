package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/refcount"
)

// JSON writes r as indented JSON. With AllObjects the refcount leaks list
// every outstanding object, streamed, not only the listed ones.
func JSON(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	if err := writeJSON(bw, r, ""); err != nil {
		return err
	}
	bw.WriteString("\n")
	return bw.Flush()
}

// leaksPlaceholder is where writeJSON splices the streamed leaks: a key
// and value no string in the document can hold (quotes inside strings
// are escaped).
var leaksPlaceholder = []byte(`"leaks": null`)

// writeJSON writes r indented, every line after the first starting with
// prefix, without a final newline.
func writeJSON(w *bufio.Writer, r *Report, prefix string) error {
	doc := *r
	if doc.Latency == nil {
		doc.Latency = []latency.Result{}
	}
	stream := r.AllObjects && r.Refcount != nil
	if stream {
		rc := *r.Refcount
		rc.Leaks = nil
		doc.Refcount = &rc
	}
	b, err := json.MarshalIndent(&doc, prefix, "  ")
	if err != nil {
		return err
	}
	i := bytes.Index(b, leaksPlaceholder)
	if !stream || i < 0 {
		_, err = w.Write(b)
		return err
	}
	indent := string(b[bytes.LastIndexByte(b[:i], '\n')+1 : i])
	w.Write(b[:i])
	w.WriteString(`"leaks": [`)
	n := 0
	err = r.Refcount.EachLeak(func(o refcount.Object) error {
		ob, err := json.MarshalIndent(o, indent+"  ", "  ")
		if err != nil {
			return err
		}
		if n > 0 {
			w.WriteByte(',')
		}
		n++
		w.WriteString("\n" + indent + "  ")
		_, err = w.Write(ob)
		return err
	})
	if err != nil {
		return err
	}
	if n > 0 {
		w.WriteString("\n" + indent)
	}
	w.WriteString("]")
	_, err = w.Write(b[i+len(leaksPlaceholder):])
	return err
}

// JSONLines writes r as JSON lines: for one recording's report, one
// {"type":"leak", ...} line per outstanding object (every one, streamed)
// and one per listed problem object ("underflow", "use_after_put",
// "reused"), carrying the report's file and host; then the report itself
// ({"type": typ, ...} with the lists of JSON). A total over recordings
// writes only its line: its lists hold the objects it kept.
func JSONLines(w io.Writer, r *Report, typ string) error {
	bw := bufio.NewWriter(w)
	line := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		bw.Write(b)
		return bw.WriteByte('\n')
	}
	object := func(kind string) func(refcount.Object) error {
		return func(o refcount.Object) error {
			if o.File == "" {
				o.File = r.File
			}
			return line(struct {
				Type string `json:"type"`
				Host string `json:"host,omitempty"`
				refcount.Object
			}{kind, r.Host, o})
		}
	}
	if rc := r.Refcount; rc != nil && r.Recordings == 0 {
		if err := rc.EachLeak(object("leak")); err != nil {
			return err
		}
		for _, l := range []struct {
			kind string
			objs []refcount.Object
		}{{"underflow", rc.UnderflowObjects}, {"use_after_put", rc.UseAfterPutObjects}, {"reused", rc.ReusedObjects}} {
			for _, o := range l.objs {
				if err := object(l.kind)(o); err != nil {
					return err
				}
			}
		}
	}
	doc := *r
	if doc.Latency == nil {
		doc.Latency = []latency.Result{}
	}
	if err := line(struct {
		Type string `json:"type"`
		*Report
	}{typ, &doc}); err != nil {
		return err
	}
	return bw.Flush()
}
