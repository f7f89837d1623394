package main

import (
	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/internal/perfprobe"
	"github.com/gprobe/gprobe/resolve"
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

// buildIDCache is perf's build-id cache gprobe shares: $HOME/.debug.
func buildIDCache() *perfcache.Cache { return perfcache.Default() }

// sdtProbes resolves the SDT points among specs (by index) and checks
// each probe as the kernel's grammar reads it for the marked binary's
// architecture; it prints perf's messages and returns a status on failure.
func (a *app) sdtProbes(c *cli.Context, specs []*spec.Probe, feat probedef.Features, known bool, trailer string) (map[int][]probe.Probe, int) {
	set := a.settings(c)
	r := &sdt.Resolver{Cache: buildIDCache(), Remember: true, Options: sdt.Options{Immediates: feat.Immediates},
		MaxProbes: set.MaxProbes, Definitions: &probedef.Options{Features: &feat}, Warn: set.VerboseWarn()}
	out, err := resolve.SDTChecked(r, specs, str(c, "exec"), feat, known)
	if err != nil {
		text, status := perfprobe.SDTFailure(err, boolean(c, "verbose"), trailer)
		a.errf(c, "%s\n", text)
		return nil, status
	}
	return out, exitOK
}

// listCache implements -l --cache [FILTER]: perf's probe_cache__show_all_caches.
func (a *app) listCache(c *cli.Context, pattern string) int {
	if err := sdt.ShowCache(a.stdout, buildIDCache(), []string{pattern}, a.settings(c).VerboseWarn()); err != nil {
		a.errf(c, "%v\n%s\n", err, perfprobe.ListTrailer)
		return exitEINVAL
	}
	return exitOK
}

// delCache implements -d --cache PATTERN: perf's del_perf_probe_caches.
func (a *app) delCache(c *cli.Context, pattern string) int {
	removed := func(spec string) { a.errf(c, "Removed cached event: %s\n", spec) }
	if err := sdt.DeleteCache(buildIDCache(), []string{pattern}, removed, a.settings(c).VerboseWarn()); err != nil {
		a.errf(c, "%v\n%s\n", err, perfprobe.DelTrailer)
		return exitEINVAL
	}
	return exitOK
}

// listSDT implements `list --sdt [[GROUP:]EVENT]` as `perf list sdt`.
func (a *app) listSDT(c *cli.Context, args []string) int {
	var arg string
	if len(args) > 0 {
		arg = args[0]
	}
	if err := sdt.ListEvents(a.stdout, str(c, "exec"), buildIDCache(), arg, a.settings(c).VerboseWarn()); err != nil {
		a.errf(c, "%v\n", err)
		return exitENOENT
	}
	return exitOK
}
