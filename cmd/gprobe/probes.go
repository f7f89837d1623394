package main

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/spec"
	"github.com/gprobe/gprobe/resolve/target"
)

// Installing, listing and deleting probe events, with perf probe
// 6.1's behaviour and messages. The hint after "Added new event(s):" is
// perf's own text ("perf record -e GROUP:EVENT -aR sleep 1"): the events are
// ordinary tracefs events that perf users record with perf.

func init() {
	optionHelp["-a"] = "    -a, --add <[EVENT=]FUNC[@SRC][+OFF|%return|:RL|;PT]|SRC:AL|SRC;PT [[NAME=]ARG ...]>\n" +
		"                          probe point definition, where\n" +
		"\t\tGROUP:\tGroup name (optional)\n" +
		"\t\tEVENT:\tEvent name\n" +
		"\t\tFUNC:\tFunction name\n" +
		"\t\tOFF:\tOffset from function entry (in byte)\n" +
		"\t\t%return:\tPut the probe at function return\n" +
		"\t\tSRC:\tSource code path\n" +
		"\t\tRL:\tRelative line number from function entry.\n" +
		"\t\tAL:\tAbsolute line number in file.\n" +
		"\t\tPT:\tLazy expression of line code.\n" +
		"\t\tARG:\tProbe argument (local variable name or\n" +
		"\t\t\tkprobe-tracer argument format.)\n"
}

const (
	addTrailer  = "  Error: Failed to add events."
	delTrailer  = "  Error: Failed to delete events."
	listTrailer = "  Error: Failed to show event list."
)

func (a *app) addCommand() *cli.Command {
	return &cli.Command{
		Name:      "add",
		Usage:     "add probe events to tracefs (same as -a); raw p:/r: definitions and --from FILE install lines printed by -D",
		ArgsUsage: "PROBEDEF... | 'p:GROUP/EVENT PLACE [ARG...]'...",
		Flags: append(append(targetFlags(),
			&cli.StringFlag{Name: "from", Usage: "install the definitions in `FILE` (one kprobe_events/uprobe_events line each, as -D prints them; - for stdin)"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "do not install anything"},
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "allow duplicate event names"},
			&cli.IntFlag{Name: "max-probes", Value: 128, Usage: "maximum probe points per event"},
			&cli.IntFlag{Name: "maxactive", Usage: "kernel return probes get `N` instances for concurrent calls (r<N>:, f<N>:, 1 to 4096; perf 6.1 has no option for it)"},
		), dynamicFlags()...),
		Action: func(c *cli.Context) error {
			defs := c.Args().Slice()
			if c.String("from") == "" && len(defs) == 0 {
				fmt.Fprintln(a.stderr, "gprobe add: nothing to add (give PROBEDEF arguments or --from FILE)")
				return a.set(exitUsage)
			}
			if c.IsSet("maxactive") {
				if err := install.ValidMaxActive(c.Int("maxactive")); err != nil {
					fmt.Fprintf(a.stderr, "gprobe add: %v\n", err)
					return a.set(exitUsage)
				}
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
		Flags:     append(targetFlags(), &cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "do not delete anything"}),
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				fmt.Fprintln(a.stderr, "gprobe del: give the [GROUP:]EVENT patterns to delete")
				return a.set(exitUsage)
			}
			return a.set(a.delProbes(c, c.Args().Slice()))
		},
	}
}

func (a *app) listCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list probe events (same as -l)",
		ArgsUsage: "[[GROUP:]EVENT]",
		Flags:     targetFlags(),
		Action: func(c *cli.Context) error {
			return a.set(a.listProbes(c, c.Args().Slice()))
		},
	}
}

// rootProbes handles the root flags -a, -d, -l and a bare PROBEDEF (the
// remaining arguments joined into one definition, as perf does).
func (a *app) rootProbes(c *cli.Context) int {
	switch {
	case c.IsSet("del"):
		return a.delProbes(c, c.StringSlice("del"))
	case c.IsSet("list"):
		return a.listProbes(c, c.Args().Slice())
	case c.IsSet("add"):
		return a.addProbes(c, c.StringSlice("add"), "", "-a")
	}
	return a.addProbes(c, []string{strings.Join(c.Args().Slice(), " ")}, "", "")
}

