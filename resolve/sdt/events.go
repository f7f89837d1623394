package sdt

import (
	"debug/elf"
	"fmt"
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
	// Notes are the event's markers: in the order of the note section,
	// then, once Order ran, in perf's order (sorted by perf's definition
	// text), a marker perf would define twice kept once.
	Notes []*Note
	// PerfLines are perf's definitions of Notes, set by Order.
	PerfLines []string

	path    string
	machine elf.Machine
	ordered bool
}

// Events groups the markers of f (the binary at path, as definitions name
// it) by event, in the order perf's probe cache keeps them
// (probe_cache__scan_sdt): events in the order of their first marker.
// Every marker's operand sizes are read: one out of range fails the whole
// file, as it does for perf.
func (f *File) Events(path string) ([]Event, error) {
	// Most events have one marker (libjvm: 517 of its 532).
	evs := make([]Event, 0, len(f.Notes))
	type key struct{ group, name string } // not the provider: Group cuts it
	index := make(map[key]int, len(f.Notes))
	for i := range f.Notes {
		n := &f.Notes[i]
		if err := checkSizes(n.Args); err != nil {
			return nil, n.errorf(err)
		}
		g := n.Group()
		key := key{g, n.Name}
		k, ok := index[key]
		if !ok {
			k = len(evs)
			index[key] = k
			evs = append(evs, Event{Group: g, Name: n.Name, path: path, machine: f.Machine})
		}
		evs[k].Notes = append(evs[k].Notes, n)
	}
	return evs, nil
}

// Order puts the event's markers in perf's order and sets PerfLines.
func (e *Event) Order() error {
	if e.ordered {
		return nil
	}
	var notes []*Note
	var lines []string
	for _, n := range e.Notes {
		line, err := n.PerfLine(e.path, e.machine)
		if err != nil {
			return err
		}
		j, found := slices.BinarySearch(lines, line)
		if found {
			continue
		}
		lines = slices.Insert(lines, j, line)
		notes = slices.Insert(notes, j, n)
	}
	e.Notes, e.PerfLines, e.ordered = notes, lines, true
	return nil
}

// checkSizes reads the size of each operand as perf splits them.
func checkSizes(args string) error {
	words := strings.Fields(args)
	for i := 0; i < len(words); i++ {
		w := words[i]
		if i+1 < len(words) && strings.Contains(w, "[sp,") {
			i++
		}
		if at := strings.IndexByte(w, '@'); at >= 0 {
			if n, ok := strtol(w[:at]); !ok || n < -8 || n > 8 {
				return fmt.Errorf("operand %q: %w", w, ErrSize)
			}
		}
	}
	return nil
}

// Entries is what perf's probe_cache__scan_sdt makes of the markers of f
// merged into a binary's probe cache entries: each event's definitions
// added to the entry of its name, a new entry appended for an event that
// has none.
func Entries(old []perfcache.Entry, evs []Event) ([]perfcache.Entry, error) {
	entries := slices.Clone(old)
	for i := range evs {
		e := &evs[i]
		if err := e.Order(); err != nil {
			return nil, err
		}
		en := perfcache.Find(entries, e.Group, e.Name)
		if en == nil {
			entries = append(entries, perfcache.SDTEntry(e.Group, e.Name))
			en = &entries[len(entries)-1]
		}
		for _, l := range e.PerfLines {
			en.Add(l)
		}
	}
	return entries, nil
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
