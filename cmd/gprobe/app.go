package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/emit/bootparam"
	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/clikit"
	"github.com/gprobe/gprobe/internal/clikit/perfprobe"
	"github.com/gprobe/gprobe/internal/termsafe"
	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/record/follow"
	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/debuginfod"
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
	// args are the command line (negatable reads it).
	args []string
	// firstPath is the target an absolute path before the probe
	// definition names, as perf takes it without -x or -m ("gprobe
	// /bin/zsh zfree"): a .ko file is a module, anything else a binary
	// whose path is used as given.
	firstPath struct{ exec, module string }
}

// mountNS is the process --target-ns (or --target) names, 0 without one,
// -1 when the value is not a process id (target.Open refuses it).
func mountNS(c *cli.Context) int {
	v := str(c, "target-ns")
	if v == "" {
		v = str(c, "target")
	}
	if v == "" {
		return 0
	}
	pid, err := strconv.Atoi(v)
	if err != nil || pid <= 0 {
		return -1
	}
	return pid
}

// execPath is the user binary probed: -x, or the path before the
// definitions.
func (a *app) execPath(c *cli.Context) string {
	if x := str(c, "exec"); x != "" {
		return x
	}
	return a.firstPath.exec
}

// user reports whether a user binary is probed: -x, the path before the
// definitions, or --target's process's executable (targetExec).
func (a *app) user(c *cli.Context) bool { return a.execPath(c) != "" || a.targetExec(c) }

// targetExec reports whether the binary probed is the executable of
// --target's process: --target without -x, -m or -k.
func (a *app) targetExec(c *cli.Context) bool {
	return str(c, "target") != "" && a.execPath(c) == "" && a.modulePath(c) == "" && str(c, "vmlinux") == ""
}

