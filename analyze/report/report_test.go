package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/analyze/trace"
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

// leakyReport is a report over n leaked objects, listing max of them.
func leakyReport(n, max int) *Report {
	spec, _ := refcount.ParseSpec("get=get,put=put")
	a := refcount.New(spec, refcount.Options{MaxListed: max})
	for i := 0; i < n; i++ {
		a.Event(&trace.Event{Name: "get", TS: uint64(i + 1), PID: 7, Comm: "c", Fields: []trace.KV{{Key: "__probe_ip", Val: "func+0x0/0x10"}, {Key: "obj", Val: fmt.Sprintf("%#x", 0x1000+16*i)}}})
	}
	rc := a.Report()
	return &Report{Format: "test", Events: int64(n), Refcount: &rc, Lost: Loss{Markers: 2, BufferOverrun: 5}, LostEvents: 5}
}

// TestJSONAllObjects: the document lists the first objects by default and
// every one with AllObjects (streamed into the same schema); JSON lines
// give one line per object, then the report.
func TestJSONAllObjects(t *testing.T) {
	r := leakyReport(50, 3)
	for _, all := range []bool{false, true} {
		r.AllObjects = all
		var b bytes.Buffer
		if err := JSON(&b, r); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Refcount struct {
				Outstanding int
				Leaks       []refcount.Object
			}
		}
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatalf("all=%v: %v\n%s", all, err, b.String())
		}
		want := 3
		if all {
			want = 50
		}
		if doc.Refcount.Outstanding != 50 || len(doc.Refcount.Leaks) != want || doc.Refcount.Leaks[want-1].FirstTS != uint64(want) {
			t.Errorf("all=%v: outstanding %d, %d leaks listed, want %d oldest first", all, doc.Refcount.Outstanding, len(doc.Refcount.Leaks), want)
		}
	}
	r.AllObjects = false
	var b bytes.Buffer
	if err := JSONLines(&b, r, "report"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 51 {
		t.Fatalf("%d lines, want 50 objects and the report", len(lines))
	}
	for i, l := range lines {
		var rec struct {
			Type, Key string
			Events    int
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if (i < 50) != (rec.Type == "leak") || i == 50 && (rec.Type != "report" || rec.Events != 50) {
			t.Errorf("line %d: %s", i, l)
		}
	}
}

// TestManyJSON: the parts and the total make one JSON document.
func TestManyJSON(t *testing.T) {
	var b bytes.Buffer
	m := NewMany(&b, OutputJSON, "files", Unit{"us", 1000}, 3)
	for _, f := range []string{"a.dat", "b.dat"} {
		r := leakyReport(4, 3)
		r.File = f
		if err := m.Recording(r); err != nil {
			t.Fatal(err)
		}
	}
	total := leakyReport(8, 3)
	total.Recordings = 2
	if err := m.Total(total); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Files []struct{ File string }
		Total struct{ Recordings, Events int }
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(doc.Files) != 2 || doc.Files[1].File != "b.dat" || doc.Total.Recordings != 2 || doc.Total.Events != 8 {
		t.Errorf("%+v", doc)
	}
}

// TestLossLine: the text report gives the parts of a loss count.
func TestLossLine(t *testing.T) {
	r := leakyReport(1, 1)
	r.LostUncertain = true
	var b strings.Builder
	Text(&b, r, Unit{"us", 1000}, 5)
	for _, want := range []string{"1 events, 5 lost", "lost events: 2 marked in the stream, 5 overwritten and 0 dropped", "may be low"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	if (Loss{Markers: 2, BufferOverrun: 5, BufferDropped: 1, ProbeMissed: 3}).Best() != 9 {
		t.Error("Best: want max(markers, overrun) + dropped + misses")
	}
}
