package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/emit/bootparam"
	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/clikit"
	"github.com/gprobe/gprobe/internal/perfprobe"
	"github.com/gprobe/gprobe/internal/termsafe"
	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/spec"
	"github.com/gprobe/gprobe/resolve/target"
)

// Exit statuses, as perf probe returns them (negative errno & 0xff).
const (
	exitOK         = 0
	exitUsage      = 129
	exitEINVAL     = 234
	exitENOENT     = 254
	exitEOPNOTSUPP = 161
	exitInternal   = 70
)

type app struct {
	stdout, stderr io.Writer
	status         int
	// ctx is the context every resolver is opened in (nil: Background);
	// the tests that reproduce perf's mistakes put them in it
	// (internal/perfbug).
	ctx context.Context
	// cli is the command tree, built once (it holds every flag of every
	// command: building it is a noticeable part of a short run).
	cli *cli.App
	// operand is the root command's first operand (firstuse.go).
	operand string
	// perf is what perf probe's parse of the root command's options
	// recorded (perfopts.go); nil when a command ran without it.
	perf *perfprobe.State
	// noBlacklist: kernel probes are to be checked against the running
	// kernel's kprobe blacklist, which debugfs does not show (-v says so).
	noBlacklist bool
	// args are the command line (clikit.Negatable reads it).
	args []string
	// firstPath is the target an absolute path before the probe
	// definition names, as perf takes it without -x or -m ("gprobe
	// /bin/zsh zfree"): a .ko file is a module, anything else a binary
	// whose path is used as given.
	firstPath struct{ exec, module string }
}

// target is what the flags and the path before the definitions name to
// probe (perfprobe.Target).
func (a *app) target(c *cli.Context) perfprobe.Target {
	return perfprobe.Target{Vmlinux: str(c, "vmlinux"), Exec: str(c, "exec"), Module: str(c, "module"), TargetNS: str(c, "target-ns"),
		TargetPID: str(c, "target"), FirstExec: a.firstPath.exec, FirstModule: a.firstPath.module}
}

// base is the app's context.
func (a *app) base() context.Context {
	if a.ctx == nil {
		return context.Background()
	}
	return a.ctx
}

func newApp(stdout, stderr io.Writer) *app { return &app{stdout: stdout, stderr: stderr} }

func (a *app) usageError(format string, args ...any) int {
	fmt.Fprintf(a.stderr, " Error: "+format+"\n", args...)
	fmt.Fprint(a.stderr, usageText)
	return exitUsage
}

// isSubcommand says whether s names one of the app's commands (or help).
func (a *app) isSubcommand(s string) bool { return clikit.IsCommand(a.cliApp(), s) }

// usageText is perf's usage block without the options.
var usageText = perfprobe.UsageText()

// perfOptions is the root command's option table without callbacks,
// writing perf's usage and option help to w.
func (a *app) perfOptions(w io.Writer) *clikit.Options {
	return perfprobe.Options(a.cliApp().Flags, nil, w)
}

func (a *app) main(args []string) int {
	// The root command's options are parsed as perf probe parses them;
	// then urfave/cli runs the command from their canonical spelling.
	parser := perfprobe.RootParser(a.cliApp().Flags, a.stderr, a.isSubcommand, install.IsDefinition)
	args, perf, st, done := parser.Parse(args)
	if done {
		return st
	}
	a.args, a.perf = args, perf
	if err := a.cliApp().Run(interspersed(args)); err != nil && a.status == exitOK {
		return a.usageError("%v", err)
	}
	return a.status
}

func (a *app) cliApp() *cli.App {
	if a.cli == nil {
		a.cli = a.finishCLI(a.newCLIApp())
	}
	return a.cli
}

