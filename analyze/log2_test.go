package analyze_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/report"
)

// TestLog2Report: latencies aggregated in log2 buckets print with the
// columns, buckets and JSON schema of a recording's report, rows sorted as
// Run sorts them.
func TestLog2Report(t *testing.T) {
	one := func(group string, ns uint64, n uint64) latency.Log2 {
		l := latency.Log2{Function: "work", Group: group, EntryEvent: "gprobe_lat:work", ReturnEvent: "gprobe_lat:work__return", Entries: n, Returns: n}
		l.Buckets[11] = latency.Log2Bucket{Count: n, SumNs: n * ns, MinNs: ns, MaxNs: ns}
		return l
	}
	rep := analyze.Log2Report("kernel histogram", 8, 0, []latency.Log2{one("sleeper", 1500, 3), one("dd", 1200, 1)})
	var text bytes.Buffer
	if err := report.Text(&text, rep, report.Unit{Name: "us", Ns: 1000}, 20); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"kernel histogram: 8 events, 0 lost, complete\n",
		"  FUNCTION    GROUP  COUNT  NO-RETURN  NO-ENTRY  MIN  MEAN  P50  P90  P99  P99.9  MAX\n",
		"      work  sleeper      3          0         0  1.5   1.5  1.5  1.5  1.5    1.5  1.5\n",
		"\nwork [dd]  (gprobe_lat:work -> gprobe_lat:work__return)\n  [1.024, 2.048) us          1 |",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Index(text.String(), "[dd]") > strings.Index(text.String(), "[sleeper]") {
		t.Errorf("rows not sorted by group:\n%s", text.String())
	}
	var js bytes.Buffer
	if err := report.JSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Format  string           `json:"format"`
		Latency []latency.Result `json:"latency"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Format != "kernel histogram" || len(back.Latency) != 2 ||
		back.Latency[1].Count != 3 || back.Latency[1].P50Ns != 1500 || back.Latency[1].Histogram[0].LowNs != 1024 {
		t.Errorf("JSON %s: %+v, %v", js.String(), back, err)
	}
}

// TestWriteLog2: the text and the JSON of Log2Report's report, as
// report.Write writes them.
func TestWriteLog2(t *testing.T) {
	var l latency.Log2
	l.Function, l.Entries, l.Returns = "work", 1, 1
	l.Buckets[11] = latency.Log2Bucket{Count: 1, SumNs: 1500, MinNs: 1500, MaxNs: 1500}
	unit := report.Unit{Name: "us", Ns: 1000}
	for _, js := range []bool{false, true} {
		var got, want bytes.Buffer
		out := report.OutputText
		if js {
			out = report.OutputJSON
		}
		if err := report.Write(&want, analyze.Log2Report("h", 2, 1, []latency.Log2{l}), out, unit, 0); err != nil {
			t.Fatal(err)
		}
		if err := analyze.WriteLog2(&got, "h", 2, 1, []latency.Log2{l}, js, unit); err != nil || got.String() != want.String() || got.Len() == 0 {
			t.Errorf("json %v: %v\n%s\nwant\n%s", js, err, got.String(), want.String())
		}
	}
}
