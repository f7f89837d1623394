package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/gprobe/gprobe/internal/clikit"
	"github.com/gprobe/gprobe/resolve/spec"
)

// The root command's options are parsed first as perf probe 6.1 parses
// them (builtin-probe.c with tools/lib/subcmd's parse-options, through
// clikit.Options): the same command lines are accepted, the same ones
// refused with the same words, usage, option help and exit status; then
// urfave/cli runs the command from their canonical spelling.

// perfUsage are perf probe's usage lines, for gprobe; the last names the
// commands perf has not.
var perfUsage = []string{
	"gprobe [<options>] 'PROBEDEF' ['PROBEDEF' ...]",
	"gprobe [<options>] --add 'PROBEDEF' [--add 'PROBEDEF' ...]",
	"gprobe [<options>] --del '[GROUP:]EVENT' ...",
	"gprobe --list [GROUP:]EVENT ...",
	"gprobe [<options>] --line 'LINEDESC'",
	"gprobe [<options>] --vars 'PROBEPOINT'",
	"gprobe [<options>] --funcs",
	"gprobe COMMAND [<options>] ...   (COMMAND: gprobe --help)",
}

// usageText is perf's usage block without the options.
var usageText = func() string {
	var b strings.Builder
	(&clikit.Options{Usage: perfUsage, W: &b}).UsageFor(true, "", true)
	return strings.TrimPrefix(b.String(), "\n")
}()

// The defaults of perf's filters (builtin-probe.c).
const (
	defaultFuncFilter = "!_* & !*@plt"
	defaultListFilter = "*"
)

// probedefArgh is perf's PROBEDEF_STR.
const probedefArgh = "[EVENT=]FUNC[@SRC][+OFF|%return|:RL|;PT]|SRC:AL|SRC;PT [[NAME=]ARG ...]"

// perfOption is what perf probe says of one of its options.
type perfOption struct {
	short     byte
	arg       clikit.ArgKind
	def       string // a LastDefault option's value when none follows
	argh      string
	help      string
	exclusive bool
}

// perfProbeOptions are perf probe 6.1's options, by long name.
var perfProbeOptions = map[string]perfOption{
	"verbose": {short: 'v', help: "be more verbose (show parsed arguments, etc)"},
	"quiet":   {short: 'q', help: "be quiet (do not show any warnings or messages)"},
	"list":    {short: 'l', arg: clikit.LastDefault, def: defaultListFilter, argh: "[GROUP:]EVENT", help: "list up probe events", exclusive: true},
	"del":     {short: 'd', arg: clikit.Value, argh: "[GROUP:]EVENT", help: "delete a probe event.", exclusive: true},
	"add": {short: 'a', arg: clikit.Value, argh: probedefArgh, exclusive: true, help: "probe point definition, where\n" +
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
		"\t\t\tkprobe-tracer argument format.)\n"},
	"definition":      {short: 'D', arg: clikit.Value, argh: probedefArgh, help: "Show trace event definition of given traceevent for k/uprobe_events.", exclusive: true},
	"force":           {short: 'f', help: "forcibly add events with existing name"},
	"line":            {short: 'L', arg: clikit.Value, argh: "FUNC[:RLN[+NUM|-RLN2]]|SRC:ALN[+NUM|-ALN2]", help: "Show source code lines.", exclusive: true},
	"vars":            {short: 'V', arg: clikit.Value, argh: "FUNC[@SRC][+OFF|%return|:RL|;PT]|SRC:AL|SRC;PT", help: "Show accessible variables on PROBEDEF", exclusive: true},
	"externs":         {help: "Show external variables too (with --vars only)"},
	"range":           {help: "Show variables location range in scope (with --vars only)"},
	"vmlinux":         {short: 'k', arg: clikit.Value, argh: "file", help: "vmlinux pathname"},
	"source":          {short: 's', arg: clikit.Value, argh: "directory", help: "path to kernel source"},
	"no-inlines":      {help: "Don't search inlined functions"},
	"dry-run":         {short: 'n', help: "dry run"},
	"max-probes":      {arg: clikit.Integer, help: "Set how many probe points can be found for a probe."},
	"funcs":           {short: 'F', arg: clikit.LastDefault, def: defaultFuncFilter, argh: "[FILTER]", help: "Show potential probe-able functions.", exclusive: true},
	"filter":          {arg: clikit.Value, argh: "[!]FILTER", help: "Set a filter (with --vars/funcs only)\n\t\t\t(default: \"" + defaultVarFilter + "\" for --vars,\n\t\t\t \"" + defaultFuncFilter + "\" for --funcs)"},
	"exec":            {short: 'x', arg: clikit.Value, argh: "executable|path", help: "target executable name or path"},
	"module":          {short: 'm', arg: clikit.Value, argh: "modname|path", help: "target module name (for online) or path (for offline)"},
	"demangle":        {help: "Enable symbol demangling"},
	"demangle-kernel": {help: "Enable kernel symbol demangling"},
	"cache":           {help: "Manipulate probe cache"},
	"symfs":           {arg: clikit.Value, argh: "directory", help: "Look for files with symbols relative to this directory"},
	"target-ns":       {arg: clikit.Value, argh: "pid", help: "target pid for namespace contexts"},
	"bootconfig":      {help: "Output probe definition with bootconfig format"},
}

