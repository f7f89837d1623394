// Package perfprobe is perf probe 6.1's command line (builtin-probe.c
// with tools/lib/subcmd's parse-options, through clikit.Options) for a
// command that takes it: the same command lines are accepted, the same ones
// refused with the same words, usage, option help and exit status, and
// what perf's option callbacks record is kept (State) for the command to
// run from. Options perf has not (a command's own) are parsed alike after
// perf's.
package perfprobe

import (
	"io"
	"slices"
	"strings"

	"github.com/gprobe/gprobe/internal/clikit"
	"github.com/urfave/cli/v2"
)

// usage are perf probe's usage lines, for gprobe; the last names the
// commands perf has not.
var usage = []string{
	"gprobe [<options>] 'PROBEDEF' ['PROBEDEF' ...]",
	"gprobe [<options>] --add 'PROBEDEF' [--add 'PROBEDEF' ...]",
	"gprobe [<options>] --del '[GROUP:]EVENT' ...",
	"gprobe --list [GROUP:]EVENT ...",
	"gprobe [<options>] --line 'LINEDESC'",
	"gprobe [<options>] --vars 'PROBEPOINT'",
	"gprobe [<options>] --funcs",
	"gprobe COMMAND [<options>] ...   (COMMAND: gprobe --help)",
}

// The defaults of perf's filters (builtin-probe.c).
const (
	DefaultFuncFilter = "!_* & !*@plt"
	DefaultListFilter = "*"
	DefaultVarFilter  = "!__k???tab_* & !__crc_*"
)

// MaxProbes is perf's MAX_PROBES: the 128th probe definition of a command
// is refused.
const MaxProbes = 128

// probedefArgh is perf's PROBEDEF_STR.
const probedefArgh = "[EVENT=]FUNC[@SRC][+OFF|%return|:RL|;PT]|SRC:AL|SRC;PT [[NAME=]ARG ...]"

// option is what perf probe says of one of its options.
type option struct {
	short     byte
	arg       clikit.ArgKind
	def       string // a LastDefault option's value when none follows
	argh      string
	help      string
	exclusive bool
}

// options are perf probe 6.1's options, by long name.
var options = map[string]option{
	"verbose": {short: 'v', help: "be more verbose (show parsed arguments, etc)"},
	"quiet":   {short: 'q', help: "be quiet (do not show any warnings or messages)"},
	"list":    {short: 'l', arg: clikit.LastDefault, def: DefaultListFilter, argh: "[GROUP:]EVENT", help: "list up probe events", exclusive: true},
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
	"funcs":           {short: 'F', arg: clikit.LastDefault, def: DefaultFuncFilter, argh: "[FILTER]", help: "Show potential probe-able functions.", exclusive: true},
	"filter":          {arg: clikit.Value, argh: "[!]FILTER", help: "Set a filter (with --vars/funcs only)\n\t\t\t(default: \"" + DefaultVarFilter + "\" for --vars,\n\t\t\t \"" + DefaultFuncFilter + "\" for --funcs)"},
	"exec":            {short: 'x', arg: clikit.Value, argh: "executable|path", help: "target executable name or path"},
	"module":          {short: 'm', arg: clikit.Value, argh: "modname|path", help: "target module name (for online) or path (for offline)"},
	"demangle":        {help: "Enable symbol demangling"},
	"demangle-kernel": {help: "Enable kernel symbol demangling"},
	"cache":           {help: "Manipulate probe cache"},
	"symfs":           {arg: clikit.Value, argh: "directory", help: "Look for files with symbols relative to this directory"},
	"target-ns":       {arg: clikit.Value, argh: "pid", help: "target pid for namespace contexts"},
	"bootconfig":      {help: "Output probe definition with bootconfig format"},
}

// IsPerfOption reports whether perf probe has the option long.
func IsPerfOption(long string) bool {
	_, ok := options[long]
	return ok
}

// order is the order of perf probe's option table: where an option is
// looked up by a prefix of its name (an abbreviation, the help after a
// long option), the order decides.
var order = []string{"verbose", "quiet", "list", "del", "add", "definition", "force", "line", "vars", "externs",
	"range", "vmlinux", "source", "no-inlines", "dry-run", "max-probes", "funcs", "filter", "exec", "module",
	"demangle", "demangle-kernel", "cache", "symfs", "target-ns", "bootconfig"}

// Options is the option table of a command whose flags are flags: every
// flag, with perf's short name, value, help and exclusivity where perf has
// the option (in perf's order, the command's own after them), and st's
// callbacks (none when st is nil); reports go to w.
func Options(flags []cli.Flag, st *State, w io.Writer) *clikit.Options {
	o := &clikit.Options{Usage: usage, W: w, Suggest: clikit.Suggest}
	opts := clikit.OptionsOf(flags)
	rank := func(long string) int {
		if i := slices.Index(order, long); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(opts, func(x, y clikit.Option) int { return rank(x.Long) - rank(y.Long) })
	for _, opt := range opts {
		if m, ok := options[opt.Long]; ok {
			opt.Short, opt.Arg, opt.Default, opt.Argh, opt.Help, opt.Exclusive = m.short, m.arg, m.def, m.argh, m.help, m.exclusive
		}
		if st != nil {
			opt.Set = st.callback(opt)
		}
		o.Options = append(o.Options, opt)
	}
	return o
}

// UsageText is perf's usage block without the options.
func UsageText() string {
	var b strings.Builder
	(&clikit.Options{Usage: usage, W: &b}).UsageFor(true, "", true)
	return strings.TrimPrefix(b.String(), "\n")
}
