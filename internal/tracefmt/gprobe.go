package tracefmt

import (
	"encoding/json"
)

// Metadata is gprobe record's own part of a trace.dat file, stored as JSON
// in option OptionGprobe. It keeps what trace-cmd's format has no place
// for: the probe definitions used and every loss counter.
type Metadata struct {
	Tool    string   `json:"tool"`              // "gprobe record"
	Command []string `json:"command,omitempty"` // the traced command
	PID     int      `json:"pid,omitempty"`     // followed process (the command's or -p)
	All     bool     `json:"all,omitempty"`     // -a: no process filter
	Clock   string   `json:"clock"`
	// Events are the recorded events, "system:event".
	Events []string `json:"events"`
	// Probes are the definitions of the recorded probe events, as
	// kprobe_events or uprobe_events lists them.
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

// Option encodes m as the OptionGprobe option.
func (m *Metadata) Option() (Option, error) {
	b, err := json.Marshal(m)
	return Option{ID: OptionGprobe, Data: b}, err
}

// decodeMetadata reads an OptionGprobe option; nil when it is damaged,
// as the option is optional.
func decodeMetadata(data []byte) *Metadata {
	var m Metadata
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	return &m
}

// TGIDs maps thread to process from SavedTgids (Int gives 0 for a
// thread it does not know).
func (m *Metadata) TGIDs() *PIDTable { return NewPIDTable(m.SavedTgids) }
