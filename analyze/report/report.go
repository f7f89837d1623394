// Package report renders an analysis as aligned text with terminal
// histograms, or as JSON with a stable schema.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/refcount"
)

// Report is everything one analysis found. The JSON keys are the schema
// scripts rely on.
type Report struct {
	Format         string           `json:"format"`
	Events         int64            `json:"events"`
	LostEvents     int64            `json:"lost_events"`
	LostUnknown    int              `json:"lost_markers_without_count"`
	StatsLost      int64            `json:"kernel_stats_lost"`
	Truncated      bool             `json:"truncated"`
	TextTimestamps bool             `json:"text_timestamps"`
	Latency        []latency.Result `json:"latency"`
	Refcount       *refcount.Report `json:"refcount"`
	RefcountSpec   string           `json:"refcount_spec,omitempty"`
}

// JSON writes r as indented JSON.
func JSON(w io.Writer, r *Report) error {
	if r.Latency == nil {
		r.Latency = []latency.Result{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Unit is a time unit for text output.
type Unit struct {
	Name string
	Ns   uint64
}

// ParseUnit accepts ns, us and ms.
func ParseUnit(s string) (Unit, error) {
	switch s {
	case "ns":
		return Unit{"ns", 1}, nil
	case "us", "":
		return Unit{"us", 1000}, nil
	case "ms":
		return Unit{"ms", 1000000}, nil
	}
	return Unit{}, fmt.Errorf("unknown unit %q (want ns, us or ms)", s)
}

func (u Unit) fmt(ns uint64) string {
	if u.Ns == 1 {
		return strconv.FormatUint(ns, 10)
	}
	s := strconv.FormatFloat(float64(ns)/float64(u.Ns), 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// Text writes the human-readable report.
func Text(w io.Writer, r *Report, unit Unit, maxObjects int) error {
	state := "complete"
	if r.Truncated {
		state = "TRUNCATED: read as far as the data is sound"
	}
	fmt.Fprintf(w, "%s: %d events, %d lost", r.Format, r.Events, r.LostEvents)
	if r.LostUnknown > 0 {
		fmt.Fprintf(w, " (+%d loss markers without a count)", r.LostUnknown)
	}
	fmt.Fprintf(w, ", %s\n", state)
	if r.Refcount != nil && r.Refcount.Uncertain > 0 {
		fmt.Fprintf(w, "UNCERTAIN: events were lost during the life of %d reported objects; their verdicts are marked ?\n", r.Refcount.Uncertain)
	}
	if r.StatsLost > 0 {
		fmt.Fprintf(w, "UNCERTAIN: the kernel's buffer stats count %d events overwritten or dropped, at unknown times\n", r.StatsLost)
	}
	if r.TextTimestamps {
		fmt.Fprintln(w, "note: text input has microsecond timestamps; durations are rounded to 1us")
	}
	fmt.Fprintln(w)
	if len(r.Latency) == 0 {
		fmt.Fprintln(w, "latency: no entry/return probe pairs found")
	} else {
		fmt.Fprintf(w, "LATENCY (%s)\n", unit.Name)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		grouped := false
		for _, l := range r.Latency {
			grouped = grouped || l.Group != ""
		}
		group := func(g string) string {
			if grouped {
				return g + "\t"
			}
			return ""
		}
		fmt.Fprintln(tw, "FUNCTION\t"+group("GROUP")+"COUNT\tNO-RETURN\tNO-ENTRY\tMIN\tMEAN\tP50\tP90\tP99\tP99.9\tMAX\t")
		for _, l := range r.Latency {
			if l.Uncertain {
				l.Function += " ?"
			}
			fmt.Fprintf(tw, "%s\t%s%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", l.Function, group(l.Group), l.Count,
				l.UnmatchedEntries, l.UnmatchedReturns, unit.fmt(l.MinNs), unit.fmt(l.MeanNs), unit.fmt(l.P50Ns),
				unit.fmt(l.P90Ns), unit.fmt(l.P99Ns), unit.fmt(l.P999Ns), unit.fmt(l.MaxNs))
		}
		tw.Flush()
		for _, l := range r.Latency {
			if l.Uncertain {
				fmt.Fprintf(w, "? %s: events were lost while calls were open; a return may be missing or mispaired\n", l.Function)
			}
		}
		for _, l := range r.Latency {
			if len(l.Histogram) == 0 {
				continue
			}
			g := ""
			if l.Group != "" {
				g = " [" + l.Group + "]"
			}
			fmt.Fprintf(w, "\n%s%s  (%s -> %s)\n", l.Function, g, l.EntryEvent, l.ReturnEvent)
			histogram(w, l.Histogram, unit)
		}
	}
	if r.Refcount != nil {
		refText(w, r, maxObjects)
	}
	return nil
}

func histogram(w io.Writer, hs []latency.Bucket, unit Unit) {
	var max uint64
	for _, b := range hs {
		if b.Count > max {
			max = b.Count
		}
	}
	labels := make([]string, len(hs))
	width := 0
	for i, b := range hs {
		labels[i] = fmt.Sprintf("[%s, %s) %s", unit.fmt(b.LowNs), unit.fmt(b.HighNs), unit.Name)
		width = maxInt(width, len(labels[i]))
	}
	const bar = 40
	for i, b := range hs {
		n := 0
		if max > 0 {
			n = int((b.Count*bar + max - 1) / max)
		}
		fmt.Fprintf(w, "  %*s %10d |%-*s|\n", width, labels[i], b.Count, bar, strings.Repeat("@", n))
	}
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func refText(w io.Writer, r *Report, maxObjects int) {
	rc := r.Refcount
	fmt.Fprintf(w, "\nREFCOUNT (%s)\n", r.RefcountSpec)
	fmt.Fprintf(w, "objects %d, outstanding %d, underflows %d, use after put %d, address reuse %d, puts without get %d\n",
		rc.Objects, rc.Outstanding, rc.Underflows, rc.UseAfterPut, rc.Reused, rc.UnmatchedPuts)
	if rc.Uncertain > 0 {
		fmt.Fprintf(w, "UNCERTAIN: %d verdicts cover a window where events were lost (marked ?)\n", rc.Uncertain)
	}
	if rc.UnmatchedPuts > 0 {
		fmt.Fprintln(w, "note: puts without get usually mean the recording started while those objects were held")
	}
	if len(rc.Sites) > 0 {
		fmt.Fprintln(w, "\nLEAKS BY SITE")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "OBJECTS\tSITE")
		for _, s := range rc.Sites {
			fmt.Fprintf(tw, "%7d\t%s\n", s.Objects, s.Site)
		}
		tw.Flush()
	}
	objs := func(title string, l []refcount.Object) {
		if len(l) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s (%d listed)\n", title, len(l))
		for i, o := range l {
			if i == maxObjects {
				fmt.Fprintf(w, "  ... %d more (--json lists all)\n", len(l)-i)
				break
			}
			q := ""
			if o.Uncertain {
				q = " ?"
			}
			fmt.Fprintf(w, "  %s count=%d first=%s last=%s site=%s%s\n", o.Key, o.Count, secs(o.FirstTS), secs(o.LastTS), o.Site, q)
			for _, s := range o.History {
				fmt.Fprintf(w, "      %s %-20s -> %d  %s-%d\n", secs(s.TS), s.Event, s.Count, s.Comm, s.PID)
			}
		}
	}
	objs("OUTSTANDING", rc.Leaks)
	objs("UNDERFLOW", rc.UnderflowObjects)
	objs("USE AFTER PUT", rc.UseAfterPutObjects)
	objs("ADDRESS REUSE", rc.ReusedObjects)
}

// secs renders a nanosecond timestamp as seconds, as ftrace prints them.
func secs(ns uint64) string { return fmt.Sprintf("%d.%09d", ns/1e9, ns%1e9) }
