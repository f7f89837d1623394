package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/spec"
)

// Installing, listing and deleting probe events (issue 4), with perf probe
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
		Flags: append(targetFlags(),
			&cli.StringFlag{Name: "from", Usage: "install the definitions in `FILE` (one kprobe_events/uprobe_events line each, as -D prints them; - for stdin)"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "do not install anything"},
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "allow duplicate event names"},
			&cli.IntFlag{Name: "max-probes", Value: 128, Usage: "maximum probe points per event"},
		),
		Action: func(c *cli.Context) error {
			defs := c.Args().Slice()
			if c.String("from") == "" && len(defs) == 0 {
				fmt.Fprintln(a.stderr, "gprobe add: nothing to add (give PROBEDEF arguments or --from FILE)")
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

// rawDef tells a kprobe_events/uprobe_events line ("p:GRP/EV PLACE ...",
// "r:EV PLACE", "r16:...") from a perf PROBEDEF. A PROBEDEF's first word
// never looks like that unless it names a function "p" or "r" with a line
// number ("p:10"), which stays a PROBEDEF.
var rawDef = regexp.MustCompile(`^[pr][0-9]*:[^=\s]*\s`)
var funcLine = regexp.MustCompile(`^[pr]:[0-9]+\s`)

func isRawDef(s string) bool {
	s = strings.TrimSpace(s) + " "
	return rawDef.MatchString(s) && !funcLine.MatchString(s)
}

// request is one perf probe event ("pev"): what one definition asked for
// and the trace events it became.
type request struct {
	spec   *spec.Probe     // nil for a raw definition
	text   string          // a raw definition as given, before checking
	raw    []*probedef.Def // checked raw definitions (one per line)
	probes []probe.Probe
	module string // " in MODULE": the uprobe binary or kernel module
}

// install is a trace event about to be written.
type install struct {
	req  *request
	p    probe.Probe
	kind probedef.Kind
	line string
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
	case errors.Is(err, tracefs.ErrPermission), errors.Is(err, probedef.ErrHiddenAddresses):
		return 256 - int(syscall.EACCES)
	case errors.Is(err, tracefs.ErrNoKprobes), errors.Is(err, tracefs.ErrNoUprobes),
		errors.Is(err, tracefs.ErrNoTracefs), errors.Is(err, tracefs.ErrNotFound):
		return exitENOENT
	case errors.Is(err, tracefs.ErrExist):
		return 256 - int(syscall.EEXIST)
	case errors.Is(err, tracefs.ErrBusy):
		return 256 - int(syscall.EBUSY)
	}
	return exitEINVAL
}

// addProbes implements -a, a bare PROBEDEF and `add`: resolve everything,
// check every line against the kernel's grammar, name the events against
// what is installed, then write them all or none.
func (a *app) addProbes(c *cli.Context, defs []string, from, option string) int {
	var reqs []*request
	var specs []*request
	for _, d := range defs {
		if isRawDef(d) {
			reqs = append(reqs, &request{text: d})
			continue
		}
		p, err := spec.ParseProbe(d)
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
		r := &request{spec: p}
		reqs = append(reqs, r)
		specs = append(specs, r)
	}
	fs, err := tracefs.Open()
	if err != nil {
		a.errf(c, "%v\n%s\n", err, addTrailer)
		return exitErrno(err)
	}
	feat := fs.Features()
	events, err := fs.List()
	if err != nil {
		a.errf(c, "%v\n", err)
		return exitErrno(err)
	}
	if from != "" {
		lines, err := readDefinitions(from)
		if err != nil {
			a.errf(c, "%v\n%s\n", err, addTrailer)
			return exitErrno(err)
		}
		for _, l := range lines {
			reqs = append(reqs, &request{text: l})
		}
	}
	// Raw definitions: check them now; consecutive lines naming the same
	// event are one request (the several addresses of one probe, as -D
	// prints them), so later ones may take _N suffixes like perf's.
	var merged []*request
	for _, r := range reqs {
		if r.spec != nil {
			merged = append(merged, r)
			continue
		}
		d, err := a.checkRaw(r.text, fs, feat)
		if err != nil {
			if errors.Is(err, tracefs.ErrNoKprobes) || errors.Is(err, tracefs.ErrNoUprobes) {
				a.errf(c, "%v\n", err) // one line says it all
			} else {
				a.errf(c, "%v\n%s\n", err, addTrailer)
			}
			return exitErrno(err)
		}
		if n := len(merged); n > 0 && merged[n-1].spec == nil {
			last := merged[n-1].raw[len(merged[n-1].raw)-1]
			if last.Kind == d.Kind && last.GroupOrDefault() == d.GroupOrDefault() && last.Event == d.Event && d.Event != "" {
				merged[n-1].raw = append(merged[n-1].raw, d)
				merged[n-1].probes = append(merged[n-1].probes, d.Probe())
				continue
			}
		}
		merged = append(merged, &request{raw: []*probedef.Def{d}, probes: []probe.Probe{d.Probe()}})
	}
	reqs = merged
	if len(specs) > 0 {
		if st := a.resolveRequests(c, specs, feat); st != exitOK {
			return st
		}
	}
	// The kernel must have the events file for each kind used.
	for _, r := range reqs {
		for _, p := range r.probes {
			if err := fs.Check(kindOf(p)); err != nil {
				a.errf(c, "%v\n", err)
				return exitErrno(err)
			}
		}
	}
	plan, err := a.nameEvents(c, reqs, events, feat)
	if err != nil {
		return exitErrno(err)
	}
	// Check every generated line before writing any.
	for _, in := range plan {
		if _, err := checkLine(in.line, feat); err != nil {
			a.errf(c, "%v\n%s\n", err, addTrailer)
			return exitErrno(err)
		}
	}
	if !boolean(c, "dry-run") {
		if err := writeAll(fs, plan); err != nil {
			a.errf(c, "%v\n%s\n", err, addTrailer)
			return exitErrno(err)
		}
	}
	a.reportAdded(c, plan)
	return exitOK
}

// checkRaw validates one raw definition for this machine's kernel.
func (a *app) checkRaw(line string, fs *tracefs.FS, feat probedef.Features) (*probedef.Def, error) {
	kind := probedef.KindOf(line)
	if err := fs.Check(kind); err != nil {
		return nil, err
	}
	d, err := checkLine(line, feat)
	if err != nil {
		return nil, err
	}
	if d.Delete {
		return nil, fmt.Errorf("%q deletes events: use gprobe -d or gprobe del: %w", line, probedef.ErrSyntax)
	}
	if d.Event == "" {
		// perf always names its events; an unnamed line would get a name
		// gprobe cannot report or roll back reliably.
		return nil, fmt.Errorf("%q has no event name: write p:GROUP/EVENT or p:EVENT: %w", line, probedef.ErrSyntax)
	}
	if d.Group == "" {
		d.Group = d.GroupOrDefault()
	}
	return d, nil
}

var runningKallsyms = sync.OnceValue(probedef.RunningKallsyms)

// checkLine checks a definition against the kernel's grammar and this
// machine's kernel: its README features, its symbols (/proc/kallsyms), and
// for an absolute kernel address, its text range.
func checkLine(line string, feat probedef.Features) (*probedef.Def, error) {
	opts := &probedef.Options{Features: &feat}
	ks := runningKallsyms()
	if ks != nil && probedef.KindOf(line) == probedef.Kprobe {
		opts.Symbols = ks.Count
	}
	d, err := probedef.Parse(line, opts)
	if err != nil {
		return nil, err
	}
	if ks != nil && d.Kind == probedef.Kprobe && !d.Delete && d.Symbol == "" {
		if err := ks.CheckAddress(d.Address, probedef.KptrRestrict()); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func kindOf(p probe.Probe) probedef.Kind {
	if p.Target.IsUprobe() {
		return probedef.Uprobe
	}
	return probedef.Kprobe
}

// readDefinitions reads a --from file: one definition per line; blank
// lines and lines starting with '#' are skipped.
func readDefinitions(path string) ([]string, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--from: %w", err)
		}
		defer f.Close()
		r = f
	}
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--from %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--from %s: no definitions: %w", path, probedef.ErrSyntax)
	}
	return out, nil
}

