package sdt

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/resolve/perfcache"
	"github.com/gprobe/gprobe/resolve/spec"
)

var (
	// ErrNotFound: no marker or cached event matches an SDT probe point
	// (perf's -ENOENT: "Failed to add events.").
	ErrNotFound = errors.New("no SDT or cached event matches")
	// ErrTooMany: more probes match than MaxProbes (perf's -E2BIG).
	ErrTooMany = errors.New("too many SDT or cached events match")
)

// DefaultMaxProbes is perf's MAX_PROBES, the default of --max-probes.
const DefaultMaxProbes = 128

func globMatch(s, pat string) bool { return spec.GlobMatch(s, pat) }

// Resolver finds the probes an SDT probe point names, as perf 6.1 does:
// in one binary (the point's @TARGET, else the -x binary), or, without
// either, in every binary perf's build-id cache knows.
//
// A binary named by path is read itself (its markers), and added to the
// cache as perf adds it (Remember). A binary found through the cache is
// read only while it still has the build-id the cache files it under,
// and its markers are again read from the binary: the cache's probe files
// decide which events exist (perf's `--cache -d` removes them), the
// binary what they are. Entries a user cached with `perf probe --cache`
// ("#" entries) are read from the cache, checked as the kernel would check
// them and only used when they probe that same binary.
type Resolver struct {
	// Cache is perf's build-id cache; nil: none.
	Cache *perfcache.Cache
	// Remember adds a binary named by path to Cache with its markers, as
	// perf does the first time it is asked about it.
	Remember bool
	// Options are what the kernel offers for operands.
	Options Options
	// MaxProbes bounds the probes one point may give (perf's
	// --max-probes); 0 is DefaultMaxProbes.
	MaxProbes int
	// Definitions checks cached "#" definitions (nil: Linux 6.1's grammar).
	Definitions *probedef.Options
	// Warn reports what was skipped: a cache that fails the checks, a
	// binary or an entry that cannot be used. nil: silent.
	Warn func(msg string)
}

func (r *Resolver) warn(format string, args ...any) {
	if r.Warn != nil {
		r.Warn(fmt.Sprintf(format, args...))
	}
}

// cache returns Cache when it can be used; with Remember, a missing
// cache directory is created, as perf creates it.
func (r *Resolver) cache() *perfcache.Cache {
	if r.Cache == nil {
		return nil
	}
	if r.Remember {
		_ = os.MkdirAll(r.Cache.Root, 0o755)
	}
	if err := r.Cache.Trusted(); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			r.warn("perf's build-id cache is not used: %v", err)
		}
		return nil
	}
	return r.Cache
}

// Probes resolves an SDT probe point: exe is the -x binary ("" without
// -x); p.Target, when set, takes its place (a prefix of a cached build-id
// names the cached binary). The probes come in perf's order: binaries by
// build-id (without a target), a binary's events in its probe cache's
// order, an event's markers in perf's. An error wraps ErrNotFound when
// nothing matches.
func (r *Resolver) Probes(p Point, exe string) ([]probe.Probe, error) {
	path := exe
	if p.Target != "" {
		path = p.Target
		if c := r.cache(); c != nil {
			if bid := c.Complement(p.Target); bid != "" {
				if name, err := c.OrigName(bid); err == nil {
					path = name
				}
			}
		}
	}
	if path != "" {
		b, err := r.binary(path)
		if err != nil {
			return nil, err
		}
		ps, err := r.selectIn(b, p)
		if err != nil {
			return nil, err
		}
		if len(ps) == 0 {
			return nil, fmt.Errorf("%s in %s: %w", p, b.path, ErrNotFound)
		}
		return r.bounded(p, ps)
	}
	var all []probe.Probe
	c := r.cache()
	if c != nil {
		ids, err := c.ValidList()
		if err != nil {
			r.warn("perf's build-id cache: %v", err)
		}
		for _, bid := range ids {
			name, _ := c.OrigName(bid)
			if !strings.HasPrefix(name, "/") {
				continue // [kernel.kallsyms]: kernel probes are not cached by gprobe
			}
			b, err := r.cached(c, bid, name)
			if err != nil {
				r.warn("%v", err)
				continue
			}
			ps, err := r.selectIn(b, p)
			if err != nil {
				r.warn("%v", err)
				continue
			}
			all = append(all, ps...)
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%s: %w in perf's build-id cache", p, ErrNotFound)
	}
	return r.bounded(p, all)
}

// bounded fails when ps are more than MaxProbes.
func (r *Resolver) bounded(p Point, ps []probe.Probe) ([]probe.Probe, error) {
	max := r.MaxProbes
	if max <= 0 {
		max = DefaultMaxProbes
	}
	if len(ps) > max {
		return nil, fmt.Errorf("%s: %d probes, more than %d (--max-probes): %w", p, len(ps), max, ErrTooMany)
	}
	return ps, nil
}

// target is one binary's markers and probe cache entries.
type target struct {
	path    string // as definitions name it: absolute, links resolved
	file    *File  // nil: no markers
	events  map[string]*Event
	entries []perfcache.Entry
}

func (b *target) setEvents(evs []Event) {
	b.events = map[string]*Event{}
	for i := range evs {
		b.events[evs[i].Group+":"+evs[i].Name] = &evs[i]
	}
}

// read opens the markers of the binary at the real path.
func readBinary(real string) (*target, []Event, error) {
	b := &target{path: real}
	f, err := Open(real)
	switch {
	case errors.Is(err, ErrNoNotes):
		b.setEvents(nil)
		return b, nil, nil
	case err != nil:
		return nil, nil, err
	}
	evs, err := f.Events(real)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", real, err)
	}
	b.file = f
	b.setEvents(evs)
	return b, evs, nil
}

