package resolve

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/resolve/spec"
)

// The kinds perf probe 6.1 cannot write: fprobes (f:) and tracepoint probes
// (t:), and kretprobes with entry values (r: ... $argN). They all read the
// values a function's arguments have when it is called, which the kernel
// fetches from the argument registers ($argN) rather than from registers
// named by DWARF at an address: a C expression is resolved at the
// function's entry (DWARF, or BTF without it) and its registers become
// argument numbers. What has no value at a function boundary (a line, an
// offset, a local, a parameter passed on the stack) is refused with the
// reason.

// targetFeatures are the features of the kernel the probes are for:
// Options.TargetFeatures, else Options.Features.
func (r *Resolver) targetFeatures() *probedef.Features {
	if r.opts.TargetFeatures != nil {
		return r.opts.TargetFeatures
	}
	return &r.opts.Features
}

// Fprobe resolves a definition naming a function, FUNC [ARGS] or
// FUNC%return [ARGS], into an fprobe (f:) on that function, named as perf
// names the kprobe it would write (FUNC, FUNC__return). On FUNC%return,
// arguments other than $retval are the values at the function's entry
// (dereferences happen at the return), which kernels offer since Linux 6.9.
func (r *Resolver) Fprobe(p *spec.Probe) (probe.Probe, error) {
	feat := r.targetFeatures()
	if !feat.Fprobes {
		return probe.Probe{}, errorf(ErrUnsupported, "%s; the target kernel's tracefs README does not offer them.", probedef.KindRequirement(probe.Fprobe))
	}
	if err := r.boundaryOnly(p, "fprobe"); err != nil {
		return probe.Probe{}, err
	}
	if err := checkRetval(p); err != nil {
		return probe.Probe{}, err
	}
	pp := p.Point
	if err := r.entryValuesOffered(p); err != nil {
		return probe.Probe{}, err
	}
	args, err := r.entryArgs(pp.Function, p.Args, false)
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
func (r *Resolver) Tprobe(p *spec.Probe) (probe.Probe, error) {
	feat := r.targetFeatures()
	if !feat.Tprobes {
		return probe.Probe{}, errorf(ErrUnsupported, "%s; the target kernel's tracefs README does not offer them.", probedef.KindRequirement(probe.Tprobe))
	}
	pp := p.Point
	if pp.Return {
		return probe.Probe{}, errorf(ErrInvalid, "%s: a tracepoint has no return (the kernel refuses %%return on t:).", pp.String())
	}
	if err := r.boundaryOnly(p, "tracepoint probe"); err != nil {
		return probe.Probe{}, err
	}
	if err := checkRetval(p); err != nil {
		return probe.Probe{}, err
	}
	args, err := r.entryArgs(tracepointStub+pp.Function, p.Args, true)
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
func (r *Resolver) boundaryOnly(p *spec.Probe, kind string) error {
	pp := p.Point
	why := ""
	switch {
	case r.user:
		why = "a user-space binary (" + kind + "s probe the kernel)"
	case r.mod != nil:
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
	return errorf(ErrInvalid, "%s is %s; %ss sit only at a function's entry or return. Use a kprobe there.",
		pp.String(), why, kind)
}

// entryValuesOffered refuses variables on a return probe for a kernel
// whose README does not offer entry values at return.
func (r *Resolver) entryValuesOffered(p *spec.Probe) error {
	if !p.Point.Return || !withVar(p.Args) || r.targetFeatures().ReturnArgs {
		return nil
	}
	return errorf(ErrUnsupported, "%s: variables on a return probe are the values at the function's entry, which need Linux %s or later (the target kernel's tracefs README does not offer \"kernel return probes support: $retval, $arg<N>\").", p.Point.String(), probedef.ReturnArgsSince)
}

// returnWithEntryValues is FUNC%return with variables on a kprobe: a
// kretprobe reading the arguments' values at the entry ($argN), as kernels
// since Linux 6.9 offer.
func (r *Resolver) returnWithEntryValues(p *spec.Probe) ([]probe.Probe, error) {
	if err := r.entryValuesOffered(p); err != nil {
		return nil, err
	}
	pp := p.Point
	if !pp.HasFunction || spec.IsGlob(pp.Function) || pp.HasFile || pp.Line != 0 || pp.HasLazy || pp.Offset != 0 {
		return nil, errorf(ErrInvalid, "%s: entry values on a return probe need one function's return (FUNC%%return).", pp.String())
	}
	bare := *p
	bare.Args = nil
	ps, err := r.Probes(&bare)
	if err != nil {
		return nil, err
	}
	args, err := r.entryArgs(pp.Function, p.Args, false)
	if err != nil {
		return nil, err
	}
	for i := range ps {
		ps[i].Args = args
	}
	return ps, checkLimits(ps)
}

// entryArgs resolves args at the entry of the function fn: arguments that
// are C expressions on its parameters become fetches on $argN (the first
// register is $arg1, or for a tracepoint's stub, whose first parameter the
// kernel hides, $arg0); others are kept as written.
func (r *Resolver) entryArgs(fn string, args []spec.Arg, tpoint bool) ([]probe.FetchArg, error) {
	if !withVar(args) {
		return fetchArgs(&spec.Probe{Args: args}, nil, true), nil
	}
	var fas []probe.FetchArg
	var err error
	if r.f != nil && r.f.HasDWARF() {
		fas, err = r.dwarfEntryArgs(fn, args)
	} else {
		fas, err = r.btfArgs(&spec.Probe{Point: spec.Point{Function: fn, HasFunction: true}, Args: args})
	}
	if err != nil {
		if tpoint && strings.Contains(err.Error(), tracepointStub) && errors.Is(err, ErrNotFound) {
			return nil, errorf(ErrNotFound, "%s is not a tracepoint of this kernel (it has no %s).", strings.TrimPrefix(fn, tracepointStub), fn)
		}
		return nil, err
	}
	for i := range fas {
		f, err := r.onArgRegisters(fas[i].Expr, fn, tpoint)
		if err != nil {
			return nil, errorf(ErrInvalid, "%s of %s: %v", argText(args, i), displayFunc(fn), err)
		}
		fas[i].Expr = f
	}
	if r.opts.KernelBTFArgs {
		return r.btfSyntax(args)
	}
	return fas, nil
}

// btfSyntax writes args as the kernel's BTF arguments: a parameter by its
// name, members with -> and ., $params as $arg*, other arguments as
// written. The kernel names a bare parameter's field after it; others keep
// perf's name. Types are the kernel's (from BTF) unless one was given.
func (r *Resolver) btfSyntax(args []spec.Arg) ([]probe.FetchArg, error) {
	feat := r.targetFeatures()
	var out []probe.FetchArg
	for _, a := range args {
		switch {
		case a.Var == "$params":
			out = append(out, probe.FetchArg{Expr: probe.Args{}})
			continue
		case a.Var == "$vars":
			return nil, errorf(ErrInvalid, "$vars has no BTF form (the kernel's $arg* names parameters only).")
		case !spec.IsCVarname(a.Var):
			out = append(out, fetchArgs(&spec.Probe{Args: []spec.Arg{a}}, nil, true)...)
			continue
		case !feat.BTFArgs:
			return nil, errorf(ErrUnsupported, "'%s': BTF arguments need Linux %s or later built with CONFIG_PROBE_EVENTS_BTF_ARGS (the target kernel's tracefs README does not offer \"<argname>\").", a.Raw, probedef.BTFArgsSince)
		case len(a.Fields) > 0 && !feat.BTFFields:
			return nil, errorf(ErrUnsupported, "'%s': members of BTF arguments need a kernel whose tracefs README offers \"<argname>[->field...]\".", a.Raw)
		case a.User:
			return nil, errorf(ErrInvalid, "'%s': the kernel's BTF arguments read kernel memory only.", a.Raw)
		}
		v := probe.Var{Name: a.Var}
		for _, f := range a.Fields {
			if f.IsIndex {
				return nil, errorf(ErrInvalid, "'%s': the kernel's BTF arguments have no array index.", a.Raw)
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
func (r *Resolver) onArgRegisters(f probe.Fetch, fn string, tpoint bool) (probe.Fetch, error) {
	switch x := f.(type) {
	case probe.Reg:
		i := slices.Index(r.arch.ArgRegisters(), string(x))
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
		in, err := r.onArgRegisters(x.Inner, fn, tpoint)
		if err != nil {
			return nil, err
		}
		x.Inner = in
		return x, nil
	}
	return f, nil
}

// dwarfEntryArgs converts args at the entry address of the out-of-line
// function fn, found by its symbol: only the unit holding it is read.
func (r *Resolver) dwarfEntryArgs(fn string, args []spec.Arg) ([]probe.FetchArg, error) {
	addr, err := r.functionAddr(fn)
	if err != nil {
		return nil, err
	}
	idx, err := r.f.UnitForAddr(addr)
	if err != nil || idx < 0 {
		return nil, errorf(ErrNotFound, "No debug information covers %s (0x%x).", fn, addr)
	}
	cu, err := r.f.Unit(idx)
	if err != nil {
		return nil, err
	}
	sp := cu.Lines.FindRealFunc(addr)
	if sp == nil {
		return nil, errorf(ErrNotFound, "No function DIE covers %s (0x%x).", fn, addr)
	}
	if entry, ok := sp.LowestPC(); !ok || entry != addr {
		return nil, errorf(ErrNotFound, "%s (0x%x) is not the entry of the function DWARF describes there (%s).", fn, addr, sp.Name)
	}
	f := &finder{r: r, pp: &spec.Point{Function: fn, HasFunction: true}, args: args, cu: cu, entryOnly: true}
	ctx := &scopeCtx{f: f, cu: cu, sc: sp, sp: sp, addr: addr}
	if err := ctx.frameBase(); err != nil {
		return nil, err
	}
	targs, err := ctx.traceArgs(args, false)
	if err != nil {
		return nil, err
	}
	var out []probe.FetchArg
	for _, t := range targs {
		out = append(out, t.fetchArg())
	}
	return out, nil
}

// functionAddr is the address of the one function symbol named fn; a name
// shared by several functions (static functions of different files) is
// refused, since an fprobe would attach to all of them.
func (r *Resolver) functionAddr(fn string) (uint64, error) {
	m, err := r.symbols()
	if err != nil {
		return 0, err
	}
	want := []byte(fn)
	var addrs []uint64
	for _, s := range m.byName(func(n []byte) bool { return bytes.Equal(n, want) }, false, true) {
		if s.typ == elf.STT_FUNC && !slices.Contains(addrs, s.start) {
			addrs = append(addrs, s.start)
		}
	}
	switch len(addrs) {
	case 0:
		return 0, errorf(ErrNotFound, "Failed to find symbol %s in kernel (an inlined function, or a compiler-made clone such as %s.isra.0, has no symbol of that name).", fn, fn)
	case 1:
		return addrs[0], nil
	}
	return 0, errorf(ErrInvalid, "%d functions are named %s; a probe by that name would attach to all of them, whose arguments differ. Use a kprobe on one address.", len(addrs), fn)
}

// errLocalAtEntry refuses a function's local variable: it has no value
// when the function is called.
func errLocalAtEntry(name, fn string) error {
	return errorf(ErrInvalid, "'%s' is a local variable of %s: at a function's entry only its parameters have values. Probe a line of %s with a kprobe to read it.", name, fn, fn)
}

// isLocal reports whether vr, found in the function's own scope, is a local
// variable (not a parameter, not a global).
func isLocal(vr *dwarf.Entry) bool {
	return vr.Tag == dwarf.TagVariable && vr.AttrField(dwarf.AttrExternal) == nil
}
