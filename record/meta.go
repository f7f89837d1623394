package record

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Metadata is gprobe's own part of a trace.dat file, stored as JSON in
// the option tracedat.OptionGprobe. It keeps what trace-cmd's v6 format
// has no place for: the probe definitions used and every loss counter.
type Metadata struct {
	Tool    string   `json:"tool"`              // "gprobe record"
	Command []string `json:"command,omitempty"` // the traced command
	PID     int      `json:"pid,omitempty"`     // followed process (the command's or -p)
	All     bool     `json:"all,omitempty"`     // -a: no process filter
	Clock   string   `json:"clock"`
	// Events are the recorded events, "system:event".
	Events []string `json:"events"`
	// Probes are the definitions of the recorded probe events, as
	// dynamic_events lists them.
	Probes       []string `json:"probes,omitempty"`
	BufferSizeKB int      `json:"buffer_size_kb"`
	SubbufSize   int      `json:"subbuf_size"`
	// SavedTgids is the kernel's saved_tgids text ("pid tgid" lines).
	SavedTgids string `json:"saved_tgids,omitempty"`
	// CPUStatsBefore/After are per_cpu/cpuN/stats at start and end.
	CPUStatsBefore []string `json:"cpu_stats_before"`
	CPUStatsAfter  []string `json:"cpu_stats_after"`
	// Profiles hold uprobe_profile and kprobe_profile before and after,
	// keyed by file name.
	ProfileBefore map[string]string `json:"profile_before,omitempty"`
	ProfileAfter  map[string]string `json:"profile_after,omitempty"`
	Lost          Lost              `json:"lost"`
	ExitCode      int               `json:"exit_code"`
	Interrupted   string            `json:"interrupted,omitempty"` // signal that stopped the recording
}

// Lost counts the events that are not in the file, by cause.
type Lost struct {
	// Overrun: events overwritten in the ring buffer (stats "overrun").
	Overrun uint64 `json:"overrun"`
	// Dropped: events refused by a full buffer (stats "dropped events",
	// only when options/overwrite is 0).
	Dropped uint64 `json:"dropped"`
	// PageMissed: the lost-event counts the kernel stored in the pages
	// (in-band markers; should equal Overrun).
	PageMissed uint64 `json:"page_missed"`
	// PagesMissedUnknown: pages flagged as following lost events whose
	// count the kernel could not store.
	PagesMissedUnknown uint64 `json:"pages_missed_unknown"`
	// ProbeMissed: kprobe/kretprobe misses of the recorded events
	// (kprobe_profile, e.g. maxactive exhausted); uprobes have no miss count.
	ProbeMissed uint64 `json:"probe_missed"`
	// PerCPU has the ring-buffer counts per CPU.
	PerCPU []CPULost `json:"per_cpu"`
}

// CPULost is one CPU's share of the ring-buffer losses.
type CPULost struct {
	CPU        int    `json:"cpu"`
	Overrun    uint64 `json:"overrun"`
	Dropped    uint64 `json:"dropped"`
	PageMissed uint64 `json:"page_missed"`
}

// Total is the number of events known to be lost: ring-buffer losses
// (the larger of the stats and the page markers, which count the same
// events) and probe misses.
func (l Lost) Total() uint64 {
	rb := l.Overrun
	if l.PageMissed > rb {
		rb = l.PageMissed
	}
	return rb + l.Dropped + l.ProbeMissed
}

// statValue reads one "name: value" line of a per_cpu stats file.
func statValue(stats, name string) uint64 {
	sc := bufio.NewScanner(strings.NewReader(stats))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// profileMisses sums the miss column of kprobe_profile lines
// ("  EVENT  HITS  MISSES") for the given event names.
func profileMisses(text string, events map[string]bool) uint64 {
	var sum uint64
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || !events[f[0]] {
			continue
		}
		n, _ := strconv.ParseUint(f[len(f)-1], 10, 64)
		sum += n
	}
	return sum
}

// Summary is the one line printed when recording ends.
func (r *Result) Summary() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "gprobe record: %d events, %s written to %s", r.Events, humanBytes(r.Bytes), r.Output)
	l := r.Meta.Lost
	if l.Total() == 0 && l.PagesMissedUnknown == 0 {
		b.WriteString(", no events lost")
	} else {
		fmt.Fprintf(&b, ", LOST %d events (ring buffer overrun %d, dropped %d, probe misses %d", l.Total(), max(l.Overrun, l.PageMissed), l.Dropped, l.ProbeMissed)
		if l.PagesMissedUnknown > 0 {
			fmt.Fprintf(&b, ", plus %d gaps of unknown size", l.PagesMissedUnknown)
		}
		b.WriteString(")")
	}
	if r.Meta.Interrupted != "" {
		fmt.Fprintf(&b, "; interrupted by %s", r.Meta.Interrupted)
	}
	return b.String()
}

func humanBytes(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 10<<10:
		return fmt.Sprintf("%d kB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
