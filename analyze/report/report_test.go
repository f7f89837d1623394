package report

import (
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/refcount"
)

// The header says when verdicts are uncertain or the file was cut.
func TestTextHeader(t *testing.T) {
	r := &Report{Format: "trace.dat v6 (none)", Events: 10, LostEvents: 3, LostUnknown: 1, Truncated: true, StatsLost: 4,
		Latency:  []latency.Result{{Function: "f", Count: 1, Uncertain: true, Histogram: []latency.Bucket{{LowNs: 1024, HighNs: 2048, Count: 1}}}},
		Refcount: &refcount.Report{Objects: 1, Outstanding: 1, Uncertain: 1, Leaks: []refcount.Object{{Key: "0x1", Count: 1, Site: "get", Uncertain: true}}, Sites: []refcount.Site{{Site: "get", Objects: 1}}}}
	var b strings.Builder
	if err := Text(&b, r, Unit{"us", 1000}, 5); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"trace.dat v6 (none): 10 events, 3 lost (+1 loss markers without a count), TRUNCATED",
		"UNCERTAIN: events were lost during the life of 1 reported objects",
		"UNCERTAIN: the kernel's buffer stats count 4 events",
		"f ?",
		"[1.024, 2.048) us",
		"0x1 count=1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if _, err := ParseUnit("s"); err == nil {
		t.Error("unit s accepted")
	}
}
