package sdt

import (
	"slices"
	"strings"

	"github.com/gprobe/gprobe/resolve/perfcache"
	"github.com/gprobe/gprobe/resolve/spec"
)

// Event is the markers of one event, sdt_PROVIDER:NAME: a binary may hold
// several markers of one name (a function inlined twice, or one marker
// written in several places), which become one event with a probe each.
type Event struct {
	Group, Name string
	// Notes are the event's markers in perf's order (sorted by perf's
	// definition text), a marker perf would define twice kept once.
	Notes []*Note
	// PerfLines are perf's definitions of Notes, in the same order.
	PerfLines []string
}

// Events groups the markers of f (the binary at path, as definitions name
// it) by event, in the order perf's probe cache keeps them
// (probe_cache__scan_sdt): events in the order of their first marker.
// A marker perf could not define (an operand size out of range) fails the
// whole file, as it does for perf.
func (f *File) Events(path string) ([]Event, error) {
	var evs []Event
	index := map[string]int{}
	for i := range f.Notes {
		n := &f.Notes[i]
		line, err := n.PerfLine(path, f.Machine)
		if err != nil {
			return nil, err
		}
		key := n.Group() + ":" + n.Name
		k, ok := index[key]
		if !ok {
			k = len(evs)
			index[key] = k
			evs = append(evs, Event{Group: n.Group(), Name: n.Name})
		}
		e := &evs[k]
		j, found := slices.BinarySearch(e.PerfLines, line)
		if found {
			continue
		}
		e.PerfLines = slices.Insert(e.PerfLines, j, line)
		e.Notes = slices.Insert(e.Notes, j, n)
	}
	return evs, nil
}

// Entries is what perf's probe_cache__scan_sdt makes of the markers of f
// merged into a binary's probe cache entries: each event's definitions
// added to the entry of its name, a new entry appended for an event that
// has none.
func Entries(old []perfcache.Entry, evs []Event) []perfcache.Entry {
	entries := slices.Clone(old)
	for _, e := range evs {
		en := perfcache.Find(entries, e.Group, e.Name)
		if en == nil {
			entries = append(entries, perfcache.SDTEntry(e.Group, e.Name))
			en = &entries[len(entries)-1]
		}
		for _, l := range e.PerfLines {
			en.Add(l)
		}
	}
	return entries
}

// Match reports whether an event named group:name is selected by the
// globs of an SDT probe point (perf's strglobmatch; group "" selects every
// group).
func Match(groupGlob, eventGlob, group, name string) bool {
	return (groupGlob == "" || globMatch(group, groupGlob)) && globMatch(name, eventGlob)
}

// Point is an SDT probe point, "%[GROUP:]EVENT[@TARGET]" or
// "sdt_PROVIDER:EVENT[@TARGET]".
type Point struct {
	Group, Event string // globs; Group "" for any group
	// Target is the binary (a path, or a prefix of a cached build-id)
	// after '@', "" when none is written.
	Target string
}

// String is the point as perf names it in messages: %[GROUP:]EVENT.
func (p Point) String() string {
	var b strings.Builder
	b.WriteByte('%')
	if p.Group != "" {
		b.WriteString(p.Group + ":")
	}
	b.WriteString(p.Event)
	return b.String()
}

// PointOf is the SDT point a parsed probe point names (sp.SDT must be
// set).
func PointOf(sp *spec.Point) Point {
	return Point{Group: sp.Group, Event: sp.Event, Target: sp.Target}
}
