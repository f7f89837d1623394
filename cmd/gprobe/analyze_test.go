package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

const goldenDir = "../../analyze/testdata/golden"

// TestAnalyzeText compares the text report on the golden recording with
// the committed one.
func TestAnalyzeText(t *testing.T) {
	for name, args := range map[string][]string{
		"refcount.txt": {"analyze", "--refcount", "get=obj_get,put=obj_put", "--max-objects", "2", goldenDir + "/trace.txt"},
		"by-comm.txt":  {"analyze", "--by", "comm", "--unit", "ns", goldenDir + "/trace-tgid.txt"},
	} {
		r := runGprobe(args...)
		if r.Code != 0 {
			t.Fatalf("%s: %s", name, r)
		}
		path := filepath.Join("testdata", "analyze", name)
		if *testenv.Update {
			os.WriteFile(path, []byte(r.Stdout), 0o644)
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if r.Stdout != string(want) {
			t.Errorf("%s differs (-update rewrites it):\n%s", name, r.Stdout)
		}
	}
}

func TestAnalyzeJSONAndTimeline(t *testing.T) {
	tl := filepath.Join(t.TempDir(), "tl.json")
	fl := filepath.Join(t.TempDir(), "folded.txt")
	r := runGprobe("analyze", "--json", "--export-timeline", tl, "--folded", fl, "--refcount", "get=obj_get,put=obj_put", goldenDir+"/v7-zstd.dat")
	if r.Code != 0 {
		t.Fatal(r)
	}
	var rep struct {
		Events   int
		Latency  []struct{ Count int }
		Refcount struct{ Outstanding int }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || rep.Events != 155 || rep.Latency[0].Count != 60 || rep.Refcount.Outstanding != 3 {
		t.Errorf("%v %+v", err, rep)
	}
	b, err := os.ReadFile(tl)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Name, Ph string
			Ts, Dur  float64
			Pid, Tid int
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	slices := 0
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" {
			slices++
			if e.Name != "work" || e.Dur <= 0 || e.Pid == 0 {
				t.Errorf("slice %+v", e)
			}
		}
	}
	if slices != 60 {
		t.Errorf("%d slices, want one per matched call (60)", slices)
	}

	// Folded stacks: self times add up to the outermost calls' durations,
	// which the timeline gives independently.
	byTid := map[int][][2]int64{}
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" {
			ts, dur := int64(math.Round(e.Ts*1000)), int64(math.Round(e.Dur*1000))
			byTid[e.Tid] = append(byTid[e.Tid], [2]int64{ts, ts + dur})
		}
	}
	var outer int64
	for _, sl := range byTid {
		sort.Slice(sl, func(i, j int) bool { return sl[i][0] < sl[j][0] || sl[i][0] == sl[j][0] && sl[i][1] > sl[j][1] })
		end := int64(-1)
		for _, x := range sl {
			if x[0] >= end {
				outer += x[1] - x[0]
				end = x[1]
			}
		}
	}
	fb, err := os.ReadFile(fl)
	if err != nil {
		t.Fatal(err)
	}
	var folded int64
	lines := strings.Split(strings.TrimSuffix(string(fb), "\n"), "\n")
	for _, l := range lines {
		stack, w, _ := strings.Cut(l, " ")
		n, err := strconv.ParseInt(w, 10, 64)
		frames := strings.Split(stack, ";")
		if err != nil || len(frames) < 2 || frames[0] != "refprog" || frames[len(frames)-1] != "work" {
			t.Errorf("folded line %q", l)
		}
		folded += n
	}
	if folded != outer || outer == 0 {
		t.Errorf("folded stacks weigh %d ns, the outermost calls last %d ns:\n%s", folded, outer, fb)
	}
}

// TestAnalyzeErrors: one line naming what is wrong, non-zero exit.
func TestAnalyzeErrors(t *testing.T) {
	dir := t.TempDir()
	rnd := make([]byte, 3000)
	for i := range rnd {
		rnd[i] = byte(i*7 + i/13)
	}
	os.WriteFile(filepath.Join(dir, "random"), rnd, 0o644)
	gold, _ := os.ReadFile(goldenDir + "/v7-zstd.dat")
	os.WriteFile(filepath.Join(dir, "head"), gold[:200], 0o644)
	empty := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"analyze", filepath.Join(dir, "missing")}, exitENOENT, "no such file"},
		{[]string{"analyze", filepath.Join(dir, "random")}, exitEINVAL, "not a trace.dat or ftrace text recording"},
		{[]string{"analyze", filepath.Join(dir, "head")}, exitEINVAL, "damaged trace.dat"},
		{[]string{"analyze", "--refcount", "get=a", goldenDir + "/trace.txt"}, exitEINVAL, "bad refcount spec"},
		{[]string{"analyze", "--unit", "s", goldenDir + "/trace.txt"}, exitEINVAL, "unknown unit"},
		{[]string{"analyze", "--by", "cpu", goldenDir + "/trace.txt"}, exitEINVAL, "--by"},
		{[]string{"analyze", "a", "b"}, exitENOENT, "no such file"},
		{[]string{"analyze", "--by", "file,host", goldenDir + "/trace.txt"}, exitEINVAL, "--by"},
		{[]string{"analyze", "--json", "--json-lines", goldenDir + "/trace.txt"}, exitEINVAL, "choose one"},
		{[]string{"analyze", "--max-objects", "0", goldenDir + "/trace.txt"}, exitEINVAL, "--max-objects"},
		{[]string{"analyze", empty}, exitEINVAL, "no trace.dat file"},
	} {
		r := runGprobe(c.args...)
		if r.Code != c.code || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, c.want) || !strings.HasPrefix(r.Stderr, "gprobe analyze: ") {
			t.Errorf("%q: %s\nwant exit %d and one line with %q", c.args, r, c.code, c.want)
		}
	}
}