// resolveRequests resolves the perf PROBEDEFs, as -D does.
func (a *app) resolveRequests(c *cli.Context, reqs []*request, feat probedef.Features) int {
	t, err := a.openTarget(c)
	if err != nil {
		a.errf(c, "%v\n%s\n", err, addTrailer)
		return exitENOENT
	}
	defer t.file.Close()
	r, err := resolve.New(t.file, t.user, resolve.Options{
		NoInlines:    boolean(c, "no-inlines"),
		MaxProbes:    maxProbes(c),
		Features:     resolve.Features{MultiProbe: feat.MultiProbe, HexTypes: feat.HexTypes, KretprobeOffset: feat.KretprobeOffset, Immediates: feat.Immediates},
		Warn:         a.warnFunc(c),
		SourcePrefix: str(c, "source"),
	})
	if err != nil {
		a.errf(c, "%v\n%s\n", err, addTrailer)
		return exitENOENT
	}
	for _, q := range reqs {
		ps, err := r.Probes(q.spec)
		if err != nil {
			return a.resolveFailed(c, err, addTrailer)
		}
		q.probes = ps
		if t.user {
			q.module = t.path
		} else if m := str(c, "module"); m != "" {
			q.module = m
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

// nameEvents is perf's probe_trace_event__set_name over all requests:
// a name taken in the same events file (any group) gets _1, _2... with -f,
// or is an error; the 2nd+ trace events of one request may always take a
// suffix. With multi-probe kernels the names given in this run are not
// added to the list, so the addresses of one probe share one event.
func (a *app) nameEvents(c *cli.Context, reqs []*request, events []tracefs.Event, feat probedef.Features) ([]install, error) {
	names := map[probedef.Kind]map[string]bool{probedef.Kprobe: {}, probedef.Uprobe: {}}
	for _, e := range events {
		names[e.Kind][e.Name] = true
	}
	force := boolean(c, "force")
	var plan []install
	for _, r := range reqs {
		// perf re-reads the event list for each probe definition.
		created := map[probedef.Kind][]string{}
		allow := force
		for i, p := range r.probes {
			k := kindOf(p)
			nl := names[k]
			name := p.Event
			if nl[name] {
				if !allow {
					a.errf(c, "Error: event \"%s\" already exists.\n"+
						" Hint: Remove existing event by 'perf probe -d'\n"+
						"       or force duplicates by 'perf probe -f'\n"+
						"       or set 'force=yes' in BPF source.\n%s\n", name, addTrailer)
					return nil, tracefs.ErrExist
				}
				base := name
				if p.Return {
					base = strings.TrimSuffix(base, "__return")
				}
				found := false
				for i := 1; i < 1024; i++ {
					if n := spec.EventNameSuffixed(base, i); !nl[n] {
						name, found = n, true
						break
					}
				}
				if !found {
					a.errf(c, "Too many events are on the same function.\n%s\n", addTrailer)
					return nil, syscall.ERANGE
				}
			}
			p.Event = name
			line := p.String()
			if r.spec == nil {
				// Keep the line as written (a uprobe's (REF_CTR) has no place in probe.Probe).
				d := *r.raw[i]
				d.Event = name
				line = d.String()
			}
			if !feat.MultiProbe {
				nl[name] = true
			}
			created[k] = append(created[k], name)
			plan = append(plan, install{req: r, p: p, kind: k, line: line})
			allow = true
		}
		for k, ns := range created {
			for _, n := range ns {
				names[k][n] = true
			}
		}
	}
	return plan, nil
}

// writeAll writes the plan in order. If one line fails, every event this
// run created is deleted again, so nothing is left half-installed.
func writeAll(fs *tracefs.FS, plan []install) error {
	type ev struct {
		kind         probedef.Kind
		group, event string
	}
	var done []ev
	seen := map[ev]bool{}
	for _, in := range plan {
		if err := fs.Write(in.kind, in.line); err != nil {
			for i := len(done) - 1; i >= 0; i-- {
				_ = fs.Delete(done[i].kind, done[i].group, done[i].event)
			}
			return err
		}
		e := ev{in.kind, in.p.Group, in.p.Event}
		if !seen[e] {
			seen[e] = true
			done = append(done, e)
		}
	}
	return nil
}

// reportAdded prints perf's "Added new event(s):" block.
func (a *app) reportAdded(c *cli.Context, plan []install) {
	if len(plan) == 0 || a.quiet(c) {
		return
	}
	s := ":"
	if len(plan) > 1 {
		s = "s:"
	}
	fmt.Fprintf(a.stderr, "Added new event%s\n", s)
	var last install
	for _, in := range plan {
		fmt.Fprintln(a.stderr, a.describeAdded(in))
		last = in
	}
	fmt.Fprintf(a.stderr, "\nYou can now use it in all perf tools, such as:\n\n")
	fmt.Fprintf(a.stderr, "\tperf record -e %s:%s -aR sleep 1\n\n", last.p.Group, last.p.Event)
}

// describeAdded is perf_probe_event__sprintf for a just-added event: the
// user's probe point and arguments; raw definitions are described as -l
// describes them.
func (a *app) describeAdded(in install) string {
	if in.req.spec == nil {
		d, _ := probedef.Parse(in.line, &probedef.Options{NoStat: true})
		if d == nil {
			return fmt.Sprintf("  %-20s (on %s)", in.p.Group+":"+in.p.Event, in.p.Target)
		}
		return newDescriber(nil).describe(d)
	}
	var args []string
	for _, x := range in.req.spec.Args {
		args = append(args, x.String())
	}
	return eventLine(in.p.Group, in.p.Event, in.req.spec.Point.String(), in.req.module, args)
}

func eventLine(group, event, point, module string, args []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %-20s (on %s", group+":"+event, point)
	if module != "" {
		b.WriteString(" in " + module)
	}
	if len(args) > 0 {
		b.WriteString(" with " + strings.Join(args, " "))
	}
	b.WriteString(")")
	return b.String()
}

// describer maps installed locations back to probe points, opening each
// image once (perf's debuginfo cache): user binaries by path, the kernel
// through -k or the debuginfo search -D uses.
type describer struct {
	images  map[string]*resolve.Resolver
	vmlinux func() string
}

func newDescriber(c *cli.Context) *describer {
	return &describer{images: map[string]*resolve.Resolver{}, vmlinux: func() string {
		if c != nil {
			if k := str(c, "vmlinux"); k != "" {
				return k
			}
		}
		p, _ := findKernelDebuginfo()
		return p
	}}
}

func (ds *describer) resolver(path string, user bool) *resolve.Resolver {
	if r, ok := ds.images[path]; ok {
		return r
	}
	var r *resolve.Resolver
	if f, err := dwarfinfo.Open(path); err == nil {
		r, _ = resolve.New(f, user, resolve.Options{})
	}
	ds.images[path] = r
	return r
}

// describe is perf -l's line for one installed event.
func (ds *describer) describe(d *probedef.Def) string {
	p := d.Probe()
	var point, module string
	var sp *spec.Point
	if d.Kind == probedef.Uprobe {
		module = d.Path
		if r := ds.resolver(d.Path, true); r != nil {
			sp, _ = r.PointOf(p.Target, d.Return)
		}
	} else {
		module = d.Module
		if d.Module == "" && d.Symbol != "" {
			if k := ds.vmlinux(); k != "" {
				if r := ds.resolver(k, false); r != nil {
					sp, _ = r.PointOf(p.Target, d.Return)
				}
			}
		}
	}
	switch {
	case sp != nil:
		point = sp.String()
	case d.Kind == probedef.Kprobe && d.Symbol != "":
		point = (&spec.Point{Function: d.Symbol, HasFunction: true, Offset: d.Offset, Return: d.Return}).String()
	case d.Kind == probedef.Kprobe:
		point = fmt.Sprintf("0x%x", d.Address)
	default:
		point = fmt.Sprintf("0x%x", d.Offset)
	}
	var args []string
	for i, x := range d.Args {
		args = append(args, x.EffectiveName(i))
	}
	return eventLine(d.GroupOrDefault(), d.Event, point, module, args)
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
	ds := newDescriber(c)
	for _, k := range []probedef.Kind{probedef.Kprobe, probedef.Uprobe} {
		var evs []tracefs.Event
		seen := map[string]bool{}
		for _, e := range events {
			if e.Kind == k && e.Def != nil && !seen[e.Line] && matchEvent(flt, e.Group, e.Name) {
				seen[e.Line] = true
				evs = append(evs, e)
			}
		}
		sort.Slice(evs, func(i, j int) bool { return evs[i].Line < evs[j].Line })
		for _, e := range evs {
			fmt.Fprintln(a.stdout, ds.describe(e.Def))
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
	hit := false
	for _, k := range []probedef.Kind{probedef.Kprobe, probedef.Uprobe} {
		var names []string
		seen := map[string]bool{}
		for _, e := range events {
			n := e.Group + ":" + e.Name
			if e.Kind == k && !seen[n] && matchEvent(flt, e.Group, e.Name) {
				seen[n] = true
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			a.errf(c, "Removed event: %s\n", n)
		}
		hit = hit || len(names) > 0
		if boolean(c, "dry-run") {
			continue
		}
		for _, n := range names {
			g, e, _ := strings.Cut(n, ":")
			// The kernel refuses to delete an enabled event (EBUSY).
			if on, err := fs.Enabled(g, e); err == nil && on {
				if err := fs.Enable(g, e, false); err != nil {
					a.errf(c, "Failed to disable event %s: %v\n%s\n", n, err, delTrailer)
					return exitErrno(err)
				}
			}
			if err := fs.Delete(k, g, e); err != nil {
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

// absPath is the path perf records for -x (used in tests).
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			return real
		}
		return abs
	}
	return p
}
