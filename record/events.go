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
	// Format is the event's format, read when it was enabled: a user
	// event may be gone by the time the file is written (it is deleted
	// when its program exits and nothing has it enabled). nil: read it
	// when writing the file.
	Format []byte
}

// userSystems are the systems of user events (user_events, and
// user_events_multi for events registered with
// USER_EVENT_REG_MULTI_FORMAT).
var userSystems = []string{"user_events", "user_events_multi"}

// watch is an -e pattern matched again and again while recording: a user
// event exists only once its program has registered it.
type watch struct{ sys, name string }

// userSystem reports whether the system pattern names a user events
// system.
func userSystem(pattern string) bool {
	for _, s := range userSystems {
		if ok, _ := path.Match(pattern, s); ok {
			return true
		}
	}
	return false
}

// isUserSystem reports whether sys is a user events system.
func isUserSystem(sys string) bool {
	for _, s := range userSystems {
		if s == sys {
			return true
		}
	}
	return false
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
// With no arguments it selects every installed probe event. An argument
// whose system matches a user events system is also a watch: its user
// events are left to the recording, which enables them as they appear
// (once tracing is on); it may match nothing yet.
func selectEvents(root *tracefs.FS, specs []string) ([]event, []watch, error) {
	var watches []watch
	defs, err := probeDefinitions(root)
	if err != nil {
		return nil, nil, err
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
			return nil, nil, fmt.Errorf("%w: no probe events installed (add some, or name events with -e)", ErrNoEvents)
		}
		return evs, nil, nil
	}
	for _, s := range specs {
		sys, name, ok := strings.Cut(s, ":")
		if !ok {
			sys, name, ok = strings.Cut(s, "/")
		}
		if !ok || sys == "" || name == "" || strings.ContainsAny(s, " \t\n") {
			return nil, nil, fmt.Errorf("%w %q: want GROUP:EVENT, GROUP:* or SYSTEM:EVENT", ErrBadEvent, s)
		}
		if _, err := path.Match(sys, ""); err != nil {
			return nil, nil, fmt.Errorf("%w %q: %v", ErrBadEvent, s, err)
		}
		if _, err := path.Match(name, ""); err != nil {
			return nil, nil, fmt.Errorf("%w %q: %v", ErrBadEvent, s, err)
		}
		watching := userSystem(sys)
		if watching {
			watches = append(watches, watch{sys, name})
		}
		matched := 0
		systems, _ := os.ReadDir(root.Path("events"))
		for _, sd := range systems {
			if !sd.IsDir() {
				continue
			}
			if ok, _ := path.Match(sys, sd.Name()); !ok || isUserSystem(sd.Name()) {
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
		if matched == 0 && !watching {
			return nil, nil, fmt.Errorf("%w %q: no such event in %s", ErrBadEvent, s, root.Path("events"))
		}
	}
	return evs, watches, nil
}

// newUserEvents returns the user events matching the watches that are not
// in seen (by SYSTEM:EVENT), their formats read.
func newUserEvents(root *tracefs.FS, watches []watch, seen map[string]bool) []event {
	var out []event
	for _, sys := range userSystems {
		ents, err := os.ReadDir(root.Path(path.Join("events", sys)))
		if err != nil {
			continue
		}
		for _, ed := range ents {
			if !ed.IsDir() || seen[sys+":"+ed.Name()] {
				continue
			}
			for _, w := range watches {
				okSys, _ := path.Match(w.sys, sys)
				okName, _ := path.Match(w.name, ed.Name())
				if !okSys || !okName {
					continue
				}
				f, err := root.EventFormat(sys, ed.Name())
				if err != nil {
					break // gone already
				}
				out = append(out, event{System: sys, Name: ed.Name(), Format: f})
				break
			}
		}
	}
	return out
}
