// Package dynamic resolves the kinds of dynamic_events perf probe 6.1 does
// not write: fprobes (f:), tracepoint probes (t:), event probes (e:), and
// kretprobes with entry values (r: ... $argN).
package dynamic

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/spec"
)

// Fprobes, tprobes and kretprobes with entry values all read the
// values a function's arguments have when it is called, which the kernel
// fetches from the argument registers ($argN) rather than from registers
// named by DWARF at an address: a C expression is resolved at the
// function's entry (DWARF, or BTF without it) and its registers become
// argument numbers. What has no value at a function boundary (a line, an
// offset, a local, a parameter passed on the stack) is refused with the
// reason.

// Kinds resolves these kinds on one image.
type Kinds struct {
	Im *core.Image
	// Debug converts arguments at a function's entry when the image has
	// DWARF (nil: Prototypes does).
	Debug core.Debug
	// Prototypes gives the prototypes (BTF) when first asked: arguments
	// without DWARF, members of an eprobe's fields.
	Prototypes func() (core.Prototypes, error)
}

// Fprobe resolves a definition naming a function, FUNC [ARGS] or
// FUNC%return [ARGS], into an fprobe (f:) on that function, named as perf
// names the kprobe it would write (FUNC, FUNC__return). On FUNC%return,
// arguments other than $retval are the values at the function's entry
// (dereferences happen at the return), which kernels offer since Linux 6.9.
func (k *Kinds) Fprobe(p *spec.Probe) (probe.Probe, error) {
	feat := k.Im.TargetFeatures()
	if !feat.Fprobes {
		return probe.Probe{}, core.Errorf(core.ErrUnsupported, "%s; the target kernel's tracefs README does not offer them.", probedef.KindRequirement(probe.Fprobe))
	}
	if err := k.boundaryOnly(p, "fprobe"); err != nil {
		return probe.Probe{}, err
	}
	if err := core.CheckRetval(p); err != nil {
		return probe.Probe{}, err
	}
	pp := p.Point
	if err := k.entryValuesOffered(p); err != nil {
		return probe.Probe{}, err
	}
	args, err := k.entryArgs(pp.Function, p.Args, false)
	if err != nil {
		return probe.Probe{}, err
	}
	return probe.Probe{Kind: probe.Fprobe, Group: groupOf(pp), Event: eventOf(pp, pp.Function, pp.Return),
		Return: pp.Return, Target: probe.Location{Symbol: pp.Function}, Args: args}, nil
}

// Tprobe resolves TRACEPOINT [ARGS] into a tracepoint probe (t:): the
// arguments are C expressions on the tracepoint's parameters (its
// prototype is that of the stub function __probestub_TRACEPOINT the kernel
// probes, from DWARF or BTF).
func (k *Kinds) Tprobe(p *spec.Probe) (probe.Probe, error) {
	feat := k.Im.TargetFeatures()
	if !feat.Tprobes {
		return probe.Probe{}, core.Errorf(core.ErrUnsupported, "%s; the target kernel's tracefs README does not offer them.", probedef.KindRequirement(probe.Tprobe))
	}
	pp := p.Point
	if pp.Return {
		return probe.Probe{}, core.Errorf(core.ErrInvalid, "%s: a tracepoint has no return (the kernel refuses %%return on t:).", pp.String())
	}
	if err := k.boundaryOnly(p, "tracepoint probe"); err != nil {
		return probe.Probe{}, err
	}
	if err := core.CheckRetval(p); err != nil {
		return probe.Probe{}, err
	}
	args, err := k.entryArgs(tracepointStub+pp.Function, p.Args, true)
	if err != nil {
		return probe.Probe{}, err
	}
	return probe.Probe{Kind: probe.Tprobe, Group: groupOf(pp), Event: eventOf(pp, pp.Function, false),
		Target: probe.Location{Symbol: pp.Function}, Args: args}, nil
}

// tracepointStub prefixes the function whose prototype is a tracepoint's
// (its first, hidden parameter is the tracepoint's data).
const tracepointStub = "__probestub_"

func groupOf(pp spec.Point) string {
	if pp.Group != "" {
		return pp.Group
	}
	return spec.DefaultGroup
}

