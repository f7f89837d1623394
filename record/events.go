package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
)

// ErrNoEvents reports that nothing was selected for recording.
var ErrNoEvents = errors.New("no events to record")

// ErrBadEvent reports an -e argument that names no event.
var ErrBadEvent = errors.New("bad event")

// event is one tracefs event selected for recording.
type event struct {
	System, Name string
	// Definition is the event's line in dynamic_events (or
	// uprobe_events/kprobe_events) for probe events, "" for static
	// tracepoints.
	Definition string
}

func (e event) String() string { return e.System + ":" + e.Name }

// probeDefinitions reads the installed dynamic probe events, keyed by
// "group:event". dynamic_events lists every kind; older kernels only have
// kprobe_events and uprobe_events, whose lines have the same form.
func probeDefinitions(root dir) (map[string]string, error) {
	defs := map[string]string{}
	files := []string{"dynamic_events"}
	if !root.exists("dynamic_events") {
		files = []string{"kprobe_events", "uprobe_events"}
	}
	for _, f := range files {
		b, err := root.read(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if name, ok := probeName(line); ok {
				defs[name] = line
			}
		}
	}
	return defs, nil
}

// probeName returns "group:event" of a probe definition line such as
// "p:uprobes/foo /bin/x:0x10 arg=%di" or "r16:kprobes/bar vfs_read".
// Synthetic and other non-probe dynamic events are not probes.
func probeName(line string) (string, bool) {
	head, _, _ := strings.Cut(line, " ")
	kind, name, ok := strings.Cut(head, ":")
	if !ok || kind == "" {
		return "", false
	}
	switch kind[0] {
	case 'p', 'r', 'f', 't': // kprobe/uprobe, return probes, fprobe, tprobe
	default:
		return "", false
	}
	grp, ev, ok := strings.Cut(name, "/")
	if !ok || grp == "" || ev == "" || strings.Contains(name, ":") {
		return "", false
	}
	return grp + ":" + ev, true
}

// selectEvents resolves -e arguments (GROUP:EVENT, GROUP:*, SYSTEM:EVENT,
// with path.Match globs on both sides) against root's events directory.
// With no arguments it selects every installed probe event.
func selectEvents(root dir, specs []string) ([]event, error) {
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
			if root.exists(path.Join("events", sys, name, "format")) {
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
		systems, _ := os.ReadDir(root.path("events"))
		for _, sd := range systems {
			if !sd.IsDir() {
				continue
			}
			if ok, _ := path.Match(sys, sd.Name()); !ok {
				continue
			}
			ents, _ := os.ReadDir(root.path(path.Join("events", sd.Name())))
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
			return nil, fmt.Errorf("%w %q: no such event in %s", ErrBadEvent, s, root.path("events"))
		}
	}
	return evs, nil
}
