package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gprobe/gprobe/analyze/objtrace"
)

// ObjectTrace writes one object's events as they are found, then its
// summary: text lines, or one JSON document {"object", "events": [...],
// "summary"} whose events are streamed.
type ObjectTrace struct {
	w      *bufio.Writer
	json   bool
	unit   Unit
	object string
	n      int
}

// NewObjectTrace starts the output for the object.
func NewObjectTrace(w io.Writer, object objtrace.Addr, asJSON bool, unit Unit) *ObjectTrace {
	t := &ObjectTrace{w: bufio.NewWriter(w), json: asJSON, unit: unit, object: object.String()}
	if asJSON {
		fmt.Fprintf(t.w, "{\n  \"object\": %q,\n  \"events\": [", t.object)
	} else {
		fmt.Fprintf(t.w, "OBJECT %s\n", t.object)
	}
	return t
}

// Hit writes one event of the object.
func (t *ObjectTrace) Hit(h objtrace.Hit) error {
	defer func() { t.n++ }()
	if t.json {
		b, err := json.Marshal(h)
		if err != nil {
			return err
		}
		if t.n > 0 {
			t.w.WriteByte(',')
		}
		t.w.WriteString("\n    ")
		_, err = t.w.Write(b)
		return err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "  %s [%03d] %s-%d %s matched=%s", secs(h.TS), h.CPU, h.Comm, h.PID, h.Event, strings.Join(h.Matched, ","))
	for _, f := range h.Fields {
		if contains(h.Matched, f.Name) {
			continue
		}
		fmt.Fprintf(&sb, " %s=%s", f.Name, f.Value)
		if f.Caller != "" {
			fmt.Fprintf(&sb, " <%s>", f.Caller)
		}
	}
	if h.File != "" {
		sb.WriteString(" file=" + h.File)
	}
	sb.WriteByte('\n')
	_, err := t.w.WriteString(sb.String())
	return err
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Close writes the summary and flushes.
func (t *ObjectTrace) Close(s objtrace.Summary) error {
	if t.json {
		if t.n > 0 {
			t.w.WriteString("\n  ")
		}
		b, err := json.MarshalIndent(s, "  ", "  ")
		if err != nil {
			return err
		}
		t.w.WriteString("],\n  \"summary\": ")
		t.w.Write(b)
		t.w.WriteString("\n}\n")
		return t.w.Flush()
	}
	if s.Events == 0 {
		fmt.Fprintf(t.w, "%s: no event carries this address\n", s.Object)
	} else {
		fmt.Fprintf(t.w, "%s: %d %s, first %s %s, last %s %s, lifetime %s %s\n", s.Object, s.Events, pluralEvents(s.Events),
			secs(s.FirstTS), s.FirstEvent, secs(s.LastTS), s.LastEvent, t.unit.fmt(s.LifetimeNs), t.unit.Name)
	}
	if len(s.Elsewhere) > 0 {
		pids := make([]string, len(s.Elsewhere))
		for i, p := range s.Elsewhere {
			pids[i] = fmt.Sprint(p)
		}
		fmt.Fprintf(t.w, "note: user-space events of process %s carry the same number: name one as PID:ADDR (user-space addresses are per process)\n", strings.Join(pids, ", "))
	}
	return t.w.Flush()
}

func pluralEvents(n int) string { return plural(n, "event", "events") }

// Ranking writes the ranked objects as text or JSON, in blocks.
func Ranking(w io.Writer, r objtrace.Ranking, asJSON bool, unit Unit) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := ranking(bw, r, asJSON, unit); err != nil {
		return err
	}
	return bw.Flush()
}

func ranking(w io.Writer, r objtrace.Ranking, asJSON bool, unit Unit) error {
	if asJSON {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	fmt.Fprintf(w, "OBJECTS BY %s (top %d of %d objects; %d address values in %d fields)\n",
		strings.ToUpper(r.By), len(r.Top), r.Objects, r.Values, len(r.Fields))
	if len(r.Fields) > 0 {
		fmt.Fprintf(w, "fields: %s\n", strings.Join(r.Fields, ", "))
	}
	if len(r.Top) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "RANK\tOBJECT\tEVENTS\tFIRST\tLAST\tLIFETIME(%s)\tFIRST EVENT\tLAST EVENT\n", unit.Name)
	for i, o := range r.Top {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", i+1, o.Object, o.Events, secs(o.FirstTS), secs(o.LastTS), unit.fmt(o.LifetimeNs), o.FirstEvent, o.LastEvent)
	}
	return tw.Flush()
}
