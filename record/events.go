package record

import (
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/gprobe/gprobe/emit/tracefs"
)

// ErrNoEvents reports that nothing was selected for recording.
var ErrNoEvents = errors.New("no events to record")

// ErrBadEvent reports an -e argument that names no event.
var ErrBadEvent = errors.New("bad event")

// event is one tracefs event selected for recording.
type event struct {
	System, Name string
	// Definition is the event's line in kprobe_events, uprobe_events or
	// dynamic_events for probe events, "" for static tracepoints.
	Definition string
}

func (e event) String() string { return e.System + ":" + e.Name }

// probeDefinitions reads the installed probe events' definitions, keyed
// by "group:event", as the kernel lists them (a multi-probe event keeps its
// first line).
func probeDefinitions(root *tracefs.FS) (map[string]string, error) {
	evs, err := root.List()
	if err != nil {
		return nil, err
	}
	defs := map[string]string{}
	for _, e := range evs {
		k := e.Group + ":" + e.Name
		if _, ok := defs[k]; !ok && e.Group != "" && e.Name != "" {
			defs[k] = e.Line
		}
	}
	return defs, nil
}

// selectEvents resolves -e arguments (GROUP:EVENT, GROUP:*, SYSTEM:EVENT,
// with path.Match globs on both sides) against root's events directory.
// With no arguments it selects every installed probe event.
func selectEvents(root *tracefs.FS, specs []string) ([]event, error) {
	defs, err := probeDefinitions(root)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var evs []event
	add := func(sys, name string) {
		k := sys + ":" + name
		if !seen[k] {
			seen[k] = true
			evs = append(evs, event{System: sys, Name: name, Definition: defs[k]})
		}
	}
	if len(specs) == 0 {
		names := make([]string, 0, len(defs))
		for k := range defs {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			sys, name, _ := strings.Cut(k, ":")
			if root.Exists(path.Join("events", sys, name, "format")) {
				add(sys, name)
			}
		}
		if len(evs) == 0 {
			return nil, fmt.Errorf("%w: no probe events installed (add some, or name events with -e)", ErrNoEvents)
		}
		return evs, nil
	}
	for _, s := range specs {
		sys, name, ok := strings.Cut(s, ":")
		if !ok {
			sys, name, ok = strings.Cut(s, "/")
		}
		if !ok || sys == "" || name == "" || strings.ContainsAny(s, " \t\n") {
			return nil, fmt.Errorf("%w %q: want GROUP:EVENT, GROUP:* or SYSTEM:EVENT", ErrBadEvent, s)
		}
		if _, err := path.Match(sys, ""); err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrBadEvent, s, err)
		}
		if _, err := path.Match(name, ""); err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrBadEvent, s, err)
		}
		matched := 0
		systems, _ := os.ReadDir(root.Path("events"))
		for _, sd := range systems {
			if !sd.IsDir() {
				continue
			}
			if ok, _ := path.Match(sys, sd.Name()); !ok {
				continue
			}
			ents, _ := os.ReadDir(root.Path(path.Join("events", sd.Name())))
			for _, ed := range ents {
				if !ed.IsDir() {
					continue
				}
				if ok, _ := path.Match(name, ed.Name()); ok {
					add(sd.Name(), ed.Name())
					matched++
				}
			}
		}
		if matched == 0 {
			return nil, fmt.Errorf("%w %q: no such event in %s", ErrBadEvent, s, root.Path("events"))
		}
	}
	return evs, nil
}