// rawDef tells a definition line ("p:GRP/EV PLACE ...", "r:EV PLACE",
// "r16:...", "f:EV FUNC", "f8:EV FUNC%return", "t:EV TRACEPOINT",
// "e:EV SYSTEM.EVENT", a user event's "u:NAME FIELDS") from a perf
// PROBEDEF. A PROBEDEF's first word never looks like that unless it names
// a function "p", "r", "f", "t", "e" or "u" with a line number ("p:10"),
// which stays a PROBEDEF.
var rawDef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([prf][0-9]*|[teu]):[^=\s]*\s`) })
var funcLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[prfteu]:[0-9]+\s`) })

func isRawDef(s string) bool {
	s = strings.TrimSpace(s) + " "
	return rawDef().MatchString(s) && !funcLine().MatchString(s)
}

func (a *app) quiet(c *cli.Context) bool { return boolean(c, "quiet") }

func (a *app) errf(c *cli.Context, format string, args ...any) {
	if !a.quiet(c) {
		fmt.Fprintf(a.stderr, format, args...)
	}
}

// exitErrno is perf's exit status for -errno.
func exitErrno(err error) int {
	var no syscall.Errno
	if errors.As(err, &no) && no > 0 && no < 256 {
		return 256 - int(no)
	}
	switch {
	case errors.Is(err, tracefs.ErrPermission), errors.Is(err, install.ErrHiddenAddresses):
		return 256 - int(syscall.EACCES)
	case errors.Is(err, tracefs.ErrNoKprobes), errors.Is(err, tracefs.ErrNoUprobes), errors.Is(err, tracefs.ErrNoKind),
		errors.Is(err, tracefs.ErrNoTracefs), errors.Is(err, tracefs.ErrNotFound):
		return exitENOENT
	case errors.Is(err, tracefs.ErrExist):
		return 256 - int(syscall.EEXIST)
	case errors.Is(err, tracefs.ErrBusy):
		return 256 - int(syscall.EBUSY)
	case errors.Is(err, install.ErrTooManyNames):
		return 256 - int(syscall.ERANGE)
	}
	return exitEINVAL
}

