package record

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/emit/tracefs"
)

// TestUserEventWatch: an -e pattern on user_events may match nothing when
// recording starts; the events that appear later are found once each,
// with their formats, and other systems' patterns still must match.
func TestUserEventWatch(t *testing.T) {
	dir := t.TempDir()
	mk := func(sys, name string) {
		d := filepath.Join(dir, "events", sys, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "format"), []byte("name: "+name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("sched", "sched_switch")
	os.WriteFile(filepath.Join(dir, "events", "sched", "enable"), []byte("0\n"), 0o644)
	root := tracefs.At(dir)
	evs, watches, err := selectEvents(root, []string{"user_events:*", "sched:sched_switch"})
	if err != nil || len(evs) != 1 || evs[0].String() != "sched:sched_switch" || len(watches) != 1 {
		t.Fatalf("got %v %v %v", evs, watches, err)
	}
	if _, _, err := selectEvents(root, []string{"nosuch:*"}); !errors.Is(err, ErrBadEvent) {
		t.Errorf("a pattern on another system matching nothing: %v", err)
	}
	seen := map[string]bool{}
	if got := newUserEvents(root, watches, seen); len(got) != 0 {
		t.Fatalf("no user events yet, got %v", got)
	}
	mk("user_events", "request_begin")
	mk("user_events_multi", "request_end.1a") // another system: not matched by user_events:*
	got := newUserEvents(root, watches, seen)
	if len(got) != 1 || got[0].String() != "user_events:request_begin" || string(got[0].Format) != "name: request_begin\n" {
		t.Fatalf("got %+v", got)
	}
	seen[got[0].String()] = true
	if again := newUserEvents(root, watches, seen); len(again) != 0 {
		t.Errorf("found twice: %v", again)
	}
	_, w2, _ := selectEvents(root, []string{"user_events*:request_*"})
	if got := newUserEvents(root, w2, map[string]bool{}); len(got) != 2 {
		t.Errorf("user_events*:request_*: %v", got)
	}
}

// TestUnmatchedWatches: a user-event pattern that matched nothing while
// recording is named in the summary.
func TestUnmatchedWatches(t *testing.T) {
	s := &session{watches: []watch{{"user_events", "*"}, {"user_events", "req*"}},
		events: []event{{System: "user_events", Name: "other"}}}
	if got := s.unmatchedWatches(); len(got) != 1 || got[0] != "user_events:req*" {
		t.Errorf("got %q", got)
	}
	r := &Result{Output: "t.out", Unmatched: []string{"user_events:req*"}}
	if sum := r.Summary(); !strings.HasSuffix(sum, "no events lost; no user event matched user_events:req*") {
		t.Errorf("summary %q", sum)
	}
}
