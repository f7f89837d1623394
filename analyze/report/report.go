// Package report renders an analysis as aligned text with terminal
// histograms, or as JSON with a stable schema.
package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/analyze/trace"
)

// Report is everything one analysis found. The JSON keys are the schema
// scripts rely on (docs/analyze.md).
type Report struct {
	// File and Host name the recording in a report over several; a
	// total counts its Recordings.
	File       string `json:"file,omitempty"`
	Host       string `json:"host,omitempty"`
	Recordings int    `json:"recordings,omitempty"`
	Format     string `json:"format"`
	Events     int64  `json:"events"`
	// LostEvents is the best known count of events lost (Lost has the
	// parts); LostUncertain says it may be low.
	LostEvents     int64            `json:"lost_events"`
	LostUncertain  bool             `json:"lost_events_uncertain"`
	Lost           Loss             `json:"lost"`
	LostUnknown    int              `json:"lost_markers_without_count"`
	StatsLost      int64            `json:"kernel_stats_lost"`
	Truncated      bool             `json:"truncated"`
	TextTimestamps bool             `json:"text_timestamps"`
	Latency        []latency.Result `json:"latency"`
	Refcount       *refcount.Report `json:"refcount"`
	RefcountSpec   string           `json:"refcount_spec,omitempty"`
	// AllObjects asks the writers for every outstanding object (streamed
	// with refcount.Report.EachLeak), not only the listed ones.
	AllObjects bool `json:"-"`
}

// Loss is where the count of lost events comes from.
type Loss struct {
	// Markers: lost events the stream marks where they happened (page
	// headers of trace.dat, LOST lines and the entries-written header of
	// text); MarkersWithoutCount: marks whose count is unknown.
	Markers             int64 `json:"markers"`
	MarkersWithoutCount int   `json:"markers_without_count"`
	// BufferOverrun and BufferDropped: the kernel's per-CPU ring-buffer
	// stats (overwritten, refused), which say how many but not when.
	BufferOverrun int64 `json:"buffer_overrun"`
	BufferDropped int64 `json:"buffer_dropped"`
	// ProbeMissed: probe hits the kernel could not record (kprobe_profile).
	ProbeMissed int64 `json:"probe_missed"`
}

// Best is the best known number of lost events: the markers and the
// buffer's overrun count the same events (the larger is the better
// count), dropped events and probe misses come on top.
func (l Loss) Best() int64 { return max(l.Markers, l.BufferOverrun) + l.BufferDropped + l.ProbeMissed }

// AddInfo adds what a reader learned about a recording: its format (the
// first one's), event and loss counts and flags.
func (r *Report) AddInfo(i trace.Info) {
	if r.Format == "" {
		r.Format = i.Format
	}
	r.Events += i.Events
	l := Loss{Markers: i.Lost, MarkersWithoutCount: i.LostUnknown, BufferOverrun: i.StatsOverrun, BufferDropped: i.StatsDropped, ProbeMissed: i.ProbeMissed}
	r.LostEvents += l.Best()
	// The kernel's counters count every loss, those whose page lacked room
	// for a count too: markers without one make the count uncertain only
	// where there are no counters.
	r.LostUncertain = r.LostUncertain || i.Truncated || !i.LossCounted
	r.Lost.Markers += l.Markers
	r.Lost.MarkersWithoutCount += l.MarkersWithoutCount
	r.Lost.BufferOverrun += l.BufferOverrun
	r.Lost.BufferDropped += l.BufferDropped
	r.Lost.ProbeMissed += l.ProbeMissed
	r.LostUnknown += i.LostUnknown
	r.StatsLost += i.StatsLost
	r.Truncated = r.Truncated || i.Truncated
	r.TextTimestamps = r.TextTimestamps || i.TextTimestamps
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

// Text writes the human-readable report, in blocks rather than a write
// per table cell.
func Text(w io.Writer, r *Report, unit Unit, maxObjects int) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	text(bw, r, unit, maxObjects)
	return bw.Flush()
}

func text(w *bufio.Writer, r *Report, unit Unit, maxObjects int) {
	state := "complete"
	if r.Truncated {
		state = "TRUNCATED: read as far as the data is sound"
	}
	fmt.Fprintf(w, "%s: %d events, %d lost", r.Format, r.Events, r.LostEvents)
	if r.LostUnknown > 0 {
		fmt.Fprintf(w, " (+%d loss markers without a count)", r.LostUnknown)
	}
	fmt.Fprintf(w, ", %s\n", state)
	if l := r.Lost; r.LostEvents > 0 {
		fmt.Fprintf(w, "lost events: %d marked in the stream, %d overwritten and %d dropped by the ring buffer, %d probe misses\n",
			l.Markers, l.BufferOverrun, l.BufferDropped, l.ProbeMissed)
	}
	if r.LostUncertain {
		fmt.Fprintln(w, "note: the count of lost events may be low (loss marks without a count, a cut file, or no kernel loss counters in the recording)")
	}
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
		if n := rc.LeakSites - len(rc.Sites); n > 0 {
			fmt.Fprintf(w, "  ... %d more sites\n", n)
		}
		for _, s := range rc.Sites {
			if where := s.Where(); where != "" {
				fmt.Fprintf(w, "%d %s leaked, taken in %s\n", s.Objects, plural(s.Objects, "object", "objects"), where)
			}
		}
	}
	object := func(o refcount.Object) error {
		q := ""
		if o.Uncertain {
			q = " ?"
		}
		if o.File != "" {
			q += " file=" + o.File
		}
		_, err := fmt.Fprintf(w, "  %s count=%d first=%s last=%s site=%s%s\n", o.Key, o.Count, secs(o.FirstTS), secs(o.LastTS), o.Site, q)
		for _, s := range o.History {
			fmt.Fprintf(w, "      %s %-20s -> %d  %s-%d\n", secs(s.TS), s.Event, s.Count, s.Comm, s.PID)
		}
		return err
	}
	// total is how many objects the section has, of which l lists some.
	objs := func(title string, l []refcount.Object, total int, more string) {
		if total == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s (%d listed)\n", title, total)
		for i, o := range l {
			if i == maxObjects {
				break
			}
			object(o)
		}
		if n := total - min(len(l), maxObjects); n > 0 {
			fmt.Fprintf(w, "  ... %d more%s\n", n, more)
		}
	}
	if r.AllObjects && rc.Outstanding > 0 {
		fmt.Fprintf(w, "\nOUTSTANDING (%d listed)\n", rc.Outstanding)
		rc.EachLeak(object)
	} else {
		objs("OUTSTANDING", rc.Leaks, rc.Outstanding, " (--all-objects lists all)")
	}
	objs("UNDERFLOW", rc.UnderflowObjects, len(rc.UnderflowObjects), "")
	objs("USE AFTER PUT", rc.UseAfterPutObjects, len(rc.UseAfterPutObjects), "")
	objs("ADDRESS REUSE", rc.ReusedObjects, len(rc.ReusedObjects), "")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// secs renders a nanosecond timestamp as seconds, as ftrace prints them.
func secs(ns uint64) string { return fmt.Sprintf("%d.%09d", ns/1e9, ns%1e9) }
