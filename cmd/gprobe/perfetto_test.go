package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gprobe/gprobe/analyze/perfetto/perfettopb"
)

// TestAnalyzePerfetto: --export-perfetto writes a Perfetto trace with one
// slice per call, as many as the JSON timeline's (analyze/perfetto's tests
// load it the way trace_processor does), and a live-objects counter.
func TestAnalyzePerfetto(t *testing.T) {
	dir := t.TempDir()
	pf, tl := filepath.Join(dir, "t.pftrace"), filepath.Join(dir, "t.json")
	r := runGprobe("analyze", "--export-perfetto", pf, "--export-timeline", tl, "--refcount", "get=obj_get,put=obj_put", goldenDir+"/v7-zstd.dat")
	if r.Code != 0 {
		t.Fatal(r)
	}
	b, err := os.ReadFile(pf)
	if err != nil {
		t.Fatal(err)
	}
	var tr perfettopb.Trace
	if err := proto.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	begins, ends, counters := 0, 0, 0
	for _, p := range tr.GetPacket() {
		switch p.GetTrackEvent().GetType() {
		case perfettopb.TrackEvent_TYPE_SLICE_BEGIN:
			begins++
		case perfettopb.TrackEvent_TYPE_SLICE_END:
			ends++
		case perfettopb.TrackEvent_TYPE_COUNTER:
			counters++
		}
	}
	js, err := os.ReadFile(tl)
	if err != nil {
		t.Fatal(err)
	}
	if x := strings.Count(string(js), `"ph":"X"`); begins != 60 || ends != 60 || x != 60 || counters == 0 {
		t.Errorf("%d slice begins, %d ends, %d counter values; the timeline has %d slices (want 60)", begins, ends, counters, x)
	}
	if r := runGprobe("analyze", "--export-perfetto", filepath.Join(dir, "no", "t.pftrace"), goldenDir+"/trace.txt"); r.Code != exitENOENT || !strings.HasPrefix(r.Stderr, "gprobe analyze: ") {
		t.Errorf("unwritable --export-perfetto: %s", r)
	}
}
