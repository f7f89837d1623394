package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/resolve/perfcache"
	"github.com/gprobe/gprobe/resolve/sdt"
	"github.com/gprobe/gprobe/resolve/spec"
)

// SDT markers and perf's probe cache. The SDT points of -D, -a, add and a
// bare PROBEDEF ("%[GROUP:]EVENT", "sdt_PROVIDER:EVENT") are answered
// from the marked binary (-x) or from perf's build-id cache, as perf
// answers them: no kernel or debug information is opened for them. -l and
// -d with --cache list and purge perf's probe cache; `list --sdt` lists
// markers as `perf list sdt` does.

const exitE2BIG = 256 - int(syscall.E2BIG)

func sdtFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "cache", Usage: "with -l: list perf's probe cache (~/.debug: the SDT markers of the binaries probed with -x or added by perf); with -d: remove events from it"},
	}
}

// buildIDCache is perf's build-id cache gprobe shares: $HOME/.debug.
func buildIDCache() *perfcache.Cache { return perfcache.Default() }

// sdtProbes resolves the SDT points among specs (by index) and checks
// each probe as the kernel's grammar reads it for the marked binary's
// architecture; it prints perf's messages and returns a status on failure.
func (a *app) sdtProbes(c *cli.Context, specs []*spec.Probe, feat probedef.Features, known bool, trailer string) (map[int][]probe.Probe, int) {
	out := map[int][]probe.Probe{}
	r := &sdt.Resolver{
		Cache:       buildIDCache(),
		Remember:    true,
		Options:     sdt.Options{Immediates: feat.Immediates},
		MaxProbes:   maxProbes(c),
		Definitions: &probedef.Options{Features: &feat},
	}
	if boolean(c, "verbose") {
		r.Warn = a.warnFunc(c)
	}
	for i, p := range specs {
		if !p.Point.SDT {
			continue
		}
		ps, err := r.Probes(sdt.PointOf(&p.Point), str(c, "exec"))
		if err != nil {
			if boolean(c, "verbose") || !errors.Is(err, sdt.ErrNotFound) && !errors.Is(err, sdt.ErrTooMany) {
				a.errf(c, "%v\n", err)
			}
			a.errf(c, "%s\n", trailer)
			if errors.Is(err, sdt.ErrTooMany) {
				return nil, exitE2BIG
			}
			return nil, exitENOENT
		}
		for _, q := range ps {
			if err := install.CheckDefinition(q, archOf(q.Target.Path), feat, known); err != nil {
				a.errf(c, "The kernel would refuse this definition: %v\n%s\n", err, trailer)
				return nil, exitEINVAL
			}
		}
		out[i] = ps
	}
	return out, exitOK
}

// archOf is the architecture of the binary at path (this machine's when
// it cannot tell).
func archOf(path string) arch.Arch {
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		if a, err := arch.ForMachine(f.Machine); err == nil {
			return a
		}
	}
	a, _ := arch.Host()
	return a
}

// listCache implements -l --cache [FILTER]: perf's probe_cache__show_all_caches.
func (a *app) listCache(c *cli.Context, filters []string) int {
	pattern := "*"
	if len(filters) > 0 {
		pattern = strings.Join(filters, " ")
	}
	flt, err := spec.ParseFilter(pattern)
	if err != nil {
		a.errf(c, "Filter parse error at %s\n%s\n", pattern, listTrailer)
		return exitEINVAL
	}
	lines, err := sdt.CacheListing(buildIDCache(), flt.Match, a.verboseWarn(c))
	if err != nil && !errors.Is(err, syscall.ENOENT) {
		a.errf(c, "perf's build-id cache: %v\n%s\n", err, listTrailer)
		return exitEINVAL
	}
	for _, l := range lines {
		fmt.Fprintln(a.stdout, l)
	}
	return exitOK
}

// delCache implements -d --cache PATTERN: perf's del_perf_probe_caches
// removes the matching entries (GROUP:EVENT, or the command of an entry
// without a name) from every binary's probe cache.
func (a *app) delCache(c *cli.Context, patterns []string) int {
	pattern := spec.OrFilters(patterns)
	flt, err := spec.ParseFilter(pattern)
	if err != nil {
		a.errf(c, "Filter parse error at %s\n%s\n", pattern, delTrailer)
		return exitEINVAL
	}
	removed, err := sdt.PurgeCache(buildIDCache(), flt.Match, a.verboseWarn(c))
	for _, spec := range removed {
		a.errf(c, "Removed cached event: %s\n", spec)
	}
	if err != nil && !errors.Is(err, syscall.ENOENT) {
		a.errf(c, "perf's build-id cache: %v\n%s\n", err, delTrailer)
		return exitEINVAL
	}
	return exitOK
}

// listSDT implements `list --sdt [[GROUP:]EVENT]`: the SDT events of the
// -x binary, else of every binary in perf's build-id cache, as `perf list
// sdt` prints them.
func (a *app) listSDT(c *cli.Context, args []string) int {
	group, event := "", ""
	if len(args) > 0 {
		g, e, ok := strings.Cut(args[0], ":")
		if ok {
			group, event = g, e
		} else {
			event = args[0]
		}
	}
	var evs []sdt.Listed
	var err error
	if exe := str(c, "exec"); exe != "" {
		evs, err = sdt.FileEvents(exe, group, event)
	} else {
		evs, err = sdt.CachedEvents(buildIDCache(), group, event, a.verboseWarn(c))
		if errors.Is(err, syscall.ENOENT) {
			err = nil
		}
	}
	if err != nil {
		a.errf(c, "%v\n", err)
		return exitENOENT
	}
	for _, l := range sdt.Lines(evs) {
		fmt.Fprintln(a.stdout, l)
	}
	return exitOK
}

// verboseWarn prints what the cache readers skip, with -v.
func (a *app) verboseWarn(c *cli.Context) func(string) {
	if !boolean(c, "verbose") {
		return nil
	}
	return a.warnFunc(c)
}