// binary reads the binary at path, with its cache entries when the
// cache has them, else its markers (added to the cache with Remember).
func (r *Resolver) binary(path string) (*target, error) {
	real, err := perfcache.RealPath(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (%v)", path, ErrNotFound, err)
	}
	b, evs, err := readBinary(real)
	if err != nil {
		return nil, err
	}
	// The entries perf's scan makes: the events and their order.
	b.entries = nil
	for _, e := range evs {
		b.entries = append(b.entries, perfcache.SDTEntry(e.Group, e.Name))
	}
	c := r.cache()
	if c == nil {
		return b, nil
	}
	bid, err := perfcache.FileBuildID(real)
	if err != nil {
		return b, nil // perf cannot cache it; its markers still count
	}
	if _, ok := c.Valid(bid); ok {
		es, err := c.Probes(bid)
		switch {
		case err != nil:
			r.warn("perf's probe cache of %s: %v", real, err)
		case es != nil:
			b.entries = es
			return b, nil
		}
	}
	if r.Remember {
		entries, err := Entries(nil, evs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", real, err)
		}
		if _, _, err := c.Add(real); err != nil {
			r.warn("adding %s to perf's build-id cache: %v", real, err)
		} else if err := c.SetProbes(bid, entries); err != nil {
			r.warn("writing the probe cache of %s: %v", real, err)
		}
	}
	return b, nil
}

// cached reads the binary the cache files under bid (its path is name).
func (r *Resolver) cached(c *perfcache.Cache, bid, name string) (*target, error) {
	es, err := c.Probes(bid)
	if err != nil {
		return nil, fmt.Errorf("perf's probe cache of %s: %w", name, err)
	}
	if len(es) == 0 {
		return &target{path: name}, nil
	}
	b, _, err := readBinary(name)
	if err != nil {
		return nil, err
	}
	b.entries = es
	return b, nil
}

// selectIn is the probes of b's entries that p selects.
func (r *Resolver) selectIn(b *target, p Point) ([]probe.Probe, error) {
	var ps []probe.Probe
	for _, e := range b.entries {
		if e.Group == "" || e.Event == "" || !Match(p.Group, p.Event, e.Group, e.Event) {
			continue
		}
		if !e.SDT {
			ps = append(ps, r.definitions(b, e)...)
			continue
		}
		ev := b.events[e.Group+":"+e.Event]
		if ev == nil {
			r.warn("%s has no marker %s:%s any more", b.path, e.Group, e.Event)
			continue
		}
		if err := ev.Order(); err != nil {
			return nil, fmt.Errorf("%s: %w", b.path, err)
		}
		var eps []probe.Probe
		for _, n := range ev.Notes {
			pr, _, err := n.Probe(b.path, b.file.Machine, r.Options)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", b.path, err)
			}
			eps = append(eps, pr)
		}
		eps, dropped := Consistent(eps)
		if len(dropped) > 0 {
			r.warn("%s:%s: the %d markers in %s do not all fetch %s alike: left out", e.Group, e.Event, len(eps), b.path, strings.Join(dropped, ", "))
		}
		ps = append(ps, eps...)
	}
	return ps, nil
}

// definitions reads a "#" entry's definitions: each must be a uprobe of
// the binary itself.
func (r *Resolver) definitions(b *target, e perfcache.Entry) []probe.Probe {
	var ps []probe.Probe
	for _, l := range e.Lines {
		p, err := probedef.Parse(l, r.Definitions)
		if err != nil {
			r.warn("cached definition %q of %s: %v", l, b.path, err)
			continue
		}
		if p.Kind != probe.Uprobe || p.Target.Path != b.path {
			r.warn("cached definition %q is not a probe of %s", l, b.path)
			continue
		}
		ps = append(ps, *p)
	}
	return ps
}

// RefusedError is an SDT probe the caller's check refused (Specs): the
// kernel would refuse its definition. Its message is Err's.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Specs resolves the SDT points among specs (-D, -a: Probes with the -x
// binary exe), keyed by their index in specs; the others are left to the
// caller. Each probe is passed to check (the kernel's grammar for the
// marked binary: install.CheckDefinition); its refusal ends Specs with a
// *RefusedError, as does Probes' first error.
func (r *Resolver) Specs(specs []*spec.Probe, exe string, check func(probe.Probe) error) (map[int][]probe.Probe, error) {
	out := map[int][]probe.Probe{}
	for i, p := range specs {
		if !p.Point.SDT {
			continue
		}
		ps, err := r.Probes(PointOf(&p.Point), exe)
		if err != nil {
			return nil, err
		}
		for _, q := range ps {
			if err := check(q); err != nil {
				return nil, &RefusedError{Err: err}
			}
		}
		out[i] = ps
	}
	return out, nil
}