// totals are the counts every output format gives.
type totals struct {
	Events, Lost, Calls                                              int64
	Objects, Outstanding, Underflows, UseAfterPut, Reused, Unmatched int64
}

// textTotals reads the counts from the text report (its last section
// when there are several).
func textTotals(t *testing.T, out string) totals {
	t.Helper()
	if i := strings.LastIndex(out, "=== TOTAL"); i >= 0 {
		out = out[i:]
	}
	var tt totals
	head := regexp.MustCompile(`: (\d+) events, (\d+) lost`).FindStringSubmatch(out)
	row := regexp.MustCompile(`(?m)^\s+work\s+(\d+)\s`).FindStringSubmatch(out)
	rc := regexp.MustCompile(`objects (\d+), outstanding (\d+), underflows (\d+), use after put (\d+), address reuse (\d+), puts without get (\d+)`).FindStringSubmatch(out)
	if head == nil || row == nil || rc == nil {
		t.Fatalf("text report without totals:\n%s", out)
	}
	n := func(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }
	tt.Events, tt.Lost, tt.Calls = n(head[1]), n(head[2]), n(row[1])
	tt.Objects, tt.Outstanding, tt.Underflows, tt.UseAfterPut, tt.Reused, tt.Unmatched = n(rc[1]), n(rc[2]), n(rc[3]), n(rc[4]), n(rc[5]), n(rc[6])
	return tt
}

type jsonReport struct {
	Type       string
	Events     int64
	LostEvents int64 `json:"lost_events"`
	Latency    []struct{ Count int64 }
	Refcount   struct {
		Objects, Outstanding, Underflows int64
		UseAfterPut                      int64 `json:"use_after_put"`
		Reused                           int64
		UnmatchedPuts                    int64 `json:"unmatched_puts"`
	}
}

func (j jsonReport) totals() totals {
	return totals{j.Events, j.LostEvents, j.Latency[0].Count, j.Refcount.Objects, j.Refcount.Outstanding, j.Refcount.Underflows,
		j.Refcount.UseAfterPut, j.Refcount.Reused, j.Refcount.UnmatchedPuts}
}

// TestAnalyzeFormatsAgree: text, JSON and JSON lines give the same totals,
// for one recording and for several (the total section, the "total"
// member, the "total" line).
func TestAnalyzeFormatsAgree(t *testing.T) {
	spec := []string{"analyze", "--refcount", "get=obj_get,put=obj_put", "--max-objects", "1"}
	for _, inputs := range [][]string{
		{goldenDir + "/v7-zstd.dat"},
		{goldenDir + "/trace.txt", goldenDir + "/v7-zstd.dat", goldenDir + "/trace-pipe.txt"},
	} {
		text := runGprobe(append(spec, inputs...)...)
		js := runGprobe(append(append(spec, "--json"), inputs...)...)
		jl := runGprobe(append(append(spec, "--json-lines"), inputs...)...)
		if text.Code != 0 || js.Code != 0 || jl.Code != 0 {
			t.Fatalf("%s\n%s\n%s", text, js, jl)
		}
		want := textTotals(t, text.Stdout)
		var doc jsonReport
		if len(inputs) > 1 {
			var many struct {
				Files []jsonReport
				Total jsonReport
			}
			if err := json.Unmarshal([]byte(js.Stdout), &many); err != nil || len(many.Files) != len(inputs) {
				t.Fatalf("%v: %d files\n%s", err, len(many.Files), js.Stdout)
			}
			doc = many.Total
		} else if err := json.Unmarshal([]byte(js.Stdout), &doc); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(jl.Stdout, "\n"), "\n")
		var last jsonReport
		leaks := 0
		for _, l := range lines {
			if err := json.Unmarshal([]byte(l), &last); err != nil {
				t.Fatalf("%v: %s", err, l)
			}
			if last.Type == "leak" {
				leaks++
			}
		}
		if got := doc.totals(); got != want {
			t.Errorf("%v: JSON totals %+v, text %+v", inputs, got, want)
		}
		if got := last.totals(); got != want || int64(leaks) != want.Outstanding {
			t.Errorf("%v: JSON lines totals %+v with %d leak lines, text %+v", inputs, got, leaks, want)
		}
		if want.Events != int64(155*len(inputs)) || want.Outstanding != int64(3*len(inputs)) {
			t.Errorf("%v: totals %+v", inputs, want)
		}
	}
}