// maxProbeEvents is perf's MAX_PROBES: the 128th probe definition of a
// command is refused.
const maxProbeEvents = 128

// perfState is what perf probe's option callbacks record (builtin-probe.c's
// params), for the checks after the parse and for the command.
type perfState struct {
	verbose    int
	quiet      bool
	command    byte     // the mode: 'a', 'D', 'd', 'l', 'L', 'V', 'F', or 0
	events     []string // the -a, -D and -V definitions, in order
	line       string   // the first -L
	filters    []string // -l, -d and -F (their values or defaults) and --filter, in order
	target     string   // -x or -m, as given
	uprobes    bool     // the target is -x
	targetUsed bool     // a definition followed the target
	targets    []string // every -x and -m, as given
	dynamic    bool     // --fprobe, --tracepoint or --event: -D and -a give no perf PROBEDEF
	retInsn    bool     // --ret-insn: -L gives FUNC[%return] (showExits reads it)
	firstPath  bool     // the first operand is the target (an absolute path)
}

// filter is the filter perf builds from filters (strfilter__or of each),
// or def when there is none.
func (st *perfState) filter(def string) string {
	if st == nil || len(st.filters) == 0 {
		return def
	}
	return spec.OrFilters(st.filters)
}

// perfOrder is the order of perf probe's option table: where an option
// is looked up by a prefix of its name (an abbreviation, the help after a
// long option), the order decides.
var perfOrder = []string{"verbose", "quiet", "list", "del", "add", "definition", "force", "line", "vars", "externs",
	"range", "vmlinux", "source", "no-inlines", "dry-run", "max-probes", "funcs", "filter", "exec", "module",
	"demangle", "demangle-kernel", "cache", "symfs", "target-ns", "bootconfig"}

// perfOptions is the root command's option table: every root flag, with
// perf's short name, value, help and exclusivity where perf has the
// option (in perf's order, gprobe's own after them), and st's callbacks
// (none when st is nil).
func (a *app) perfOptions(st *perfState, w io.Writer) *clikit.Options {
	o := &clikit.Options{Usage: perfUsage, W: w, Suggest: clikit.Suggest}
	opts := clikit.OptionsOf(a.cliApp().Flags)
	rank := func(long string) int {
		if i := slices.Index(perfOrder, long); i >= 0 {
			return i
		}
		return len(perfOrder)
	}
	slices.SortStableFunc(opts, func(x, y clikit.Option) int { return rank(x.Long) - rank(y.Long) })
	for _, opt := range opts {
		if m, ok := perfProbeOptions[opt.Long]; ok {
			opt.Short, opt.Arg, opt.Default, opt.Argh, opt.Help, opt.Exclusive = m.short, m.arg, m.def, m.argh, m.help, m.exclusive
		}
		if st != nil {
			opt.Set = a.perfCallback(st, opt, o)
		}
		o.Options = append(o.Options, opt)
	}
	return o
}