func eventOf(pp spec.Point, base string, ret bool) string {
	if pp.Event != "" {
		return pp.Event
	}
	return spec.EventName(base, ret)
}

// boundaryOnly refuses what has no place at a function boundary.
func (k *Kinds) boundaryOnly(p *spec.Probe, kind string) error {
	pp := p.Point
	why := ""
	switch {
	case k.Im.User:
		why = "a user-space binary (" + kind + "s probe the kernel)"
	case k.Im.Module != nil:
		why = "a module function (gprobe resolves " + kind + "s on vmlinux)"
	case pp.IsAbs:
		why = "an address"
	case pp.HasLazy:
		why = "a lazy pattern (a line)"
	case pp.HasFile || pp.Line != 0:
		why = "a source line"
	case pp.Offset != 0:
		why = "an offset inside the function"
	case !pp.HasFunction:
		why = "no function"
	case spec.IsGlob(pp.Function):
		why = "a pattern (one " + kind + " names one function)"
	}
	if why == "" {
		return nil
	}
	return core.Errorf(core.ErrInvalid, "%s is %s; %ss sit only at a function's entry or return. Use a kprobe there.",
		pp.String(), why, kind)
}

// entryValuesOffered refuses variables on a return probe for a kernel
// whose README does not offer entry values at return.
func (k *Kinds) entryValuesOffered(p *spec.Probe) error {
	if !p.Point.Return || !core.WithVar(p.Args) || k.Im.TargetFeatures().ReturnArgs {
		return nil
	}
	return core.Errorf(core.ErrUnsupported, "%s: variables on a return probe are the values at the function's entry, which need Linux %s or later (the target kernel's tracefs README does not offer \"kernel return probes support: $retval, $arg<N>\").", p.Point.String(), probedef.ReturnArgsSince)
}

// ReturnWithEntryValues is FUNC%return with variables on a kprobe: a
// kretprobe reading the arguments' values at the entry ($argN), as kernels
// since Linux 6.9 offer. probes resolves the return probe without its
// arguments.
func (k *Kinds) ReturnWithEntryValues(p *spec.Probe, probes func(*spec.Probe) ([]probe.Probe, error)) ([]probe.Probe, error) {
	if err := k.entryValuesOffered(p); err != nil {
		return nil, err
	}
	pp := p.Point
	if !pp.HasFunction || spec.IsGlob(pp.Function) || pp.HasFile || pp.Line != 0 || pp.HasLazy || pp.Offset != 0 {
		return nil, core.Errorf(core.ErrInvalid, "%s: entry values on a return probe need one function's return (FUNC%%return).", pp.String())
	}
	bare := *p
	bare.Args = nil
	ps, err := probes(&bare)
	if err != nil {
		return nil, err
	}
	args, err := k.entryArgs(pp.Function, p.Args, false)
	if err != nil {
		return nil, err
	}
	for i := range ps {
		ps[i].Args = args
	}
	return ps, core.CheckLimits(ps)
}

// entryArgs resolves args at the entry of the function fn: arguments that
// are C expressions on its parameters become fetches on $argN (the first
// register is $arg1, or for a tracepoint's stub, whose first parameter the
// kernel hides, $arg0); others are kept as written.
func (k *Kinds) entryArgs(fn string, args []spec.Arg, tpoint bool) ([]probe.FetchArg, error) {
	if !core.WithVar(args) {
		return core.RawArgs(args), nil
	}
	var fas []probe.FetchArg
	var err error
	if k.Debug != nil {
		fas, err = k.Debug.EntryArgs(fn, args)
	} else {
		var protos core.Prototypes
		if protos, err = k.Prototypes(); err != nil {
			return nil, core.Errorf(core.ErrNeedsDWARF, "No DWARF and no BTF to resolve %s's arguments: %v", fn, err)
		}
		fas, err = protos.EntryArgs(&spec.Probe{Point: spec.Point{Function: fn, HasFunction: true}, Args: args})
	}
	if err != nil {
		if tpoint && strings.Contains(err.Error(), tracepointStub) && errors.Is(err, core.ErrNotFound) {
			return nil, core.Errorf(core.ErrNotFound, "%s is not a tracepoint of this kernel (it has no %s).", strings.TrimPrefix(fn, tracepointStub), fn)
		}
		return nil, err
	}
	for i := range fas {
		f, err := k.onArgRegisters(fas[i].Expr, fn, tpoint)
		if err != nil {
			return nil, core.Errorf(core.ErrInvalid, "%s of %s: %v", argText(args, i), displayFunc(fn), err)
		}
		fas[i].Expr = f
	}
	if k.Im.Opts.KernelBTFArgs {
		return k.btfSyntax(args)
	}
	return fas, nil
}

