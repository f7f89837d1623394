package report

import (
	"bufio"
	"fmt"
	"io"
)

// Output is a report format.
type Output int

const (
	OutputText Output = iota
	OutputJSON
	OutputJSONLines
)

// Write writes the report of one recording in out's format: Text, JSON,
// or JSONLines (the objects, then a "report" line).
func Write(w io.Writer, r *Report, out Output, unit Unit, maxObjects int) error {
	switch out {
	case OutputJSON:
		return JSON(w, r)
	case OutputJSONLines:
		return JSONLines(w, r, "report")
	}
	return Text(w, r, unit, maxObjects)
}

// Many writes the reports of several recordings, or of the hosts that
// made them, then their total: text sections; one JSON document
// {"files" (or "hosts"): [...], "total": {...}}; or JSON lines, where
// every recording's objects and "report" line are written as soon as it
// is done, then one "host" line per host, then a "total" line. Nothing
// of a part is kept once written.
type Many struct {
	w          io.Writer
	out        Output
	list       string // "files" or "hosts"
	unit       Unit
	maxObjects int
	n          int
}

// NewMany starts the output; list names the parts ("files" or "hosts").
func NewMany(w io.Writer, out Output, list string, unit Unit, maxObjects int) *Many {
	return &Many{w: w, out: out, list: list, unit: unit, maxObjects: maxObjects}
}

// Recording is called with each recording's report as soon as it is
// done: it writes it when the parts are files, or the output is JSON
// lines.
func (m *Many) Recording(r *Report) error {
	switch {
	case m.out == OutputJSONLines:
		return JSONLines(m.w, r, "report")
	case m.list == "files":
		return m.part(r)
	}
	return nil
}

// Host writes the report of one host (a total over its recordings).
func (m *Many) Host(r *Report) error {
	if m.out == OutputJSONLines {
		return JSONLines(m.w, r, "host")
	}
	return m.part(r)
}

func (m *Many) part(r *Report) error {
	defer func() { m.n++ }()
	switch m.out {
	case OutputJSON:
		bw := bufio.NewWriter(m.w)
		if m.n == 0 {
			fmt.Fprintf(bw, "{\n  %q: [\n    ", m.list)
		} else {
			bw.WriteString(",\n    ")
		}
		if err := writeJSON(bw, r, "    "); err != nil {
			return err
		}
		return bw.Flush()
	}
	if m.n > 0 {
		fmt.Fprintln(m.w)
	}
	fmt.Fprintf(m.w, "=== %s ===\n", partTitle(r))
	return Text(m.w, r, m.unit, m.maxObjects)
}

func partTitle(r *Report) string {
	switch {
	case r.File != "" && r.Host != "":
		return fmt.Sprintf("%s (host %s)", r.File, r.Host)
	case r.File != "":
		return r.File
	case r.Host != "":
		return fmt.Sprintf("host %s (%s)", r.Host, r.Format)
	}
	return fmt.Sprintf("unnamed host (%s)", r.Format)
}

// Total writes the total and ends the output.
func (m *Many) Total(r *Report) error {
	switch m.out {
	case OutputJSONLines:
		return JSONLines(m.w, r, "total")
	case OutputJSON:
		bw := bufio.NewWriter(m.w)
		if m.n == 0 {
			fmt.Fprintf(bw, "{\n  %q: [],\n  \"total\": ", m.list)
		} else {
			bw.WriteString("\n  ],\n  \"total\": ")
		}
		if err := writeJSON(bw, r, "  "); err != nil {
			return err
		}
		bw.WriteString("\n}\n")
		return bw.Flush()
	}
	fmt.Fprintf(m.w, "\n=== TOTAL (%s) ===\n", r.Format)
	return Text(m.w, r, m.unit, m.maxObjects)
}