// perfCallback is perf's callback (or variable) for one option.
func (a *app) perfCallback(st *perfState, opt clikit.Option, o *clikit.Options) func(string, bool) bool {
	switch opt.Long {
	case "verbose":
		return func(_ string, unset bool) bool {
			if st.verbose++; unset {
				st.verbose = 0
			}
			return true
		}
	case "quiet":
		return func(_ string, unset bool) bool { st.quiet = !unset; return true }
	case "add", "definition":
		return func(v string, unset bool) bool {
			if unset {
				return true
			}
			st.command = opt.Short
			return a.perfEvent(st, v) != nil
		}
	case "vars":
		return func(v string, unset bool) bool {
			if unset {
				return true
			}
			p := a.perfEvent(st, v)
			if p != nil && len(p.Args) != 0 {
				fmt.Fprint(o.W, "  Error: '--vars' doesn't accept arguments.\n")
				return false
			}
			st.command = 'V'
			return p != nil
		}
	case "line":
		return func(v string, unset bool) bool {
			if unset {
				return true
			}
			if st.command == 'L' {
				fmt.Fprint(o.W, "Warning: more than one --line options are detected. Only the first one is valid.\n")
				return true
			}
			st.command, st.line = 'L', v
			if st.retInsn {
				return true
			}
			lr, err := spec.ParseLineRange(v)
			if err != nil {
				fmt.Fprintln(o.W, perfMessage(err))
				return false
			}
			if st.verbose > 0 && strings.Contains(v, ":") {
				fmt.Fprintf(a.stderr, "Line range is %d to %d\n", lr.Start, lr.End)
			}
			return true
		}
	case "list", "del", "funcs":
		return func(v string, unset bool) bool {
			if !unset {
				st.command = opt.Short
			}
			return unset || a.perfFilter(st, v, o.W)
		}
	case "filter":
		return func(v string, unset bool) bool { return unset || a.perfFilter(st, v, o.W) }
	case "exec", "module":
		return func(v string, unset bool) bool {
			if unset {
				return false // perf's opt_set_target: -ENOENT
			}
			st.uprobes = opt.Long == "exec"
			if st.uprobes || strings.Contains(v, "/") {
				if _, err := realpath(v); err != nil {
					fmt.Fprintf(o.W, "Failed to get the absolute path of %s: %s\n", v, err)
					return false
				}
			}
			st.target, st.targetUsed = v, false
			st.targets = append(st.targets, v)
			return true
		}
	}
	return nil
}

// perfEvent is perf's parse_probe_event for a definition of -a, -D or -V
// (with -v, what perf prints while parsing it): the parsed definition, or
// nil after printing why it does not parse.
func (a *app) perfEvent(st *perfState, def string) *spec.Probe {
	if st.verbose > 0 {
		fmt.Fprintf(a.stderr, "probe-definition(%d): %s\n", len(st.events), def)
	}
	st.events = append(st.events, def)
	if len(st.events) == maxProbeEvents {
		fmt.Fprintf(a.stderr, "Too many probes (> %d) were specified.", maxProbeEvents)
		return nil
	}
	if st.target != "" {
		st.targetUsed = true
	}
	if st.dynamic {
		return &spec.Probe{}
	}
	p, err := spec.ParseProbeOpts(def, spec.Options{EntryValues: !st.uprobes})
	if err != nil {
		fmt.Fprintln(a.stderr, perfMessage(err))
		return nil
	}
	if st.verbose > 0 {
		for _, l := range p.DebugLines() {
			fmt.Fprintln(a.stderr, l)
		}
	}
	return p
}

// perfFilter is perf's params_add_filter: the filter is parsed (perf's
// message when it does not) and added.
func (a *app) perfFilter(st *perfState, v string, w io.Writer) bool {
	if _, err := spec.ParseFilter(v); err != nil {
		fmt.Fprintln(w, err)
		return false
	}
	st.filters = append(st.filters, v)
	return true
}

// realpath is realpath(3): the absolute path of p with every symbolic
// link resolved; its error is C's strerror text.
func realpath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		var no syscall.Errno
		if errors.As(err, &no) {
			return "", errors.New(strerror(no))
		}
		return "", err
	}
	return abs, nil
}