func (a *app) newCLIApp() *cli.App {
	return &cli.App{
		Name:                      "gprobe",
		Usage:                     "define probe points through DWARF, perf probe compatible",
		UsageText:                 "gprobe [options] PROBEDEF | -L LINE | -D PROBEDEF | -F | add | record | analyze | check",
		UseShortOptionHandling:    true,
		HideHelpCommand:           true,
		DisableSliceFlagSeparator: true,
		Writer:                    a.stdout,
		ErrWriter:                 a.stderr,
		ExitErrHandler:            func(*cli.Context, error) {},
		Flags:                     perfprobe.RootFlags(append(append(perfprobe.VarsFlags(), perfprobe.DynamicFlags()...), perfprobe.CacheFlags()...)...),
		Action:                    a.rootAction,
		Commands: []*cli.Command{
			{Name: "line", Usage: "show probe-able source lines (same as -L)", ArgsUsage: "LINE",
				Flags: perfprobe.TargetFlags(), Action: func(c *cli.Context) error {
					return a.set(a.showLines(c, strings.Join(c.Args().Slice(), " ")))
				}},
			{Name: "funcs", Usage: "list functions (same as -F)", ArgsUsage: "[FILTER]", Flags: perfprobe.TargetFlags(), Action: func(c *cli.Context) error {
				return a.set(a.showFuncs(c, c.Args().First()))
			}},
			a.addCommand(),
			a.delCommand(),
			a.listCommand(),
			a.varsCommand(),
			a.recordCommand(),
			a.analyzeCommand(),
			a.latencyCommand(),
			a.exportCommand(),
			a.checkCommand(),
			a.cleanupCommand(),
		},
	}
}

// set records a status and returns nil so urfave/cli does not print.
func (a *app) set(status int) error {
	a.status = status
	return nil
}

func (a *app) rootAction(c *cli.Context) error {
	on := func(n string) bool { return c.IsSet(n) && c.Value(n) != false }
	if msg := perfprobe.Misplaced(on, c.NArg() > 0); msg != "" {
		return a.set(a.usageError("%s", msg))
	}
	switch {
	case c.IsSet("line") && boolean(c, "ret-insn"):
		return a.set(a.showExits(c, a.perf.Line))
	case c.IsSet("line"):
		return a.set(a.showLines(c, a.perf.Line))
	case c.IsSet("definition"):
		return a.set(a.showDefinitions(c, c.StringSlice("definition")))
	case c.IsSet("vars"):
		// perf shows the variables of each -V in turn, until one fails.
		st := exitOK
		for _, ev := range a.perf.Events {
			if st = a.showVars(c, ev); st != exitOK {
				break
			}
		}
		return a.set(st)
	case c.IsSet("funcs"):
		return a.set(a.showFuncs(c, a.perf.Filter(perfprobe.DefaultFuncFilter)))
	case c.IsSet("add") || c.IsSet("del") || c.IsSet("list") || c.NArg() > 0:
		return a.set(a.rootProbes(c))
	}
	cli.ShowAppHelp(c)
	return a.set(exitUsage)
}

// withReason is perf's pr_err_with_code (perfprobe.WithReason).
func (a *app) withReason(c *cli.Context, trailer string, status int) string {
	return perfprobe.WithReason(trailer, status, a.verbose(c))
}

// verbose is how many -v were given (perf's verbose level).
func (a *app) verbose(c *cli.Context) int { return a.perf.VerboseLevel(boolean(c, "verbose")) }

// settings are what the flags say of the target and its resolution;
// resolveOptions are its resolve options (perfprobe.Settings).
func (a *app) settings(c *cli.Context) perfprobe.Settings {
	return perfprobe.Settings{Target: a.target(c), Symfs: str(c, "symfs"), Source: str(c, "source"), Verbose: boolean(c, "verbose"),
		Quiet: boolean(c, "quiet"), Level: a.verbose(c), NoCache: boolean(c, "no-cache"), NoInlines: boolean(c, "no-inlines"),
		ReturnInsn: boolean(c, "ret-insn"), Uretprobe: boolean(c, "uretprobe"), NoDemangle: !clikit.Negatable(c, a.args, "demangle", true),
		DemangleKernel: clikit.Negatable(c, a.args, "demangle-kernel", false), MaxProbes: clikit.Int(c, "max-probes", perfprobe.MaxProbes),
		Stderr: a.stderr, Terminal: isTerminal(a.stderr)}
}

