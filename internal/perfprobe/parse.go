package perfprobe

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"syscall"

	"github.com/gprobe/gprobe/internal/clikit"
	"github.com/gprobe/gprobe/resolve/spec"
	"github.com/urfave/cli/v2"
)

// perf's exit statuses for a refused command line.
const (
	StatusUsage  = 129 // parse-options' usage
	StatusEINVAL = 256 - int(syscall.EINVAL)
)

// Parser parses a command's options as perf probe does.
type Parser struct {
	// Flags are the command's flags (see Options).
	Flags []cli.Flag
	// W receives perf's reports (its stderr).
	W io.Writer
	// IsCommand reports whether a first operand names a subcommand of the
	// command's own (run as given, without perf's checks).
	IsCommand func(string) bool
	// Dynamic are the options (long names) after which -D and -a take no
	// PROBEDEF (gprobe's fprobe): they may come after those.
	Dynamic []string
	// LineFunc are the options (long names) after which -L takes
	// FUNC[%return], not a LINEDESC.
	LineFunc []string
	// Namespace are the options (long names) whose value names a process
	// whose mount namespace -x's path is in, wherever they come: the path
	// is not checked here.
	Namespace []string
	// Raw reports whether a definition is one of the command's own (a
	// kprobe_events line), not parsed as a PROBEDEF.
	Raw func(string) bool
	// Modes are the options (long names) that are a mode of their own,
	// without one of perf's.
	Modes []string
}

// Parse parses args (args[0] is the program's name) as perf probe does and
// makes perf's checks after the parse (__cmd_probe). It returns the
// arguments to run the command from (program name, the options in their
// canonical spelling, the operands) and what the callbacks recorded; or,
// with done, the exit status where perf would have ended (its report
// written). --help, -h, --version and help before any operand are run as
// given, without a State.
func (p *Parser) Parse(args []string) (run []string, st *State, status int, done bool) {
	for _, arg := range args[1:] {
		if arg == "-h" || arg == "--help" || arg == "--version" || arg == "help" {
			return args, nil, 0, false
		}
		if !strings.HasPrefix(arg, "-") || arg == "--" {
			break
		}
	}
	st = &State{w: p.W, raw: p.Raw}
	// The modes that change what -D, -a and -L take may follow them: a
	// first pass finds them.
	if pre, ok := Options(p.Flags, nil, io.Discard).Parse(args[1:]); ok {
		for _, c := range pre.Canonical {
			name, _, _ := strings.Cut(strings.TrimPrefix(c, "--"), "=")
			st.dynamic = st.dynamic || slices.Contains(p.Dynamic, name)
			st.lineFunc = st.lineFunc || slices.Contains(p.LineFunc, name)
			st.otherNS = st.otherNS || slices.Contains(p.Namespace, name) && !strings.HasSuffix(c, "=")
		}
	}
	o := Options(p.Flags, st, p.W)
	parsed, ok := o.Parse(args[1:])
	if !ok {
		return nil, nil, StatusUsage, true
	}
	run = append(append([]string{args[0]}, parsed.Canonical...), parsed.Operands...)
	if ops := parsed.Operands; len(ops) > 0 && st.command == 0 && p.IsCommand != nil && p.IsCommand(ops[0]) {
		return run, st, 0, false
	}
	if st.quiet && st.Verbose > 0 {
		fmt.Fprint(p.W, "  Error: -v and -q are exclusive.\n")
		return nil, nil, StatusEINVAL, true
	}
	if status, ok := p.operands(o, st, parsed.Operands); !ok {
		return nil, nil, status, true
	}
	if status, ok := p.check(o, st, parsed.Canonical); !ok {
		return nil, nil, status, true
	}
	return run, st, 0, false
}

// operands is cmd_probe's handling of the operands: a definition of
// their own (parse_probe_event_argv), after the target when the first is
// an absolute path (set_target).
func (p *Parser) operands(o *clikit.Options, st *State, ops []string) (int, bool) {
	if len(ops) == 0 {
		return 0, true
	}
	if ops[0] == "-" {
		o.WriteUsage("'-' is not supported.\n")
		return StatusUsage, false
	}
	if st.command != 0 && st.command != 'a' {
		o.WriteUsage("another command except --add is set.\n")
		return StatusUsage, false
	}
	if st.target == "" && strings.HasPrefix(ops[0], "/") {
		st.target, st.targetUsed, st.FirstPath = ops[0], false, true
		st.uprobes = !strings.HasSuffix(ops[0], ".ko")
		ops = ops[1:]
	}
	st.command = 'a'
	if len(ops) == 0 {
		return 0, true
	}
	def := strings.Join(ops, " ") + " "
	if st.Verbose > 0 {
		fmt.Fprintf(p.W, "probe-definition(%d): %s\n", len(st.Events), def)
	}
	st.Events = append(st.Events, def)
	if len(st.Events) == MaxProbes {
		if !st.quiet {
			fmt.Fprintf(p.W, "Too many probes (> %d) were specified.  Error: Command Parse Error.\n", MaxProbes)
		}
		return 255, false // perf returns -1
	}
	if !st.own(strings.Join(ops, " ")) {
		d, err := spec.ParseProbeOpts(def, spec.Options{EntryValues: !st.uprobes})
		if err != nil {
			if !st.quiet {
				fmt.Fprintf(p.W, "%s\n  Error: Command Parse Error.\n", Message(err))
			}
			return parseStatus(err), false
		}
		st.debugLines(d)
	}
	if st.target != "" {
		st.targetUsed = true
	}
	return 0, true
}

// check makes perf's checks after the options are parsed (canonical: the
// options as Parse spells them).
func (p *Parser) check(o *clikit.Options, st *State, canonical []string) (int, bool) {
	// symbol__validate_sym_arguments
	if k := lastValue(canonical, "vmlinux"); k != "" && syscall.Access(k, 4 /* R_OK */) != nil {
		fmt.Fprintf(p.W, "Invalid file: %s\n", k)
		return StatusEINVAL, false
	}
	switch st.command {
	case 'l':
		if st.uprobes {
			fmt.Fprint(p.W, "  Error: Don't use --list with --exec.\n")
			o.UsageFor(true, "l", true)
			o.UsageFor(false, "x", true)
			return StatusEINVAL, false
		}
	case 'a', 'D':
		if st.command == 'D' && st.uprobes && slices.Contains(canonical, "--bootconfig") {
			fmt.Fprint(p.W, "  Error: --bootconfig doesn't support uprobes.\n")
			return StatusEINVAL, false
		}
		if st.target != "" && !st.targetUsed {
			fmt.Fprint(p.W, "  Error: -x/-m must follow the probe definitions.\n")
			o.UsageFor(true, "m", true)
			o.UsageFor(false, "x", true)
			return StatusEINVAL, false
		}
	case 0:
		if !slices.ContainsFunc(canonical, func(c string) bool {
			name, _, _ := strings.Cut(strings.TrimPrefix(c, "--"), "=")
			return slices.Contains(p.Modes, name)
		}) {
			o.WriteUsage("")
			return StatusUsage, false
		}
	}
	for _, t := range st.targets {
		if t != st.targets[0] {
			fmt.Fprintf(p.W, "  Error: gprobe takes one -x/-m target per command (%s, then %s): run it once per target.\n", st.targets[0], t)
			return StatusEINVAL, false
		}
	}
	return 0, true
}

// lastValue is the last value of --name in canonical options.
func lastValue(canonical []string, name string) string {
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
	return StatusEINVAL
}
