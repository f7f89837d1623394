package spec

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/gprobe/gprobe/emit/probedef"
)

// Probe is a parsed probe definition: a point and its arguments (perf's
// struct perf_probe_event, as produced by parse_perf_probe_command).
type Probe struct {
	Point Point
	Args  []Arg
	// UserEvent is true when the user gave EVENT (Point.Event). When false,
	// Point.Event is either "" or the name perf generates for FUNC:RLN
	// probes, "<FUNC>_L<RLN>".
	UserEvent bool
}

// ParseProbe parses a probe definition "POINT [ARG ...]" like perf's
// parse_perf_probe_command(): the text is split into words at runs of white
// space (no quoting), the first word is the point and the rest are arguments.
//
// Perf behaviour reproduced: more than probedef.MaxTraceArgs (perf's MAX_PROBE_ARGS, the kernel's MAX_TRACE_ARGS) arguments is an error
// checked before anything else; a definition with no words fails without a
// message (SyntaxError.Perf == ""); for FUNC:RLN without EVENT, lazy pattern
// or offset, the event is named "<FUNC>_L<RLN>"; on a %return probe any
// argument whose Var starts like a C variable is rejected. Argument errors
// are reported for the first bad argument only. An SDT point's arguments
// are parsed (their errors count) though perf then ignores them.
func ParseProbe(s string) (*Probe, error) { return ParseProbeOpts(s, Options{}) }

// ParseProbeOpts is ParseProbe with target options.
func ParseProbeOpts(s string, opts Options) (*Probe, error) {
	argv := argvSplitQuoted(cString(s))
	if len(argv)-1 > probedef.MaxTraceArgs {
		return nil, &SyntaxError{Perf: fmt.Sprintf(semanticPrefix+"Too many probe arguments (%d).", len(argv)-1), Errno: syscall.ERANGE}
	}
	if len(argv) == 0 {
		return nil, &SyntaxError{}
	}
	pr := &Probe{}
	if err := parsePoint(argv[0], &pr.Point); err != nil {
		return nil, err
	}
	pt := &pr.Point
	pr.UserEvent = pt.Event != ""
	if !pr.UserEvent && pt.HasFunction && pt.Line != 0 && !pt.HasLazy && pt.Offset == 0 {
		pt.Event = pt.Function + "_L" + strconv.Itoa(pt.Line)
	}
	pr.Args = make([]Arg, 0, len(argv)-1)
	for _, w := range argv[1:] {
		a, err := ParseArgOpts(w, opts)
		if err != nil {
			return nil, err
		}
		if isCVarname(a.Var) && pt.Return && !opts.EntryValues {
			return nil, semErr("You can't specify local variable for kretprobe.")
		}
		pr.Args = append(pr.Args, *a)
	}
	return pr, nil
}

// String is perf's synthesize_perf_probe_command(): "GROUP:EVENT=" when an
// event name is set (GROUP defaulting to "probe"), the point as by
// Point.String, and " ARG" for each argument as by Arg.String.
func (p Probe) String() string {
	var b strings.Builder
	if p.Point.Event != "" {
		g := p.Point.Group
		if g == "" {
			g = DefaultGroup
		}
		b.WriteString(g + ":" + p.Point.Event + "=")
	}
	b.WriteString(p.Point.String())
	for _, a := range p.Args {
		b.WriteString(" " + a.String())
	}
	return b.String()
}

// ArgStrings are the arguments as perf prints them back (Arg.String):
// "n=count:u32", and "f_pos=file->f_pos" (perf names a field after its last
// member).
func (p *Probe) ArgStrings() []string {
	var out []string
	for _, a := range p.Args {
		out = append(out, a.String())
	}
	return out
}