// strerror is C's strerror text for no ("No such file or directory").
func strerror(no syscall.Errno) string {
	s := no.Error()
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// perfParse parses args (args[0] is the program's name) as perf probe
// does and makes perf's checks after the parse (__cmd_probe). It returns
// the arguments urfave/cli runs the command from, or done with the exit
// status when perf would have ended there (its report printed).
func (a *app) perfParse(args []string) (run []string, status int, done bool) {
	for _, arg := range args[1:] {
		if arg == "-h" || arg == "--help" || arg == "--version" || arg == "help" {
			return args, 0, false // gprobe's own help
		}
		if !strings.HasPrefix(arg, "-") || arg == "--" {
			break
		}
	}
	st := &perfState{}
	// The modes whose -D and -a values are not PROBEDEFs (--fprobe,
	// --tracepoint, --event), or whose -L is not a LINEDESC (--ret-insn),
	// may follow them: a first pass finds them.
	if pre, ok := a.perfOptions(nil, io.Discard).Parse(args[1:]); ok {
		for _, c := range pre.Canonical {
			name, _, _ := strings.Cut(c, "=")
			switch name {
			case "--fprobe", "--tracepoint", "--event":
				st.dynamic = true
			case "--ret-insn":
				st.retInsn = true
			}
		}
	}
	o := a.perfOptions(st, a.stderr)
	parsed, ok := o.Parse(args[1:])
	if !ok {
		return nil, exitUsage, true
	}
	a.perf = st
	run = append(append([]string{args[0]}, parsed.Canonical...), parsed.Operands...)
	if len(parsed.Operands) > 0 && st.command == 0 && a.isSubcommand(parsed.Operands[0]) {
		return run, 0, false
	}
	if st.quiet && st.verbose > 0 {
		fmt.Fprint(a.stderr, "  Error: -v and -q are exclusive.\n")
		return nil, exitEINVAL, true
	}
	if ops := parsed.Operands; len(ops) > 0 {
		if ops[0] == "-" {
			o.WriteUsage("'-' is not supported.\n")
			return nil, exitUsage, true
		}
		if st.command != 0 && st.command != 'a' {
			o.WriteUsage("another command except --add is set.\n")
			return nil, exitUsage, true
		}
		// parse_probe_event_argv: an absolute path first names the target
		// (set_target), the other operands are one more definition.
		if st.target == "" && strings.HasPrefix(ops[0], "/") {
			st.target, st.targetUsed, st.firstPath = ops[0], false, true
			st.uprobes = !strings.HasSuffix(ops[0], ".ko")
			ops = ops[1:]
		}
		if len(ops) > 0 {
			if status, ok := a.perfOperands(st, ops); !ok {
				return nil, status, true
			}
		}
		st.command = 'a'
	}
	// symbol__validate_sym_arguments
	if k := a.flagValue(parsed.Canonical, "vmlinux"); k != "" && syscall.Access(k, 4 /* R_OK */) != nil {
		fmt.Fprintf(a.stderr, "Invalid file: %s\n", k)
		return nil, exitEINVAL, true
	}
	switch st.command {
	case 'l':
		if st.uprobes {
			fmt.Fprint(a.stderr, "  Error: Don't use --list with --exec.\n")
			o.UsageFor(true, "l", true)
			o.UsageFor(false, "x", true)
			return nil, exitEINVAL, true
		}
	case 'a', 'D':
		if st.target != "" && !st.targetUsed {
			fmt.Fprint(a.stderr, "  Error: -x/-m must follow the probe definitions.\n")
			o.UsageFor(true, "m", true)
			o.UsageFor(false, "x", true)
			return nil, exitEINVAL, true
		}
	case 0:
		if !a.gprobeMode(parsed.Canonical) {
			o.WriteUsage("")
			return nil, exitUsage, true
		}
	}
	for _, t := range st.targets {
		if t != st.targets[0] {
			fmt.Fprintf(a.stderr, "  Error: gprobe takes one -x/-m target per command (%s, then %s): run it once per target.\n", st.targets[0], t)
			return nil, exitEINVAL, true
		}
	}
	return run, 0, false
}

// perfOperands is parse_probe_event_argv's parse of the operands as one
// more definition; false with the exit status when it does not parse.
func (a *app) perfOperands(st *perfState, ops []string) (int, bool) {
	def := strings.Join(ops, " ") + " "
	if st.verbose > 0 {
		fmt.Fprintf(a.stderr, "probe-definition(%d): %s\n", len(st.events), def)
	}
	st.events = append(st.events, def)
	if len(st.events) == maxProbeEvents {
		if !st.quiet {
			fmt.Fprintf(a.stderr, "Too many probes (> %d) were specified.  Error: Command Parse Error.\n", maxProbeEvents)
		}
		return 255, false // perf returns -1
	}
	if !st.dynamic {
		p, err := spec.ParseProbeOpts(def, spec.Options{EntryValues: !st.uprobes})
		if err != nil {
			if !st.quiet {
				fmt.Fprintf(a.stderr, "%s\n  Error: Command Parse Error.\n", perfMessage(err))
			}
			return parseStatus(err), false
		}
		if st.verbose > 0 {
			for _, l := range p.DebugLines() {
				fmt.Fprintln(a.stderr, l)
			}
		}
	}
	if st.target != "" {
		st.targetUsed = true
	}
	return 0, true
}

// gprobeMode reports whether the canonical options ask for something
// only gprobe does without one of perf's modes (none today: --ret-insn
// and --boot go with one; they are refused by the command).
func (a *app) gprobeMode(canonical []string) bool {
	for _, c := range canonical {
		name, _, _ := strings.Cut(c, "=")
		if name == "--ret-insn" || name == "--boot" {
			return true
		}
	}
	return false
}

// flagValue is the last value of --name in canonical options.
func (a *app) flagValue(canonical []string, name string) string {
	v := ""
	for _, c := range canonical {
		if rest, ok := strings.CutPrefix(c, "--"+name+"="); ok {
			v = rest
		}
	}
	return v
}

// parseStatus is perf's exit status for a positional definition that does
// not parse: 256 - the parser's errno.
func parseStatus(err error) int {
	var se *spec.SyntaxError
	if errors.As(err, &se) && se.Errno != 0 {
		return 256 - int(se.Errno)
	}
	return exitEINVAL
}
