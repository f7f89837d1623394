package record

import (
	"testing"

	"github.com/gprobe/gprobe/internal/tracefmt"
)

func TestStatValue(t *testing.T) {
	const stats = "entries: 12\noverrun: 345\ncommit overrun: 0\nbytes: 1024\noldest event ts:  9533.238850\nnow ts:  9533.238850\ndropped events: 7\nread events: 99\n"
	for name, want := range map[string]uint64{"entries": 12, "overrun": 345, "dropped events": 7, "read events": 99, "commit overrun": 0, "missing": 0} {
		if got := statValue(stats, name); got != want {
			t.Errorf("%s: %d, want %d", name, got, want)
		}
	}
}

func TestProfileMisses(t *testing.T) {
	// kprobe_profile lines: event, hits, misses.
	const before = "  vfs_read                                              100               1\n  vfs_read_ret                                          100               2\n  other                                                   5               9\n"
	const after = "  vfs_read                                              900               1\n  vfs_read_ret                                          900               7\n  other                                                  50              90\n"
	names := map[string]bool{"vfs_read": true, "vfs_read_ret": true}
	if got := profileMisses(after, names) - profileMisses(before, names); got != 5 {
		t.Errorf("misses %d, want 5", got)
	}
}

func TestSummary(t *testing.T) {
	r := &Result{Output: "trace.out", Events: 1234, Bytes: 5 << 20}
	if got, want := r.Summary(), "gprobe record: 1234 events, 5120 kB written to trace.out, no events lost"; got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
	r.Meta.Lost = tracefmt.Lost{Overrun: 10, PageMissed: 8, Dropped: 2, ProbeMissed: 3, PagesMissedUnknown: 1}
	r.Meta.Interrupted = "interrupt"
	want := "gprobe record: 1234 events, 5120 kB written to trace.out, LOST 15 events (ring buffer overrun 10, dropped 2, probe misses 3, plus 1 gaps of unknown size); interrupted by interrupt"
	if got := r.Summary(); got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
}