func (a *app) resolveOptions(c *cli.Context, btf bool) resolve.Options {
	return a.settings(c).ResolveOptions(btf)
}

// open opens the target o names and its resolver in the app's context,
// as the flags say (perfprobe.Settings.Open).
func (a *app) open(c *cli.Context, o resolve.Options) (*resolve.Resolver, error) {
	return a.settings(c).Open(a.base(), o, a.noBlacklist)
}

// resolverOr is open, the failure printed as perf prints it (with the
// trailer unless it is "") and its exit status returned with a nil
// resolver.
func (a *app) resolverOr(c *cli.Context, o resolve.Options, trailer string) (*resolve.Resolver, int) {
	r, err := a.open(c, o)
	if err != nil {
		fmt.Fprintln(a.stderr, err)
		if trailer != "" {
			fmt.Fprintln(a.stderr, a.withReason(c, trailer, exitENOENT))
		}
		return nil, exitENOENT
	}
	return r, exitOK
}

// runningBlacklist has o check kernel probes against the running
// kernel's kprobe blacklist (the kernel refuses what it covers); -v says
// when debugfs does not show it.
func (a *app) runningBlacklist(c *cli.Context, o *resolve.Options) {
	if !a.target(c).User() { // uprobes have no blacklist
		o.Blacklist = tracefs.RunningBlacklist()
		a.noBlacklist = o.Blacklist == nil
	}
}

// resolveDefinitions resolves the definitions parsed whose probes are
// still nil, into probes, refusing what the kernel would refuse (perf
// prints such lines; the write then fails with EINVAL).
func (a *app) resolveDefinitions(c *cli.Context, parsed []*spec.Probe, probes map[int][]probe.Probe, trailer string) int {
	feat, known := tracefs.RunningFeatures()
	o := a.resolveOptions(c, true)
	// What perf 6.1 cannot write (entry values at return) follows the
	// kernel the vmlinux is.
	o.Features, o.ImageFeatures = feat, true
	// The kprobe blacklist (the kernel refuses what it covers): a
	// vmlinux's own for the kernel it is (-k), else the running kernel's.
	if o.ImageBlacklist = str(c, "vmlinux") != ""; !o.ImageBlacklist {
		a.runningBlacklist(c, &o)
	}
	r, st := a.resolverOr(c, o, trailer)
	if r == nil {
		return st
	}
	defer r.Close()
	// resolveFailed reports a probe the kernel would refuse too.
	if err := resolve.Checked(r, parsed, probes, feat, known); err != nil {
		return a.resolveFailed(c, r, err, trailer)
	}
	return exitOK
}

// showDefinitions implements -D: resolve every definition first, then
// print them all (perf prints nothing if one fails), or with --boot the
// kernel command line that defines them.
func (a *app) showDefinitions(c *cli.Context, defs []string) int {
	if dynamicMode(c) {
		return a.showDynamic(c, defs)
	}
	const trailer = perfprobe.AddTrailer
	parsed, err := spec.ParseProbes(defs, a.target(c).ParseOptions())
	if err != nil {
		return a.parseFailed(err, "-D")
	}
	feat, known := tracefs.RunningFeatures()
	// SDT points come from the marked binaries or perf's probe cache.
	probes, st := a.sdtProbes(c, parsed, feat, known, trailer)
	if st != exitOK {
		return st
	}
	if len(probes) < len(parsed) {
		if st := a.resolveDefinitions(c, parsed, probes, trailer); st != exitOK {
			return st
		}
	}
	var all []probe.Probe
	for i := range parsed {
		all = append(all, probes[i]...)
	}
	return a.printProbes(c, all, trailer)
}