// modulePath is the module probed: -m, or the .ko path before the
// definitions.
func (a *app) modulePath(c *cli.Context) string {
	if m := str(c, "module"); m != "" {
		return m
	}
	return a.firstPath.module
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
func (a *app) isSubcommand(s string) bool {
	if s == "help" {
		return true
	}
	for _, c := range a.cliApp().Commands {
		if c.HasName(s) {
			return true
		}
	}
	return false
}

// usageText is perf's usage block without the options.
var usageText = perfprobe.UsageText()

// perfParser parses the root command's options as perf probe does; then
// urfave/cli runs the command from their canonical spelling.
func (a *app) perfParser() *perfprobe.Parser {
	return &perfprobe.Parser{Flags: a.cliApp().Flags, W: a.stderr, IsCommand: a.isSubcommand,
		Dynamic: []string{"fprobe", "tracepoint", "event"}, LineFunc: []string{"ret-insn"}, Modes: []string{"ret-insn", "boot"},
		Raw: install.IsDefinition, Namespace: []string{"target-ns", "target"}}
}

// perfOptions is the root command's option table without callbacks,
// writing perf's usage and option help to w.
func (a *app) perfOptions(w io.Writer) *clikit.Options {
	return perfprobe.Options(a.cliApp().Flags, nil, w)
}

func (a *app) main(args []string) int {
	args, perf, st, done := a.perfParser().Parse(args)
	if done {
		return st
	}
	a.args, a.perf = args, perf
	cliApp := a.cliApp()
	if err := cliApp.Run(interspersed(args)); err != nil {
		if a.status == exitOK {
			fmt.Fprintf(a.stderr, " Error: %v\n", err)
			fmt.Fprint(a.stderr, usageText)
			return exitUsage
		}
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
		Flags:                     rootFlags(),
		Action:                    a.rootAction,
		Commands: []*cli.Command{
			{Name: "line", Usage: "show probe-able source lines (same as -L)", ArgsUsage: "LINE",
				Flags: targetFlags(), Action: func(c *cli.Context) error {
					return a.set(a.showLines(c, strings.Join(c.Args().Slice(), " ")))
				}},
			{Name: "funcs", Usage: "list functions (same as -F)", ArgsUsage: "[FILTER]", Flags: targetFlags(), Action: func(c *cli.Context) error {
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

func targetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "vmlinux", Aliases: []string{"k"}, Usage: "vmlinux `PATH` with debug information"},
		&cli.StringFlag{Name: "source", Aliases: []string{"s"}, Usage: "source `DIR` (path prefix of the DWARF source paths)"},
		&cli.StringFlag{Name: "exec", Aliases: []string{"x"}, Usage: "user-space `BINARY` (uprobes)"},
		&cli.StringFlag{Name: "module", Aliases: []string{"m"}, Usage: "kernel `MODULE` name or .ko path"},
		&cli.BoolFlag{Name: "no-inlines", Usage: "ignore inlined instances"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors"},
		&cli.BoolFlag{Name: "no-cache", Usage: "neither read nor write the index cache ($XDG_CACHE_HOME/gprobe)"},
		&cli.BoolFlag{Name: "demangle", Value: true, Usage: "demangle C++, Rust, OCaml and Java symbol names (--no-demangle: ELF names)"},
		&cli.BoolFlag{Name: "no-demangle", Hidden: true},
		&cli.BoolFlag{Name: "demangle-kernel", Usage: "demangle kernel symbol names too"},
		&cli.BoolFlag{Name: "no-demangle-kernel", Hidden: true},
		&cli.StringFlag{Name: "symfs", Usage: "look for the -x binary and debug information under `DIR` (a copy of the probed system's files)"},
		&cli.StringFlag{Name: "target-ns", Usage: "look up the -x binary in the mount namespace of process `PID` (a container's) and install its probes there"},
		&cli.StringFlag{Name: "target", Usage: "--target-ns PID, and without -x the executable of process `PID`"},
	}
}

func rootFlags() []cli.Flag {
	return append(append(targetFlags(),
		&cli.StringFlag{Name: "line", Aliases: []string{"L"}, Usage: "show probe-able source lines of `FUNC[:RLN[+NUM|-RLN2]]|SRC:ALN[+NUM|-ALN2]`"},
		&cli.StringSliceFlag{Name: "definition", Aliases: []string{"D"}, Usage: "print the probe event `DEFINITION`(s) instead of installing"},
		&cli.StringSliceFlag{Name: "add", Aliases: []string{"a"}, Usage: "add a probe event"},
		&cli.StringSliceFlag{Name: "del", Aliases: []string{"d"}, Usage: "delete probe events"},
		&cli.BoolFlag{Name: "list", Aliases: []string{"l"}, Usage: "list probe events"},
		&cli.StringFlag{Name: "vars", Aliases: []string{"V"}, Usage: "show accessible variables at a `PROBEPOINT`"},
		&cli.BoolFlag{Name: "funcs", Aliases: []string{"F"}, Usage: "list functions"},
		&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "do not install anything"},
		&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "allow duplicate event names"},
		&cli.IntFlag{Name: "max-probes", Value: 128, Usage: "maximum probe points per event"},
		&cli.BoolFlag{Name: "ret-insn", Usage: "with -D/-a FUNC%return: plain probes on each return instruction and tail call of FUNC instead of a return probe; with -L FUNC: list FUNC's exits"},
		&cli.BoolFlag{Name: "boot", Usage: "with -D: print the kernel command-line parameter (kprobe_event=) that defines the probes at boot"},
		&cli.BoolFlag{Name: "bootconfig", Usage: "with -D: print the Extra Boot Config (bootconfig -a) that defines and enables the probes at boot"},
		&cli.BoolFlag{Name: "uretprobe", Usage: "with -D/-a FUNC%return in a Go program: a uretprobe as perf writes, not probes on the return instructions (a uretprobe kills a Go program when a goroutine's stack moves)"},
	), append(append(varsFlags(), dynamicFlags()...), sdtFlags()...)...)
}

// set records a status and returns nil so urfave/cli does not print.
func (a *app) set(status int) error {
	a.status = status
	return nil
}

func (a *app) rootAction(c *cli.Context) error {
	switch {
	case c.Bool("boot") && !c.IsSet("definition"):
		return a.set(a.usageError("--boot prints definitions: use it with -D"))
	case c.Bool("bootconfig") && !c.IsSet("definition"):
		return a.set(a.usageError("--bootconfig prints definitions: use it with -D"))
	case c.Bool("bootconfig") && c.Bool("boot"):
		return a.set(a.usageError("--boot and --bootconfig: choose one"))
	case c.Bool("ret-insn") && !c.IsSet("definition") && !c.IsSet("add") && !c.IsSet("line") && c.NArg() == 0:
		return a.set(a.usageError("--ret-insn goes with -D, -a or -L"))
	case c.Bool("cache") && !c.IsSet("list") && !c.IsSet("del"):
		return a.set(a.usageError("--cache goes with -l or -d: gprobe adds no probes to perf's probe cache"))
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

// targetOptions are what -k, -x, -m and the debuginfod and cache settings
// say to open: the image (or the running kernel's debuginfo where
// distributions put it), missing debug information fetched from the
// debuginfod servers of DEBUGINFOD_URLS, downloads cancelled with ctx.
// With btf, the commands that can work from BTF alone (-D, add, -V, latency)
// get the running kernel's /sys/kernel/btf/vmlinux when no vmlinux is found.
func (a *app) targetOptions(c *cli.Context, btf bool, ctx context.Context) target.Options {
	return target.Options{Vmlinux: str(c, "vmlinux"), Exec: a.execPath(c), Module: a.modulePath(c), BTF: btf,
		ExecAsGiven: a.firstPath.exec != "" && str(c, "exec") == "", Symfs: str(c, "symfs"), MountNS: mountNS(c),
		ProcessExec: a.targetExec(c), PerfCache: buildIDCache(),
		Trace:      a.traceFunc(c),
		Debuginfod: a.debuginfod(c), Context: ctx, NoCache: boolean(c, "no-cache"), Warn: a.warnFunc(c)}
}

// verboseTarget says, with -v, what was opened as perf -v does: the
// vmlinux given, the file the debug information is read from; and when
// BTF stands in for a missing vmlinux.
func (a *app) verboseTarget(c *cli.Context, t *target.Target) {
	if a.verbose(c) == 0 {
		return
	}
	if k := str(c, "vmlinux"); k != "" {
		fmt.Fprintf(a.stderr, "Use vmlinux: %s\n", k)
	}
	if a.noBlacklist {
		fmt.Fprintln(a.stderr, "No kprobe blacklist support, ignored")
	}
	if !t.User && t.Module == "" && t.HasSymbols() {
		fmt.Fprintf(a.stderr, "Using %s for symbols\n", t.Path)
	}
	if t.NoDebuginfo != nil {
		fmt.Fprintf(a.stderr, "No vmlinux with debug info found; using %s (function entry probes only).\n", t.Path)
	}
}

// withReason is perf's pr_err_with_code: the trailer, and with -v the
// error behind the exit status (" Reason: No such file or directory
// (Code: -2)").
func (a *app) withReason(c *cli.Context, trailer string, status int) string {
	if a.verbose(c) == 0 || status <= 0 || status >= 256 || status == exitUsage {
		return trailer
	}
	no := syscall.Errno(256 - status)
	return fmt.Sprintf("%s Reason: %s (Code: %d)", trailer, perfprobe.Strerror(no), -int(no))
}

// verbose is how many -v were given (perf's verbose level).
func (a *app) verbose(c *cli.Context) int {
	if a.perf != nil && a.perf.Verbose > 0 {
		return a.perf.Verbose
	}
	if boolean(c, "verbose") {
		return 1
	}
	return 0
}

// debugFunc prints perf's -v lines of a search, with -v.
func (a *app) debugFunc(c *cli.Context) func(string) {
	if a.verbose(c) == 0 {
		return nil
	}
	return func(s string) { fmt.Fprintln(a.stderr, s) }
}

// resolveOptions are the resolve options the flags give, the same for
// every command; a command adds what only it sets (Features,
// ImageFeatures, KernelBTFArgs).
func (a *app) resolveOptions(c *cli.Context, btf bool) resolve.Options {
	return resolve.Options{Target: a.targetOptions(c, btf, nil), NoInlines: boolean(c, "no-inlines"), MaxProbes: maxProbes(c),
		Warn: a.warnFunc(c), Debug: a.debugFunc(c), SourcePrefix: str(c, "source"), ReturnInsn: boolean(c, "ret-insn"), Uretprobe: boolean(c, "uretprobe"),
		Names: resolve.Names{NoDemangle: !a.negatable(c, "demangle", true), DemangleKernel: a.negatable(c, "demangle-kernel", false),
			Params: boolean(c, "verbose")}, KernelText: install.RunningSymbols{}}
}

// negatable is perf's boolean option NAME, which --no-NAME turns off: of
// the two, the one given last wins; def when neither is given.
func (a *app) negatable(c *cli.Context, name string, def bool) bool {
	on, off := setIn(c, name), setIn(c, "no-"+name)
	switch {
	case on == nil && off == nil:
		return def
	case off == nil:
		return on.Bool(name)
	case on == nil:
		return !off.Bool("no-" + name)
	}
	for i := len(a.args) - 1; i > 0; i-- {
		switch a.args[i] {
		case "--" + name:
			return true
		case "--no-" + name:
			return false
		}
	}
	return def
}

// open opens the target o names and its resolver (resolve.Open), in the
// app's context; SIGINT or SIGTERM during a download end it with
// errInterrupted.
func (a *app) open(c *cli.Context, o resolve.Options) (*resolve.Resolver, error) {
	ctx, stop := a.interruptible()
	defer stop()
	o.Target.Context = ctx
	r, err := resolve.Open(o)
	if ctx.Err() != nil {
		if err == nil {
			r.Close()
		}
		return nil, errInterrupted
	}
	if err == nil {
		a.verboseTarget(c, r.Target())
	}
	return r, err
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

// errInterrupted ends a command whose download was interrupted.
var errInterrupted = errors.New("Interrupted.")

// interruptible is a context for a debuginfod download: follow.StopSignals
// cancel it (the partial file is removed) instead of ending gprobe at once.
func (a *app) interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(a.base(), follow.StopSignals...)
}

// debuginfod is the client DEBUGINFOD_URLS configures (nil without
// servers), with a progress line when stderr is a terminal.
func (a *app) debuginfod(c *cli.Context) *debuginfod.Client {
	d := debuginfod.FromEnv()
	if d == nil {
		return nil
	}
	if isTerminal(a.stderr) && !boolean(c, "quiet") {
		d.Progress = debuginfod.ProgressLine(a.stderr)
	}
	d.Warn = a.warnFunc(c)
	return d
}

// traceFunc prints, with -v, what the search for debug information looked
// at.
func (a *app) traceFunc(c *cli.Context) func(string) {
	if !boolean(c, "verbose") || boolean(c, "quiet") {
		return nil
	}
	return func(s string) { fmt.Fprintln(a.stderr, s) }
}

func (a *app) warnFunc(c *cli.Context) func(string) {
	return func(s string) {
		if !boolean(c, "quiet") {
			fmt.Fprintln(a.stderr, s)
		}
	}
}

// parseOptions are the PROBEDEF grammar's options for the target: the
// variables after FUNC%return are entry values on a kernel, the results
// and arguments at the return instructions in a Go program; perf refuses
// them elsewhere.
func (a *app) parseOptions(c *cli.Context) spec.Options {
	exec := a.execPath(c)
	return spec.Options{EntryValues: !a.user(c) || exec != "" && resolve.IsGoProgram(exec)}
}

// blacklistFor sets the kprobe blacklist kernel probes are checked
// against (the kernel refuses those it covers): a vmlinux's own for the
// kernel it is (-k), else the running kernel's.
func (a *app) blacklistFor(c *cli.Context, o *resolve.Options) {
	if str(c, "vmlinux") != "" {
		o.ImageBlacklist = true
		return
	}
	o.Blacklist = tracefs.RunningBlacklist()
	a.noBlacklist = o.Blacklist == nil && !a.user(c)
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
	a.blacklistFor(c, &o)
	r, st := a.resolverOr(c, o, trailer)
	if r == nil {
		return st
	}
	defer r.Close()
	var resolved []probe.Probe
	for i, p := range parsed {
		if probes[i] != nil {
			continue
		}
		ps, err := r.Probes(p)
		if err != nil {
			return a.resolveFailedOn(c, r, err, trailer)
		}
		probes[i] = ps
		resolved = append(resolved, ps...)
	}
	for _, p := range resolved {
		if err := install.CheckDefinition(p, r.Arch(), feat, known); err != nil {
			a.errf(c, "The kernel would refuse this definition: %v\n%s\n", err, a.withReason(c, trailer, exitEINVAL))
			return exitEINVAL
		}
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
	const trailer = "  Error: Failed to add events."
	var parsed []*spec.Probe
	for _, d := range defs {
		p, err := spec.ParseProbeOpts(d, a.parseOptions(c))
		if err != nil {
			return a.parseFailed(err, "-D")
		}
		parsed = append(parsed, p)
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

// resolveFailed reports a failed resolution as perf does (see
// resolveFailedOn) and returns perf's exit status.
func (a *app) resolveFailed(c *cli.Context, err error, trailer string) int {
	return a.resolveFailedOn(c, nil, err, trailer)
}

// unfetched says, before a failed resolution's message, what each
// debuginfod server answered when asked in vain for t's debug information.
func (a *app) unfetched(c *cli.Context, r *resolve.Resolver) {
	if t := r.Target(); t.FetchErr != nil && !boolean(c, "quiet") {
		fmt.Fprintln(a.stderr, t.FetchErr)
	}
}

// resolveFailedOn is resolveFailed for a target: when BTF stood in for a
// missing vmlinux and the spec needs DWARF, it also says where the vmlinux
// was looked for (see also unfetched).
func (a *app) resolveFailedOn(c *cli.Context, r *resolve.Resolver, err error, trailer string) int {
	if r != nil {
		if t := r.Target(); t.NoDebuginfo != nil && errors.Is(err, resolve.ErrNeedsDWARF) && !boolean(c, "quiet") {
			fmt.Fprintln(a.stderr, t.NoDebuginfo)
		}
		a.unfetched(c, r)
	}
	// -q silences perf's error lines too (pr_err), not only warnings.
	if !boolean(c, "quiet") {
		var re *resolve.Error
		if errors.As(err, &re) {
			if re.Msg != "" {
				fmt.Fprintln(a.stderr, re.Msg)
			}
		} else {
			fmt.Fprintln(a.stderr, err)
		}
		fmt.Fprintln(a.stderr, a.withReason(c, trailer, resolveStatus(err)))
	}
	return resolveStatus(err)
}

// resolveStatus is perf's exit status for a resolution error.
func resolveStatus(err error) int { return 256 - int(resolve.Errno(err)) }

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
		a.unfetched(c, r)
		return a.resolveFailed(c, err, trailer)
	}
	ctx, stop := a.interruptible()
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

// isTerminal reports whether w is a terminal (termsafe.IsTerminal).
func isTerminal(w io.Writer) bool { return termsafe.IsTerminal(w) }

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
	w := bufio.NewWriterSize(a.stdout, 64<<10)
	err = r.EachFunction(flt, func(name string) bool {
		w.WriteString(name)
		w.WriteByte('\n')
		return true
	})
	w.Flush()
	if err != nil {
		fmt.Fprintln(a.stderr, err)
		return exitENOENT
	}
	return exitOK
}

// str returns a string flag set on this command or any parent: target
// flags may come before or after a subcommand name.
func str(c *cli.Context, name string) string {
	if x := setIn(c, name); x != nil {
		return x.String(name)
	}
	return ""
}

// setIn returns the innermost context of c's lineage where flag name was
// given on the command line. (urfave's IsSet looks through the lineage, and
// String then answers from the local flag set, so a flag given before the
// subcommand would read as its empty local default.)
func setIn(c *cli.Context, name string) *cli.Context {
	for _, x := range c.Lineage() {
		for _, n := range x.LocalFlagNames() {
			if n == name {
				return x
			}
		}
	}
	return nil
}

// boolean is str for boolean flags.
func boolean(c *cli.Context, name string) bool {
	if x := setIn(c, name); x != nil {
		return x.Bool(name)
	}
	return false
}