// addProbes implements -a, a bare PROBEDEF and `add`: resolve the
// PROBEDEFs, read the raw lines, then let emit/install name, check and
// write them all or none, and print perf's report.
func (a *app) addProbes(c *cli.Context, defs []string, from, option string) int {
	type item struct {
		spec *spec.Probe // nil: raw lines
		raw  []string
	}
	var items []item
	var dynamic []string // --fprobe, --tracepoint, --event definitions
	for _, d := range defs {
		if isRawDef(d) {
			items = append(items, item{raw: []string{d}})
			continue
		}
		if dynamicMode(c) {
			dynamic = append(dynamic, d)
			continue
		}
		p, err := spec.ParseProbeOpts(d, spec.Options{EntryValues: str(c, "exec") == ""})
		if err != nil {
			if option == "" { // bare PROBEDEF: perf's "Command Parse Error"
				var se *spec.SyntaxError
				if errors.As(err, &se) && se.Perf != "" {
					a.errf(c, "%s\n", se.Perf)
				} else {
					a.errf(c, "%v\n", err)
				}
				a.errf(c, "  Error: Command Parse Error.\n")
				return exitEINVAL
			}
			return a.parseFailed(err, option)
		}
		items = append(items, item{spec: p})
	}
	fs, err := tracefs.Open()
	if err != nil {
		a.errf(c, "%v\n%s\n", err, addTrailer)
		return exitErrno(err)
	}
	feat := fs.Features()
	installed, err := fs.List()
	if err != nil {
		a.errf(c, "%v\n", err)
		return exitErrno(err)
	}
	if from != "" {
		lines, err := install.ReadDefinitions(from)
		if err != nil {
			a.errf(c, "%v\n%s\n", err, addTrailer)
			return exitErrno(err)
		}
		items = append(items, item{raw: lines})
	}
	opts := install.Options{Force: boolean(c, "force"), Features: feat, BTF: target.RunningBTF(), EventFields: fs.EventFields}
	if c.IsSet("maxactive") {
		opts.MaxActive = c.Int("maxactive")
	}
	// Raw lines are read (and checked) first, consecutive ones together so
	// that lines naming one event form one request; then the PROBEDEFs are
	// resolved against one target.
	var reqs, resolved []*install.Request
	var specs []*spec.Probe
	for i := 0; i < len(items); i++ {
		if it := items[i]; it.spec != nil {
			var args []string
			for _, x := range it.spec.Args {
				args = append(args, x.String())
			}
			r := &install.Request{Point: it.spec.Point.String(), Args: args}
			reqs, resolved, specs = append(reqs, r), append(resolved, r), append(specs, it.spec)
			continue
		}
		var lines []string
		for ; i < len(items) && items[i].spec == nil; i++ {
			lines = append(lines, items[i].raw...)
		}
		i--
		rs, err := install.RawRequests(fs, lines, opts)
		if err != nil {
			if errors.Is(err, tracefs.ErrNoKprobes) || errors.Is(err, tracefs.ErrNoUprobes) || errors.Is(err, tracefs.ErrNoKind) {
				a.errf(c, "%v\n", err) // one line says it all
			} else {
				a.errf(c, "%v\n%s\n", err, addTrailer)
			}
			return exitErrno(err)
		}
		reqs = append(reqs, rs...)
	}
	if len(specs) > 0 {
		if st := a.resolveRequests(c, specs, resolved, opts); st != exitOK {
			return st
		}
	}
	if len(dynamic) > 0 {
		rs, st := a.resolveDynamic(c, dynamic, addTrailer)
		if st != exitOK {
			return st
		}
		reqs = append(reqs, rs...)
	}
	// The kernel must have the events file for each kind used.
	for _, r := range reqs {
		for _, p := range r.Probes {
			if err := fs.Check(p.Kind); err != nil {
				a.errf(c, "%v\n", err)
				return exitErrno(err)
			}
		}
	}
	plan, err := install.Plan(reqs, installed, opts)
	if err != nil {
		var ee *install.ExistsError
		switch {
		case errors.As(err, &ee):
			a.errf(c, "Error: event \"%s\" already exists.\n"+
				" Hint: Remove existing event by 'perf probe -d'\n"+
				"       or force duplicates by 'perf probe -f'\n"+
				"       or set 'force=yes' in BPF source.\n%s\n", ee.Name, addTrailer)
		case errors.Is(err, install.ErrTooManyNames):
			a.errf(c, "Too many events are on the same function.\n%s\n", addTrailer)
		default:
			a.errf(c, "%v\n%s\n", err, addTrailer)
		}
		return exitErrno(err)
	}
	if !boolean(c, "dry-run") {
		if err := install.Write(fs, plan); err != nil {
			a.errf(c, "%v\n%s\n", err, addTrailer)
			return exitErrno(err)
		}
	}
	a.reportAdded(c, plan)
	return exitOK
}

// resolveRequests resolves the perf PROBEDEFs into reqs, as -D does.
func (a *app) resolveRequests(c *cli.Context, specs []*spec.Probe, reqs []*install.Request, opts install.Options) int {
	t, err := a.openTarget(c, true)
	if err != nil {
		a.errf(c, "%v\n%s\n", err, addTrailer)
		return exitENOENT
	}
	defer t.Close()
	r, err := t.Resolver(a.tune(resolve.Options{
		NoInlines:    boolean(c, "no-inlines"),
		MaxProbes:    maxProbes(c),
		Features:     opts.Features,
		Warn:         a.warnFunc(c),
		SourcePrefix: str(c, "source"),
		ReturnInsn:   boolean(c, "ret-insn"),
	}))
	if err != nil {
		a.errf(c, "%v\n%s\n", err, addTrailer)
		return exitENOENT
	}
	for i, q := range specs {
		ps, err := r.Probes(q)
		if err != nil {
			a.unfetched(c, t)
			return a.resolveFailed(c, err, addTrailer)
		}
		reqs[i].Probes = ps
		if t.User {
			reqs[i].Module = t.Path
		} else if m := str(c, "module"); m != "" {
			reqs[i].Module = m
		}
	}
	return exitOK
}

func maxProbes(c *cli.Context) int {
	for _, x := range c.Lineage() {
		if x.IsSet("max-probes") {
			return x.Int("max-probes")
		}
	}
	return 128
}