// printProbes prints resolved probes as -D does (emit/bootparam.Text):
// their definitions, or with --boot or --bootconfig what defines them at
// boot.
func (a *app) printProbes(c *cli.Context, probes []probe.Probe, trailer string) int {
	text, err := bootparam.Text(probes, boolean(c, "boot"), boolean(c, "bootconfig"))
	if err != nil {
		a.errf(c, "%v\n%s\n", err, trailer)
		return exitEINVAL
	}
	fmt.Fprint(a.stdout, text)
	return exitOK
}

// parseFailed reports a definition that does not parse as perf's option
// parser does: the message, the usage and the option's help.
func (a *app) parseFailed(err error, option string) int {
	fmt.Fprintln(a.stderr, perfprobe.Message(err))
	a.perfOptions(a.stderr).UsageFor(true, strings.TrimPrefix(option, "-"), true)
	return exitUsage
}

// unfetched says, before a failed resolution's message, what each
// debuginfod server answered when asked in vain for t's debug information.
func (a *app) unfetched(c *cli.Context, r *resolve.Resolver) {
	if t := r.Target(); t.FetchErr != nil && !boolean(c, "quiet") {
		fmt.Fprintln(a.stderr, t.FetchErr)
	}
}

// resolveFailed reports a failed resolution on r's target (nil: none) as
// perf does, perfprobe.ResolveFailure's lines, unless -q (which silences
// perf's error lines too, not only warnings), and returns perf's exit
// status.
func (a *app) resolveFailed(c *cli.Context, r *resolve.Resolver, err error, trailer string) int {
	var t *target.Target
	if r != nil {
		t = r.Target()
	}
	lines, status := perfprobe.ResolveFailure(t, err, trailer, a.verbose(c))
	if !boolean(c, "quiet") {
		fmt.Fprintln(a.stderr, strings.Join(lines, "\n"))
	}
	return status
}

// showLines implements -L.
func (a *app) showLines(c *cli.Context, desc string) int {
	lr, err := spec.ParseLineRange(desc)
	if err != nil {
		return a.parseFailed(err, "-L")
	}
	const trailer = "  Error: Failed to show lines."
	r, st := a.resolverOr(c, a.resolveOptions(c, false), trailer)
	if r == nil {
		return st
	}
	defer r.Close()
	l, err := r.LineRange(lr)
	if err != nil {
		return a.resolveFailed(c, r, err, trailer)
	}
	ctx, stop := perfprobe.Interruptible(a.base())
	path, err := r.Target().SourcePath(ctx, l, str(c, "source"))
	stop()
	if err == nil {
		err = lines.Render(a.stdout, l, path, isTerminal(a.stdout))
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "%v\n%s\n", err, a.withReason(c, trailer, exitENOENT))
		return exitENOENT
	}
	return exitOK
}

// isTerminal reports whether w is a terminal.
var isTerminal = termsafe.IsTerminal

// showFuncs implements -F [FILTER] (perf's default "!_* & !*@plt"): the
// image's function symbols, sorted.
func (a *app) showFuncs(c *cli.Context, filter string) int {
	flt, err := spec.ParseFilter(cmp.Or(filter, perfprobe.DefaultFuncFilter))
	if err != nil {
		fmt.Fprintln(a.stderr, err)
		return exitEINVAL
	}
	// Without a vmlinux, perf lists the kernel's map loaded from kallsyms.
	o := a.resolveOptions(c, false)
	o.Target.Kallsyms = true
	r, st := a.resolverOr(c, o, "")
	if r == nil {
		return st
	}
	defer r.Close()
	err = r.WriteFunctions(a.stdout, flt)
	if err != nil {
		fmt.Fprintln(a.stderr, err)
		return exitENOENT
	}
	return exitOK
}

// str and boolean read a flag given on this command or any parent
// (clikit.String, clikit.Bool).
var str, boolean = clikit.String, clikit.Bool
