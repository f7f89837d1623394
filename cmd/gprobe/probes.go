package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/perfprobe"
	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/spec"
	"github.com/gprobe/gprobe/resolve/target"
)

// Installing, listing and deleting probe events, with perf probe
// 6.1's behaviour and messages. The hint after "Added new event(s):" is
// perf's own text ("perf record -e GROUP:EVENT -aR sleep 1"): the events are
// ordinary tracefs events that perf users record with perf.

func (a *app) addCommand() *cli.Command {
	return &cli.Command{
		Name:      "add",
		Usage:     "add probe events to tracefs (same as -a); raw p:/r: definitions and --from FILE install lines printed by -D",
		ArgsUsage: "PROBEDEF... | 'p:GROUP/EVENT PLACE [ARG...]'...",
		Flags:     perfprobe.AddFlags(),
		Action: func(c *cli.Context) error {
			defs := c.Args().Slice()
			if err := perfprobe.CheckAdd(defs, c.String("from"), c.Int("maxactive"), c.IsSet("maxactive")); err != nil {
				fmt.Fprintf(a.stderr, "gprobe add: %v\n", err)
				return a.set(exitUsage)
			}
			return a.set(a.addProbes(c, defs, c.String("from"), "-a"))
		},
	}
}

func (a *app) delCommand() *cli.Command {
	return &cli.Command{
		Name:      "del",
		Usage:     "delete probe events (same as -d); globs like 'probe:*' and 'probe_prog:work*'",
		ArgsUsage: "[GROUP:]EVENT...",
		Flags:     perfprobe.DelFlags(),
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				fmt.Fprintln(a.stderr, "gprobe del: give the [GROUP:]EVENT patterns to delete")
				return a.set(exitUsage)
			}
			return a.set(a.delProbes(c, spec.OrFilters(c.Args().Slice())))
		},
	}
}

func (a *app) listCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list probe events (same as -l); --sdt: the SDT markers of -x BINARY or of perf's build-id cache",
		ArgsUsage: "[[GROUP:]EVENT]",
		Flags:     perfprobe.ListFlags(),
		Action: func(c *cli.Context) error {
			if boolean(c, "sdt") {
				return a.set(a.listSDT(c, c.Args().Slice()))
			}
			pattern := perfprobe.DefaultListFilter
			if c.NArg() > 0 {
				pattern = spec.OrFilters(c.Args().Slice())
			}
			return a.set(a.listProbes(c, pattern))
		},
	}
}

// rootProbes handles the root flags -a, -d, -l and a bare PROBEDEF (the
// remaining arguments joined into one definition, as perf does, after
// those of -a).
func (a *app) rootProbes(c *cli.Context) int {
	switch {
	case c.IsSet("del"):
		return a.delProbes(c, a.perf.Filter(""))
	case c.IsSet("list"):
		return a.listProbes(c, a.perf.Filter(perfprobe.DefaultListFilter))
	}
	defs := c.StringSlice("add")
	if args := c.Args().Slice(); len(args) > 0 {
		// An absolute path first names the target (the parse checked that
		// a definition follows it).
		a.firstPath.exec, a.firstPath.module, args = a.perf.FirstTarget(args)
		defs = append(defs, strings.Join(args, " "))
	}
	option := "-a"
	if !c.IsSet("add") {
		option = ""
	}
	return a.addProbes(c, defs, "", option)
}

func (a *app) quiet(c *cli.Context) bool { return boolean(c, "quiet") }

func (a *app) errf(c *cli.Context, format string, args ...any) {
	if !a.quiet(c) {
		fmt.Fprintf(a.stderr, format, args...)
	}
}

// exitErrno is perf's exit status for -errno (install.Errno).
func exitErrno(err error) int { return 256 - int(install.Errno(err)) }

// addProbes implements -a, a bare PROBEDEF and `add`: the definitions are
// read here (perf PROBEDEFs), resolved when install.Add asks, and
// installed by it, all or none; then perf's report.
func (a *app) addProbes(c *cli.Context, defs []string, from, option string) int {
	// A bare PROBEDEF that does not parse is perf's "Command Parse Error".
	items, specs, dynamic, err := perfprobe.AddDefs(defs, from, dynamicMode(c), a.target(c).ParseOptions())
	if err != nil && option == "" {
		a.errf(c, "%s\n  Error: Command Parse Error.\n", perfprobe.Message(err))
		return exitEINVAL
	} else if err != nil {
		return a.parseFailed(err, option)
	}
	fs, err := tracefs.Open()
	if err != nil {
		a.errf(c, "%v\n%s\n", err, perfprobe.AddTrailer)
		return exitErrno(err)
	}
	// perf writes the definitions from the target's mount namespace, where
	// the kernel resolves their paths.
	o := install.AddOptions{DryRun: boolean(c, "dry-run"), MountNS: a.target(c).MountNS(),
		Options: install.Options{Force: boolean(c, "force"), Features: fs.Features(), BTF: target.RunningBTF(), EventFields: fs.EventFields,
			Warn: a.settings(c).Warn}}
	if c.IsSet("maxactive") {
		o.MaxActive = c.Int("maxactive")
	}
	o.Resolve = func(reqs []*install.Request) error {
		if len(specs) > 0 {
			if st := a.resolveRequests(c, specs, reqs[:len(specs)], o.Options); st != exitOK {
				return reported(st)
			}
		}
		if len(dynamic) > 0 {
			if st := a.resolveDynamic(c, dynamic, perfprobe.AddTrailer, reqs[len(specs):]); st != exitOK {
				return reported(st)
			}
		}
		return nil
	}
	plan, err := install.Add(fs, items, o)
	if err != nil {
		return a.addFailed(c, err)
	}
	if len(plan) > 0 && !a.quiet(c) {
		perfprobe.Added(a.stderr, plan, a.target(c).Points().PointOf)
	}
	return exitOK
}

