package analyze

import (
	"io"
	"sort"

	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/report"
)

// Log2Report is the report of latencies aggregated in log2 buckets without
// a recording (gprobe latency: by the kernel's hist triggers), for
// report.Text and report.JSON to print as they print Run's: format names
// the source, events counts the probe hits, lost the hits the kernel did
// not count. Rows are sorted by function, then group, as Run sorts them.
func Log2Report(format string, events, lost int64, ls []latency.Log2) *report.Report {
	rep := &report.Report{Format: format, Events: events, LostEvents: lost, Latency: []latency.Result{}}
	for i := range ls {
		rep.Latency = append(rep.Latency, latency.Log2Result(&ls[i]))
	}
	sort.Slice(rep.Latency, func(i, j int) bool {
		a, b := rep.Latency[i], rep.Latency[j]
		if a.Function != b.Function {
			return a.Function < b.Function
		}
		return a.Group < b.Group
	})
	return rep
}

// WriteLog2 writes Log2Report's report to w as gprobe analyze writes a
// recording's: text with durations in unit, or JSON.
func WriteLog2(w io.Writer, format string, events, lost int64, ls []latency.Log2, json bool, unit report.Unit) error {
	out := report.OutputText
	if json {
		out = report.OutputJSON
	}
	return report.Write(w, Log2Report(format, events, lost, ls), out, unit, 0)
}
