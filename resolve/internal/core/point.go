package core

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/spec"
)

// TracePoint is perf's probe_trace_point before naming.
type TracePoint struct {
	Addr     uint64 // address in the image
	Symbol   string
	Offset   uint64
	Realname string
	Return   bool
	// Unit is the unit the point came from: its line-table rows are known
	// instruction starts for the boundary check (nil from the symbol table).
	Unit *lines.Unit
	// Args are the converted arguments at this address (DWARF only).
	Args []*TraceArg
	// Overload is, for a point of one of several functions a qualified
	// C++ or Rust name matched (overloads, instances), that function's
	// name with its parameters ("ns::Klass::method(int)"): the event is
	// named after it unless the probe names its event.
	Overload string
}

// Ref is one dereference level (perf's probe_trace_arg_ref).
type Ref struct {
	Off  int64
	User bool
}

// TraceArg is perf's probe_trace_arg while it is being built.
type TraceArg struct {
	Name  string
	Value string // "%di", "@sym", "\5", or raw fetch text
	Refs  []Ref
	Type  string
	Found bool // false: skipped (perf's NULL value), filled in later
	// Static is the address of the static variable Value names ("@sym"),
	// when HasStatic: uprobes cannot fetch a symbol, and take the
	// variable at a file offset instead (Image.FetchArgs).
	Static    uint64
	HasStatic bool
}

// fetch renders the value and its dereference levels the way perf's
// synthesize_probe_trace_arg does.
func (t *TraceArg) fetch() probe.Fetch {
	var f probe.Fetch
	refs := t.Refs
	switch {
	case strings.HasPrefix(t.Value, "@") && !strings.HasPrefix(t.Value, "@+") && len(refs) > 0:
		f = probe.Symbol{Name: t.Value[1:], Off: refs[0].Off}
		refs = refs[1:]
	case strings.HasPrefix(t.Value, "%"):
		f = probe.Reg(t.Value[1:])
	default:
		f = probe.Raw(t.Value)
	}
	for _, r := range refs {
		f = probe.Mem{Off: r.Off, User: r.User, Inner: f}
	}
	return f
}

// FetchArg is the argument as the model holds it.
func (t *TraceArg) FetchArg() probe.FetchArg {
	return probe.FetchArg{Name: t.Name, Expr: t.fetch(), Type: t.Type}
}

// FetchArgs turns converted arguments into fetch args, the way the image
// takes them: in a user binary, a static variable (perf's "@sym+OFF",
// which uprobes refuse) is fetched at its file offset, "@+FILEOFFSET",
// its members' offsets folded in: the kernel adds the probed mapping's
// base (the probe's address less its file offset) to it, so the offset is
// the variable's address less .text's address-offset delta, as the
// probe's own offset is (FileOffset).
func (im *Image) FetchArgs(args []*TraceArg) []probe.FetchArg {
	var out []probe.FetchArg
	for _, a := range args {
		if im.User && a.HasStatic && len(a.Refs) > 0 && strings.HasPrefix(a.Value, "@") {
			b := *a
			b.Value = "@+0x" + strconv.FormatUint(im.FileOffset(a.Static)+uint64(a.Refs[0].Off), 16)
			b.Refs = a.Refs[1:]
			a = &b
		}
		out = append(out, a.FetchArg())
	}
	return out
}

// FetchArgs turns converted arguments into fetch args.
func FetchArgs(args []*TraceArg) []probe.FetchArg {
	var out []probe.FetchArg
	for _, a := range args {
		out = append(out, a.FetchArg())
	}
	return out
}

// RawArgs are the arguments as written, for a place found without debug
// information (the symbol table) or for what is not a variable.
func RawArgs(args []spec.Arg) []probe.FetchArg {
	var out []probe.FetchArg
	for _, a := range args {
		fa := probe.FetchArg{Expr: probe.Raw(a.Var)}
		if a.HasName {
			fa.Name = a.Name
		}
		if a.HasType {
			fa.Type = a.Type
		}
		out = append(out, fa)
	}
	return out
}

// WithVar is perf's perf_probe_with_var.
func WithVar(args []spec.Arg) bool {
	for _, a := range args {
		if spec.IsCVarname(a.Var) || a.Var == "$params" || a.Var == "$vars" {
			return true
		}
	}
	return false
}

// NeedDWARF is perf's perf_probe_event_need_dwarf.
func NeedDWARF(p *spec.Probe) bool {
	pp := p.Point
	if pp.HasFile || pp.Line != 0 || pp.HasLazy {
		return true
	}
	return WithVar(p.Args)
}

// CheckRetval refuses $retval on an entry probe: perf emits it, and the
// kernel then rejects the definition.
func CheckRetval(p *spec.Probe) error {
	for _, a := range p.Args {
		if strings.HasPrefix(a.Var, "$retval") && !p.Point.Return {
			return Errorf(ErrInvalid, "%s is only available on a return probe (FUNC%%return); the kernel rejects it on an entry probe.", a.Var)
		}
	}
	return nil
}

// Group is the group of p's probes: the one written, else perf's default
// for the image (probe, or probe_BINARY for a user binary).
func (im *Image) Group(pp *spec.Point) string {
	group := spec.DefaultGroup
	if im.User {
		group = spec.UprobeGroup(im.File.Path)
	}
	if pp.Group != "" {
		group = pp.Group
	}
	return group
}