// btfSyntax writes args as the kernel's BTF arguments: a parameter by its
// name, members with -> and ., $params as $arg*, other arguments as
// written. The kernel names a bare parameter's field after it; others keep
// perf's name. Types are the kernel's (from BTF) unless one was given.
func (k *Kinds) btfSyntax(args []spec.Arg) ([]probe.FetchArg, error) {
	feat := k.Im.TargetFeatures()
	var out []probe.FetchArg
	for _, a := range args {
		switch {
		case a.Var == "$params":
			out = append(out, probe.FetchArg{Expr: probe.Args{}})
			continue
		case a.Var == "$vars":
			return nil, core.Errorf(core.ErrInvalid, "$vars has no BTF form (the kernel's $arg* names parameters only).")
		case !spec.IsCVarname(a.Var):
			out = append(out, core.RawArgs([]spec.Arg{a})...)
			continue
		case !feat.BTFArgs:
			return nil, core.Errorf(core.ErrUnsupported, "'%s': BTF arguments need Linux %s or later built with CONFIG_PROBE_EVENTS_BTF_ARGS (the target kernel's tracefs README does not offer \"<argname>\").", a.Raw, probedef.BTFArgsSince)
		case len(a.Fields) > 0 && !feat.BTFFields:
			return nil, core.Errorf(core.ErrUnsupported, "'%s': members of BTF arguments need a kernel whose tracefs README offers \"<argname>[->field...]\".", a.Raw)
		case a.User:
			return nil, core.Errorf(core.ErrInvalid, "'%s': the kernel's BTF arguments read kernel memory only.", a.Raw)
		}
		v := probe.Var{Name: a.Var}
		for _, f := range a.Fields {
			if f.IsIndex {
				return nil, core.Errorf(core.ErrInvalid, "'%s': the kernel's BTF arguments have no array index.", a.Raw)
			}
			v.Fields = append(v.Fields, probe.Member{Name: f.Name, Arrow: f.Ref})
		}
		fa := probe.FetchArg{Expr: v}
		if a.HasName && a.Name != a.Var {
			fa.Name = a.Name
		}
		if a.HasType {
			fa.Type = a.Type
		}
		out = append(out, fa)
	}
	return out, nil
}

func displayFunc(fn string) string {
	if t, ok := strings.CutPrefix(fn, tracepointStub); ok {
		return "tracepoint " + t
	}
	return fn
}

// argText names the i-th value: its argument as written, unless $params
// or $vars expanded the arguments.
func argText(args []spec.Arg, i int) string {
	expanded := slices.ContainsFunc(args, func(a spec.Arg) bool { return a.Var == "$params" || a.Var == "$vars" })
	if i < len(args) && !expanded {
		return "'" + args[i].Raw + "'"
	}
	return fmt.Sprintf("value %d", i+1)
}

// onArgRegisters rewrites the registers of a fetch at a function's entry
// as the argument numbers they are ($argN), refusing any other register.
func (k *Kinds) onArgRegisters(f probe.Fetch, fn string, tpoint bool) (probe.Fetch, error) {
	switch x := f.(type) {
	case probe.Reg:
		i := slices.Index(k.Im.Arch.ArgRegisters(), string(x))
		switch {
		case i < 0:
			return nil, fmt.Errorf("its value is in %s at the entry, not in an argument register (a parameter passed on the stack, or not a parameter); fprobes and tprobes read arguments as $argN only", x)
		case tpoint && i == 0:
			return nil, fmt.Errorf("%s holds the tracepoint's hidden data argument", x)
		case tpoint:
			return probe.Arg(i), nil
		}
		return probe.Arg(i + 1), nil
	case probe.Mem:
		in, err := k.onArgRegisters(x.Inner, fn, tpoint)
		if err != nil {
			return nil, err
		}
		x.Inner = in
		return x, nil
	}
	return f, nil
}