// reportAdded prints perf's "Added new event(s):" block.
func (a *app) reportAdded(c *cli.Context, plan []install.Event) {
	if len(plan) == 0 || a.quiet(c) {
		return
	}
	s := ":"
	if len(plan) > 1 {
		s = "s:"
	}
	fmt.Fprintf(a.stderr, "Added new event%s\n", s)
	points := target.NewPoints(str(c, "vmlinux"))
	for _, ev := range plan {
		fmt.Fprintln(a.stderr, install.Added(ev, points.PointOf))
	}
	last := plan[len(plan)-1].Probe
	fmt.Fprintf(a.stderr, "\nYou can now use it in all perf tools, such as:\n\n")
	fmt.Fprintf(a.stderr, "\tperf record -e %s:%s -aR sleep 1\n\n", last.Group, last.Event)
}

// listProbes implements -l [FILTER]: every installed kprobe and uprobe
// event, as perf lists them (kprobes first, each file sorted by its text).
func (a *app) listProbes(c *cli.Context, filters []string) int {
	pattern := "*"
	if len(filters) > 0 {
		pattern = strings.Join(filters, " ")
	}
	flt, fs, events, st := a.installedEvents(c, pattern, listTrailer)
	if fs == nil {
		return st
	}
	points := target.NewPoints(str(c, "vmlinux"))
	for _, k := range probe.Kinds {
		var evs []tracefs.Event
		seen := map[string]bool{}
		for _, e := range events {
			if e.Kind == k && e.Probe != nil && !seen[e.Line] && matchEvent(flt, e.Group, e.Name) {
				seen[e.Line] = true
				evs = append(evs, e)
			}
		}
		sort.Slice(evs, func(i, j int) bool { return evs[i].Line < evs[j].Line })
		for _, e := range evs {
			fmt.Fprintln(a.stdout, install.Describe(e.Probe, points.PointOf))
		}
	}
	return exitOK
}

// installedEvents parses a -l/-d filter and reads the installed events; on
// failure it prints the reason and the trailer and returns a nil FS and the
// exit status.
func (a *app) installedEvents(c *cli.Context, pattern, trailer string) (*resolve.Filter, *tracefs.FS, []tracefs.Event, int) {
	flt, err := resolve.ParseFilter(pattern)
	if err != nil {
		a.errf(c, "Filter parse error at %s\n%s\n", pattern, trailer)
		return nil, nil, nil, exitEINVAL
	}
	fs, err := tracefs.Open()
	if err == nil {
		var events []tracefs.Event
		if events, err = fs.List(); err == nil {
			return flt, fs, events, exitOK
		}
	}
	a.errf(c, "%v\n%s\n", err, trailer)
	return nil, nil, nil, exitErrno(err)
}

// matchEvent is perf's filter on an event: its name alone or GROUP:EVENT.
func matchEvent(f *resolve.Filter, group, event string) bool {
	return f.Match(event) || f.Match(group+":"+event)
}

// delFilter combines several -d patterns the way perf's strfilter__or
// prints them: "a|b", "(a|b)|c", "(a|b)|(!c)".
func delFilter(patterns []string) string {
	s := ""
	binary := false
	for i, p := range patterns {
		pb := strings.ContainsAny(p, "|&!")
		if pb {
			p = "(" + p + ")"
		}
		if i == 0 {
			s, binary = patterns[0], pb
			continue
		}
		if binary {
			s = "(" + s + ")"
		}
		s += "|" + p
		binary = true
	}
	return s
}

// delProbes implements -d: every event whose name or GROUP:EVENT matches,
// kprobes first, each sorted; enabled events are disabled first.
func (a *app) delProbes(c *cli.Context, patterns []string) int {
	pattern := delFilter(patterns)
	flt, fs, events, st := a.installedEvents(c, pattern, delTrailer)
	if fs == nil {
		return st
	}
	match := func(g, e string) bool { return matchEvent(flt, g, e) }
	hit := false
	for _, k := range probe.Kinds {
		evs := install.Matching(events, k, match)
		for _, e := range evs {
			a.errf(c, "Removed event: %s:%s\n", e.Group, e.Name)
		}
		hit = hit || len(evs) > 0
		if boolean(c, "dry-run") {
			continue
		}
		for _, e := range evs {
			if err := install.Delete(fs, k, e.Group, e.Name); err != nil {
				a.errf(c, "Failed to delete event: %v\n%s\n", err, delTrailer)
				return exitErrno(err)
			}
		}
	}
	if !hit {
		a.errf(c, "\"%s\" does not hit any event.\n%s\n", pattern, delTrailer)
		return exitENOENT
	}
	return exitOK
}