// Name assigns group and event names as perf's show_probe_trace_events.
func (im *Image) Name(p *spec.Probe, tps []TracePoint) ([]probe.Probe, error) {
	pp := p.Point
	group := im.Group(&pp)
	used := map[string]bool{}
	var out []probe.Probe
	for _, tp := range tps {
		base := pp.Event
		fn := pp.Function
		// A qualified name with a signature names its one function, though
		// a pointer's '*' makes it a glob.
		signature := Qualified(fn) && strings.Contains(fn, "(")
		switch {
		case base == "" && tp.Overload != "":
			base = SignatureBase(tp.Overload)
		case base == "" && pp.HasFunction && signature:
			base = SignatureBase(fn)
		case base == "":
			if pp.HasFunction && !strings.HasPrefix(fn, "0x") && !spec.IsGlob(fn) {
				base = fn
			} else {
				base = tp.Realname
			}
		}
		ev, err := newEventName(base, tp.Return, used)
		if err != nil {
			return nil, err
		}
		if !im.Opts.Features.MultiProbe {
			used[ev] = true
		}
		out = append(out, im.At(probe.Probe{Group: group, Event: ev, Return: tp.Return}, tp.Addr, tp.Symbol, tp.Offset))
	}
	return out, nil
}

// SignatureBase is the event-name base of a C++ name with parameters:
// the name without the bytes after its last letter or digit, each run of
// other bytes one '_' ("ns::Klass::method(char const*)" names
// ns_Klass_method_char_const), its '*' and '[' not taken for a glob's.
func SignatureBase(name string) string {
	return spec.LanguageEventName(strings.TrimRightFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
}

// At places pr at an address of the image: a uprobe at its file offset, a
// kernel probe at SYM+OFF (MOD:SYM+OFF in a module).
func (im *Image) At(pr probe.Probe, addr uint64, symbol string, offset uint64) probe.Probe {
	if im.User {
		pr.Kind = probe.Uprobe
		pr.Target = probe.Location{Path: im.File.Path, Offset: im.FileOffset(addr)}
	} else {
		pr.Target = probe.Location{Module: im.ModuleName(), Symbol: symbol, Offset: offset}
	}
	return pr
}

// newEventName is perf's get_new_event_name with suffixes allowed: the
// name derived from base, or its first free _N suffix among used.
func newEventName(base string, ret bool, used map[string]bool) (string, error) {
	return FreeEventName(spec.EventName(base, ret), spec.EventName(base, false), used)
}

// FreeEventName is name, or when used has it, the first free _N suffix of
// base, checked as the kernel checks an event name.
func FreeEventName(name, base string, used map[string]bool) (string, error) {
	if used[name] {
		var ok bool
		if name, ok = probe.FreeName(base, func(n string) bool { return used[n] }); !ok {
			return "", Errorf(ErrInvalid, "Too many events are on the same function.")
		}
	}
	return CheckEventName(name)
}

// CheckEventName returns name, or an error when the kernel's rule
// (probedef.EventNameCode) finds it too long, or perf's "Internal error"
// when it is not a C name as perf's is_c_func_name reads one. The whole
// definition is read by probedef afterwards.
func CheckEventName(name string) (string, error) {
	if probedef.EventNameCode(name) == "EVENT_TOO_LONG" {
		return "", Errorf(ErrInvalid, "Event name %q is too long (the kernel allows %d characters).", name, probedef.MaxEventNameLen-1)
	}
	if !spec.IsCFuncName(name) {
		return "", Errorf(ErrInvalid, "Internal error: \"%s\" is an invalid event name.", name)
	}
	return name, nil
}

// CheckLimits refuses definitions the kernel would reject for their size
// (emit/probedef's limits), before anything is printed or written, with
// gprobe's advice: perf emits them, and the write then fails with
// E2BIG-style errors in error_log.
func CheckLimits(ps []probe.Probe) error {
	for _, p := range ps {
		if len(p.Args) > probedef.MaxTraceArgs {
			return Errorf(ErrInvalid, "%s/%s: %d arguments; the kernel accepts at most %d.", p.Group, p.Event, len(p.Args), probedef.MaxTraceArgs)
		}
		for _, a := range p.Args {
			if len(a.Name) > probedef.MaxArgNameLen {
				return Errorf(ErrInvalid, "%s/%s: argument name %q is %d characters long; the kernel accepts at most %d. Name it with NAME=ARG.", p.Group, p.Event, a.Name, len(a.Name), probedef.MaxArgNameLen)
			}
			body := a.Expr.String()
			if a.Type != "" {
				body += ":" + a.Type
			}
			if len(body) > probedef.MaxArgStrLen {
				return Errorf(ErrInvalid, "%s/%s: argument %s is %q, %d characters; the kernel accepts at most %d per argument.", p.Group, p.Event, a.Name, body, len(body), probedef.MaxArgStrLen)
			}
		}
	}
	return nil
}

// MaxBasicTypeBits is perf's MAX_BASIC_TYPE_BITS: the widest value one
// fetch argument holds.
const MaxBasicTypeBits = 64
