package sdt

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"syscall"

	"github.com/gprobe/gprobe/resolve/perfcache"
	"github.com/gprobe/gprobe/resolve/spec"
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
	// Each key made once: libjvm, python and libstdc++ cached together
	// are 520 events, and keys made per comparison were most of the sort.
	type keyed struct {
		key  string // GROUP:EVENT@BUILDID
		name int    // len(GROUP:EVENT)
		ev   Listed
	}
	ks := make([]keyed, len(evs))
	for i, e := range evs {
		ks[i] = keyed{key: e.Group + ":" + e.Name + "@" + e.BuildID, name: len(e.Group) + 1 + len(e.Name), ev: e}
	}
	slices.SortFunc(ks, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	ks = slices.CompactFunc(ks, func(a, b keyed) bool { return a.key == b.key })
	out := make([]string, 0, len(ks))
	for i, k := range ks {
		name := k.key[:k.name]
		dup := i > 0 && ks[i-1].key[:ks[i-1].name] == name ||
			i+1 < len(ks) && ks[i+1].key[:ks[i+1].name] == name
		if dup {
			id := k.ev.BuildID
			if len(id) > 12 {
				id = id[:12]
			}
			name += "@" + k.ev.Path + "(" + id + ")"
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

// cacheFilter is perf's filter of --cache -l and -d, its refusal in
// perf's words.
func cacheFilter(pattern string) (*spec.Filter, error) {
	flt, err := spec.ParseFilter(pattern)
	if err != nil {
		return nil, fmt.Errorf("Filter parse error at %s", pattern)
	}
	return flt, nil
}

// cacheErr is a failure to read or write the cache, in perf's words; a
// cache that does not exist is none.
func cacheErr(err error) error {
	if err != nil && !errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("perf's build-id cache: %w", err)
	}
	return nil
}

// ShowCache writes to w what `perf probe --cache -l [FILTER...]` prints
// (perf's probe_cache__show_all_caches): the entries the filters (joined
// by spaces, "*" when none) keep.
func ShowCache(w io.Writer, c *perfcache.Cache, filters []string, warn func(string)) error {
	pattern := "*"
	if len(filters) > 0 {
		pattern = strings.Join(filters, " ")
	}
	flt, err := cacheFilter(pattern)
	if err != nil {
		return err
	}
	lines, err := CacheListing(c, flt.Match, warn)
	if err := cacheErr(err); err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return nil
}

// DeleteCache is `perf probe --cache -d PATTERN...` (perf's
// del_perf_probe_caches): it removes the entries the patterns select
// (GROUP:EVENT, or the command of an entry without a name) from every
// binary's probe cache, calling removed with each.
func DeleteCache(c *perfcache.Cache, patterns []string, removed func(string), warn func(string)) error {
	flt, err := cacheFilter(spec.OrFilters(patterns))
	if err != nil {
		return err
	}
	gone, err := PurgeCache(c, flt.Match, warn)
	for _, s := range gone {
		removed(s)
	}
	return cacheErr(err)
}

// ListEvents writes to w what `perf list sdt [[GROUP:]EVENT]` prints: the
// SDT events of the binary exe, else ("") of every binary in perf's
// build-id cache, that arg's globs select.
func ListEvents(w io.Writer, exe string, c *perfcache.Cache, arg string, warn func(string)) error {
	group, event := "", ""
	if arg != "" {
		if g, e, ok := strings.Cut(arg, ":"); ok {
			group, event = g, e
		} else {
			event = arg
		}
	}
	var evs []Listed
	var err error
	if exe != "" {
		evs, err = FileEvents(exe, group, event)
	} else if evs, err = CachedEvents(c, group, event, warn); errors.Is(err, syscall.ENOENT) {
		err = nil
	}
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w) // one write, as perf's stdio makes
	for _, l := range Lines(evs) {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
