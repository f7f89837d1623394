package sdt

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gprobe/gprobe/resolve/perfcache"
)

// eachCache calls fn with the probe cache of every binary in the cache,
// in build-id order: the valid ones (validOnly), or all. A probe cache
// that fails the checks is skipped (warn says why).
func eachCache(c *perfcache.Cache, validOnly bool, warn func(string), fn func(bid string, es []perfcache.Entry) error) error {
	if err := c.Trusted(); err != nil {
		return err
	}
	list := c.List
	if validOnly {
		list = c.ValidList
	}
	ids, err := list()
	if err != nil {
		return err
	}
	for _, bid := range ids {
		es, err := c.Probes(bid)
		if err != nil {
			if warn != nil {
				warn(fmt.Sprintf("perf's probe cache of %s: %v", bid, err))
			}
			continue
		}
		if err := fn(bid, es); err != nil {
			return err
		}
	}
	return nil
}

// CacheListing is what `perf probe --cache -l` prints
// (probe_cache__show_all_caches): for each binary of the cache that has a
// probe cache with entries, "PATH (BUILDID):" and the commands of its
// entries that keep selects (it gets perfcache.Entry.Key). Binaries that
// fail the checks are skipped (warn says why).
func CacheListing(c *perfcache.Cache, keep func(string) bool, warn func(string)) ([]string, error) {
	var out []string
	err := eachCache(c, true, warn, func(bid string, es []perfcache.Entry) error {
		if len(es) == 0 {
			return nil
		}
		name, _ := c.OrigName(bid)
		out = append(out, name+" ("+bid+"):")
		for _, e := range es {
			if keep == nil || keep(e.Key()) {
				out = append(out, e.Spec)
			}
		}
		return nil
	})
	return out, err
}

// Listed is one SDT event as `perf list sdt` lists it.
type Listed struct {
	Group, Name string
	BuildID     string // the binary's build-id
	Path        string // the binary
}

// Lines renders events as perf's print_sdt_events does: sorted by
// GROUP:EVENT@BUILDID, one line "  %-50s [SDT event]" each, where an event
// that several binaries have names its binary and the first 12 digits of
// its build-id: "GROUP:EVENT@PATH(BUILDID12)".
func Lines(evs []Listed) []string {
	key := func(e Listed) string { return e.Group + ":" + e.Name + "@" + e.BuildID }
	evs = slices.Clone(evs)
	slices.SortFunc(evs, func(a, b Listed) int { return strings.Compare(key(a), key(b)) })
	evs = slices.CompactFunc(evs, func(a, b Listed) bool { return key(a) == key(b) })
	out := make([]string, 0, len(evs))
	for i, e := range evs {
		name := e.Group + ":" + e.Name
		dup := i > 0 && evs[i-1].Group+":"+evs[i-1].Name == name ||
			i+1 < len(evs) && evs[i+1].Group+":"+evs[i+1].Name == name
		if dup {
			id := e.BuildID
			if len(id) > 12 {
				id = id[:12]
			}
			name += "@" + e.Path + "(" + id + ")"
		}
		out = append(out, fmt.Sprintf("  %-50s [SDT event]", name))
	}
	return out
}

// CachedEvents is the SDT events of every binary in the cache whose
// group and name the globs select (group or event "" selects all): what
// `perf list sdt` lists.
func CachedEvents(c *perfcache.Cache, groupGlob, eventGlob string, warn func(string)) ([]Listed, error) {
	var evs []Listed
	err := eachCache(c, true, warn, func(bid string, es []perfcache.Entry) error {
		name, _ := c.OrigName(bid)
		for _, e := range es {
			if e.SDT && (groupGlob == "" || globMatch(e.Group, groupGlob)) && (eventGlob == "" || globMatch(e.Event, eventGlob)) {
				evs = append(evs, Listed{Group: e.Group, Name: e.Event, BuildID: bid, Path: name})
			}
		}
		return nil
	})
	return evs, err
}

// FileEvents is the SDT events of the binary at path that the globs
// select, listed as CachedEvents lists the cache's.
func FileEvents(path, groupGlob, eventGlob string) ([]Listed, error) {
	real, err := perfcache.RealPath(path)
	if err != nil {
		return nil, err
	}
	f, err := Open(real)
	if err != nil {
		return nil, err
	}
	bid, _ := perfcache.FileBuildID(real)
	evs, err := f.Events(real)
	if err != nil {
		return nil, err
	}
	var out []Listed
	for _, e := range evs {
		if (groupGlob == "" || globMatch(e.Group, groupGlob)) && (eventGlob == "" || globMatch(e.Name, eventGlob)) {
			out = append(out, Listed{Group: e.Group, Name: e.Name, BuildID: bid, Path: real})
		}
	}
	return out, nil
}

// PurgeCache removes the entries keep selects (as CacheListing selects
// them) from the probe cache of every binary in the cache, valid or not,
// and returns their commands: perf's `probe --cache -d`
// (del_perf_probe_caches).
func PurgeCache(c *perfcache.Cache, keep func(string) bool, warn func(string)) ([]string, error) {
	var removed []string
	err := eachCache(c, false, warn, func(bid string, es []perfcache.Entry) error {
		var kept []perfcache.Entry
		for _, e := range es {
			if keep(e.Key()) {
				removed = append(removed, e.Spec)
			} else {
				kept = append(kept, e)
			}
		}
		if len(kept) == len(es) {
			return nil
		}
		return c.SetProbes(bid, kept)
	})
	return removed, err
}