// reported is a failure already reported to the user, and its exit status.
type reported int

func (r reported) Error() string { return fmt.Sprintf("exit status %d", int(r)) }

// addFailed reports install.Add's failure as perf does, and returns the
// exit status.
func (a *app) addFailed(c *cli.Context, err error) int {
	var st reported
	if errors.As(err, &st) {
		return int(st)
	}
	text, status, reason := perfprobe.AddFailure(err)
	if reason {
		text = a.withReason(c, text, status)
	}
	a.errf(c, "%s\n", text)
	return status
}

// resolveRequests resolves the perf PROBEDEFs into reqs, as -D does (SDT
// points from the marked binaries or perf's probe cache); install.Add checks.
func (a *app) resolveRequests(c *cli.Context, specs []*spec.Probe, reqs []*install.Request, opts install.Options) int {
	probes, st := a.sdtProbes(c, specs, opts.Features, true, perfprobe.AddTrailer)
	for i, ps := range probes {
		reqs[i].Probes, reqs[i].Module = ps, ps[0].Target.Path
	}
	if st != exitOK || len(probes) == len(specs) {
		return st
	}
	o := a.resolveOptions(c, true)
	o.Features = opts.Features
	a.runningBlacklist(c, &o)
	r, err := a.open(c, o)
	if err != nil {
		a.errf(c, "%v\n%s\n", err, perfprobe.AddTrailer)
		return exitENOENT
	}
	defer r.Close()
	if _, err := resolve.Missing(r, specs, probes); err != nil {
		a.unfetched(c, r)
		return a.resolveFailed(c, nil, err, perfprobe.AddTrailer)
	}
	module := a.target(c).ModulePath()
	if t := r.Target(); t.User {
		module = t.Path
	}
	for i := range specs {
		if reqs[i].Probes == nil {
			reqs[i].Probes, reqs[i].Module = probes[i], module
		}
	}
	return exitOK
}

// listProbes implements -l [FILTER]: every installed kprobe and uprobe
// event, as perf lists them (kprobes first, each file sorted by its text).
func (a *app) listProbes(c *cli.Context, pattern string) int {
	if boolean(c, "cache") {
		return a.listCache(c, pattern)
	}
	flt, fs, events, st := a.installedEvents(c, pattern, perfprobe.ListTrailer)
	if fs == nil {
		return st
	}
	for _, l := range install.List(events, flt.MatchEvent, a.target(c).Points().PointOf) {
		fmt.Fprintln(a.stdout, l)
	}
	return exitOK
}

// installedEvents parses a -l/-d filter and reads the installed events; on
// failure it prints the reason and the trailer and returns a nil FS and the
// exit status.
func (a *app) installedEvents(c *cli.Context, pattern, trailer string) (*spec.Filter, *tracefs.FS, []tracefs.Event, int) {
	flt, err := spec.ParseFilter(pattern)
	if err != nil {
		a.errf(c, "%v\n%s\n", err, trailer)
		return nil, nil, nil, exitEINVAL
	}
	fs, events, err := install.Running()
	if err != nil {
		a.errf(c, "%v\n%s\n", err, trailer)
		return nil, nil, nil, exitErrno(err)
	}
	return flt, fs, events, exitOK
}

// delProbes implements -d: every event whose name or GROUP:EVENT matches,
// kprobes first, each sorted; enabled events are disabled first.
func (a *app) delProbes(c *cli.Context, pattern string) int {
	if boolean(c, "cache") {
		return a.delCache(c, pattern)
	}
	flt, fs, events, st := a.installedEvents(c, pattern, perfprobe.DelTrailer)
	if fs == nil {
		return st
	}
	if a.verbose(c) > 0 {
		fmt.Fprintf(a.stderr, "Delete filter: '%s'\n", flt)
	}
	hit, err := install.Remove(fs, events, flt.MatchEvent, boolean(c, "dry-run"), func(e tracefs.Event) {
		a.errf(c, "Removed event: %s:%s\n", e.Group, e.Name)
	})
	if err != nil || !hit {
		text, status := perfprobe.DeleteFailure(err, flt.String())
		a.errf(c, "%s\n", a.withReason(c, text, status))
		return status
	}
	return exitOK
}
