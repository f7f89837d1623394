package perfprobe

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gprobe/gprobe/internal/clikit"
	"github.com/gprobe/gprobe/resolve/spec"
)

// State is what perf probe's option callbacks record (builtin-probe.c's
// params), for the checks after the parse and for the command.
type State struct {
	// Verbose is how many -v were given.
	Verbose int
	// Events are the -a, -D and -V definitions and the operands' one, in
	// order.
	Events []string
	// Line is the first -L.
	Line string
	// FirstPath says that the first operand is the target (an absolute
	// path, perf's set_target), not part of the definition.
	FirstPath bool

	w          io.Writer
	quiet      bool
	command    byte              // the mode: 'a', 'D', 'd', 'l', 'L', 'V', 'F', or 0
	filters    []string          // -l, -d and -F (their values or defaults) and --filter, in order
	target     string            // -x or -m, as given
	uprobes    bool              // the target is -x
	targetUsed bool              // a definition followed the target
	targets    []string          // every -x and -m, as given
	dynamic    bool              // -D and -a give no perf PROBEDEF (Parser.Dynamic)
	raw        func(string) bool // Parser.Raw
	otherNS    bool              // paths are another mount namespace's (Parser.Namespace)
	lineFunc   bool              // -L gives FUNC[%return] (Parser.LineFunc)
}

// Filter is the filter perf builds from the filters given (strfilter__or
// of each), or def when there is none.
func (st *State) Filter(def string) string {
	if st == nil || len(st.filters) == 0 {
		return def
	}
	return spec.OrFilters(st.filters)
}

// FirstTarget splits the root command's operands: with FirstPath the
// first names the target as perf's set_target takes it (a kernel module
// when it ends in .ko, else a binary whose path is used as given) and the
// rest are the definition's words; otherwise they all are. st may be nil.
func (st *State) FirstTarget(operands []string) (exec, module string, rest []string) {
	switch {
	case st == nil || !st.FirstPath || len(operands) == 0:
		return "", "", operands
	case strings.HasSuffix(operands[0], ".ko"):
		return "", operands[0], operands[1:]
	}
	return operands[0], "", operands[1:]
}

// callback is perf's callback (or variable) for one option.
func (st *State) callback(opt clikit.Option) func(string, bool) bool {
	switch opt.Long {
	case "verbose":
		return func(_ string, unset bool) bool {
			if st.Verbose++; unset {
				st.Verbose = 0
			}
			return true
		}
	case "quiet":
		return func(_ string, unset bool) bool { st.quiet = !unset; return true }
	case "add", "definition":
		return func(v string, unset bool) bool {
			if !unset {
				st.command = opt.Short
			}
			return unset || st.event(v) != nil
		}
	case "vars":
		return st.vars
	case "line":
		return st.line
	case "list", "del", "funcs":
		return func(v string, unset bool) bool {
			if !unset {
				st.command = opt.Short
			}
			return unset || st.filter(v)
		}
	case "filter":
		return func(v string, unset bool) bool { return unset || st.filter(v) }
	case "exec", "module":
		return func(v string, unset bool) bool { return st.setTarget(opt.Long == "exec", v, unset) }
	}
	return nil
}

// VarsArgs is perf's refusal of a -V definition with arguments (its
// option callback's line, which the usage and -V's help follow).
const VarsArgs = "  Error: '--vars' doesn't accept arguments."

// vars is -V's callback: a definition without arguments.
func (st *State) vars(v string, unset bool) bool {
	if unset {
		return true
	}
	p := st.event(v)
	if p != nil && len(p.Args) != 0 {
		fmt.Fprintln(st.w, VarsArgs)
		return false
	}
	st.command = 'V'
	return p != nil
}

// line is -L's callback: the first LINEDESC is kept, the others warned of.
func (st *State) line(v string, unset bool) bool {
	if unset {
		return true
	}
	if st.command == 'L' {
		fmt.Fprint(st.w, "Warning: more than one --line options are detected. Only the first one is valid.\n")
		return true
	}
	st.command, st.Line = 'L', v
	if st.lineFunc {
		return true
	}
	lr, err := spec.ParseLineRange(v)
	if err != nil {
		fmt.Fprintln(st.w, Message(err))
		return false
	}
	if st.Verbose > 0 && strings.Contains(v, ":") {
		fmt.Fprintf(st.w, "Line range is %d to %d\n", lr.Start, lr.End)
	}
	return true
}

// setTarget is perf's opt_set_target for -x (exec) and -m.
func (st *State) setTarget(exec bool, v string, unset bool) bool {
	if unset {
		return false // -ENOENT
	}
	st.uprobes = exec
	// In another mount namespace the path is checked where it is, when
	// the target is opened (perf's nsinfo__realpath, which perf uses only
	// when --target-ns comes first).
	if (exec || strings.Contains(v, "/")) && !st.otherNS {
		if _, err := realpath(v); err != nil {
			fmt.Fprintf(st.w, "Failed to get the absolute path of %s: %s\n", v, err)
			return false
		}
	}
	st.target, st.targetUsed = v, false
	st.targets = append(st.targets, v)
	return true
}

// event is perf's parse_probe_event for a definition of -a, -D or -V
// (with -v, what perf prints while parsing it): the parsed definition, or
// nil after printing why it does not parse.
func (st *State) event(def string) *spec.Probe {
	if st.Verbose > 0 {
		fmt.Fprintf(st.w, "probe-definition(%d): %s\n", len(st.Events), def)
	}
	st.Events = append(st.Events, def)
	if len(st.Events) == MaxProbes {
		fmt.Fprintf(st.w, "Too many probes (> %d) were specified.", MaxProbes)
		return nil
	}
	if st.target != "" {
		st.targetUsed = true
	}
	if st.own(def) {
		return &spec.Probe{}
	}
	p, err := spec.ParseProbeOpts(def, spec.Options{EntryValues: !st.uprobes})
	if err != nil {
		fmt.Fprintln(st.w, Message(err))
		return nil
	}
	st.debugLines(p)
	return p
}

// own reports whether def is the command's own, not a PROBEDEF.
func (st *State) own(def string) bool { return st.dynamic || st.raw != nil && st.raw(def) }

// debugLines prints, with -v, what perf prints of a parsed definition.
func (st *State) debugLines(p *spec.Probe) {
	if st.Verbose > 0 {
		for _, l := range p.DebugLines() {
			fmt.Fprintln(st.w, l)
		}
	}
}

// filter is perf's params_add_filter: the filter is parsed (perf's
// message when it does not) and added.
func (st *State) filter(v string) bool {
	if _, err := spec.ParseFilter(v); err != nil {
		fmt.Fprintln(st.w, err)
		return false
	}
	st.filters = append(st.filters, v)
	return true
}

// Message is perf's message for a definition that does not parse.
func Message(err error) string {
	var se *spec.SyntaxError
	if errors.As(err, &se) && se.Perf != "" {
		return se.Perf
	}
	return err.Error()
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
			return "", errors.New(Strerror(no))
		}
		return "", err
	}
	return abs, nil
}

// Strerror is C's strerror text for no ("No such file or directory").
func Strerror(no syscall.Errno) string {
	s := no.Error()
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}
