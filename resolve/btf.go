package resolve

import (
	"errors"
	"sort"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/internal/brief"
	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/btfinfo"
	"github.com/gprobe/gprobe/resolve/spec"
)

// The BTF back end: when an image has no DWARF, BTF (the kernel's
// /sys/kernel/btf/vmlinux, a vmlinux's .BTF section, or a module's split
// BTF) still gives every function's prototype and every struct's layout.
// That is enough for arguments at a function's entry: each parameter is in
// the register the calling convention gives it, and struct->field chains
// are offsets. Source lines, locals and anything after the first
// instruction need DWARF, and gprobe says so.

// ErrNeedsDWARF: the probe asks for what only DWARF describes.
var ErrNeedsDWARF = errors.New("needs DWARF debug information")

// btfSpec returns the BTF to resolve arguments with: Options.BTF, or the
// image's own .BTF section.
func (r *Resolver) btfSpec() (*btfinfo.Spec, error) {
	if r.opts.BTF != nil {
		return r.opts.BTF, nil
	}
	if r.f == nil || r.btfErr != nil {
		return nil, r.btfErr
	}
	if r.btf == nil {
		r.btf, r.btfErr = btfinfo.Load(r.f.Path)
		if r.btfErr != nil {
			return nil, r.btfErr
		}
	}
	return r.btf, nil
}

// btfArgs resolves the arguments of a FUNC entry probe (or FUNC%return
// with raw arguments) from BTF. fn is the function name as written.
func (r *Resolver) btfArgs(p *spec.Probe) ([]probe.FetchArg, error) {
	pp := p.Point
	if !withVar(p.Args) {
		return fetchArgs(p, nil, true), nil
	}
	why := ""
	switch {
	case pp.HasFile || pp.Line != 0 || pp.HasLazy:
		why = "a source line"
	case pp.Offset != 0:
		why = "an offset inside the function (parameters are known only at the entry)"
	case !pp.HasFunction || lines.IsGlob(pp.Function):
		why = "a function pattern"
	}
	if why != "" {
		return nil, errorf(ErrNeedsDWARF, "%s: arguments at %s need DWARF debug information; BTF describes only function prototypes and types.\n Use a vmlinux with debug info (-k), or probe the function's entry.", pp.String(), why)
	}
	s, err := r.btfSpec()
	if err != nil {
		return nil, errorf(ErrNeedsDWARF, "No DWARF and no BTF to resolve %s's arguments: %v", pp.Function, err)
	}
	name := pp.Function
	if i := strings.IndexByte(name, '.'); i > 0 {
		// .isra/.constprop clones may drop or reorder parameters; BTF
		// records the source prototype only.
		return nil, errorf(ErrNeedsDWARF, "%s is a compiler-made clone of %s: its registers need not follow the prototype BTF records. Arguments of clones need DWARF.", name, name[:i])
	}
	fn, err := s.FuncArch(name, r.arch)
	if err != nil {
		return nil, errorf(ErrNotFound, "Failed to find %s in BTF: %v", name, err)
	}
	var out []probe.FetchArg
	for i := range p.Args {
		a := &p.Args[i]
		switch {
		case a.Var == "$params" || a.Var == "$vars":
			for _, prm := range fn.Params {
				if prm.Reg == "" || prm.ByRef || len(prm.Regs) > 1 {
					continue
				}
				typ, _ := btfinfo.FetchType(prm.Type, r.opts.Features.HexTypes, "")
				out = append(out, probe.FetchArg{Name: prm.Name, Expr: probe.Reg(prm.Reg), Type: typ})
			}
		case !spec.IsCVarname(a.Var):
			out = append(out, fetchArgs(&spec.Probe{Args: []spec.Arg{*a}}, nil, true)...)
		default:
			fa, err := r.btfArg(s, fn, a)
			if err != nil {
				return nil, err
			}
			out = append(out, fa)
		}
	}
	return out, nil
}

// btfArg resolves one C-variable argument: a parameter and its fields.
func (r *Resolver) btfArg(s *btfinfo.Spec, fn *btfinfo.Func, a *spec.Arg) (probe.FetchArg, error) {
	var prm *btfinfo.Param
	for i := range fn.Params {
		if fn.Params[i].Name == a.Var {
			prm = &fn.Params[i]
		}
	}
	if prm == nil {
		var names []string
		for _, p := range fn.Params {
			names = append(names, p.Name)
		}
		return probe.FetchArg{}, errorf(ErrNotFound, "'%s' is not a parameter of %s (parameters: %s). Locals need DWARF debug information.", a.Var, fn.Name, brief.Join(names, ", "))
	}
	if prm.Reg == "" {
		return probe.FetchArg{}, errorf(ErrUnsupported, "Parameter '%s' of %s is not passed in a general-purpose register (it is on the stack or a float).", a.Var, fn.Name)
	}
	t := &traceArg{value: "%" + prm.Reg}
	if a.HasName {
		t.name = a.Name
	} else {
		t.name = strings.Replace(a.String(), ":", "_", 1)
	}
	final := prm.Type
	var bitfield string
	if len(a.Fields) > 0 || prm.ByRef {
		var steps []btfinfo.Step
		for _, f := range a.Fields {
			steps = append(steps, btfinfo.Step{Name: f.Name, Arrow: f.Ref && !f.IsIndex, IsIndex: f.IsIndex, Index: f.Index})
		}
		var acc *btfinfo.Access
		var err error
		switch {
		case prm.ByRef:
			// arm64 passes a struct over 16 bytes as a pointer to a copy.
			if len(steps) > 0 && steps[0].Arrow {
				return probe.FetchArg{}, errorf(ErrInvalid, "Semantic error: %s must be referred by '.'", a.Fields[0].Name)
			}
			acc, err = s.ResolveStruct(prm.Type, steps)
		case len(prm.Regs) > 1:
			return probe.FetchArg{}, errorf(ErrUnsupported, "Structure on a register is not supported yet.")
		default:
			acc, err = s.Resolve(prm.Type, steps)
		}
		if err != nil {
			return probe.FetchArg{}, btfError(a, err)
		}
		for _, off := range acc.Derefs {
			t.refs = append(t.refs, varRef{off: off, user: a.User})
		}
		final, bitfield = acc.Final, acc.BitfieldType()
	} else if len(prm.Regs) > 1 {
		return probe.FetchArg{}, errorf(ErrInvalid, "'%s' is passed in %d registers (%s); fetch one of its members.", a.Var, len(prm.Regs), strings.Join(prm.Regs, ", "))
	}
	cast := a.Type
	switch {
	case a.HasType && cast != "string" && cast != "ustring" && cast != "x" && cast != "s" && cast != "u":
		t.typ = cast
	case bitfield != "":
		t.typ = bitfield
	case a.HasType && (cast == "string" || cast == "ustring"):
		under := btf.UnderlyingType(final)
		var elem btf.Type
		switch x := under.(type) {
		case *btf.Pointer:
			elem = x.Target
			t.refs = append(t.refs, varRef{user: a.User})
		case *btf.Array:
			elem = x.Type
		default:
			return probe.FetchArg{}, errorf(ErrInvalid, "Failed to cast into string: %s(%s) is not a pointer nor array.", a.Var, btfinfo.TypeString(final, 0))
		}
		if i, ok := btf.UnderlyingType(elem).(*btf.Int); !ok || i.Size != 1 {
			return probe.FetchArg{}, errorf(ErrInvalid, "Failed to cast into string: %s is not (unsigned) char *.", a.Var)
		}
		t.typ = cast
	default:
		typ, bits := btfinfo.FetchType(final, r.opts.Features.HexTypes, cast)
		if bits > maxBasicTypeBits {
			return probe.FetchArg{}, errorf(ErrInvalid, "%s is %d bits wide (%s); a fetch argument holds at most %d bits.\n Fetch one of its members, or cast it (%s:x64) to read its first 8 bytes.",
				spec.Arg{Var: a.Var, Fields: a.Fields}.String(), bits, btfinfo.TypeString(final, 0), maxBasicTypeBits, spec.Arg{Var: a.Var, Fields: a.Fields}.String())
		}
		t.typ = typ
	}
	return t.fetchArg(), nil
}

func btfError(a *spec.Arg, err error) error {
	switch {
	case errors.Is(err, btfinfo.ErrNotFound):
		return errorf(ErrInvalid, "%s: %v", a.Raw, err)
	default:
		return errorf(ErrInvalid, "%s: %v", a.Raw, err)
	}
}

// hasBTF reports whether BTF is available for the image.
func (r *Resolver) hasBTF() bool {
	s, err := r.btfSpec()
	return err == nil && s != nil
}

// btfProbes resolves a probe whose arguments come from BTF: the place is
// FUNC[+OFF][%return] by symbol (checked against the image's symbol table
// when there is an image), the arguments from the prototype.
func (r *Resolver) btfProbes(p *spec.Probe) ([]probe.Probe, error) {
	pp := p.Point
	if pp.HasFile || pp.Line != 0 || pp.HasLazy {
		return nil, errorf(ErrNeedsDWARF, "%s: a source line needs DWARF debug information; BTF describes only function prototypes and types.\n Use a vmlinux with debug info (-k), or probe FUNC[+OFF].", pp.String())
	}
	args, err := r.btfArgs(p)
	if err != nil {
		return nil, err
	}
	var ps []probe.Probe
	if r.f != nil {
		tps, err := r.findSymbols(&pp)
		if err != nil {
			return nil, err
		}
		if !r.opts.AllowMidInsn {
			for _, tp := range tps {
				if err := r.checkBoundary(tp); err != nil {
					return nil, err
				}
			}
		}
		if ps, err = r.name(p, tps); err != nil {
			return nil, err
		}
	} else {
		if !pp.HasFunction || lines.IsGlob(pp.Function) {
			return nil, errorf(ErrNeedsDWARF, "%s: without an image, gprobe needs one function name.", pp.String())
		}
		if ps, err = r.name(p, []tracePoint{{symbol: pp.Function, offset: pp.Offset, realname: pp.Function, retprobe: pp.Return}}); err != nil {
			return nil, err
		}
	}
	for i := range ps {
		ps[i].Args = args
	}
	if err := checkLimits(ps); err != nil {
		return nil, err
	}
	return ps, nil
}

// btfFunctions is Functions from BTF alone: the functions BTF describes
// (those the kernel did not inline everywhere), sorted, filtered.
func (r *Resolver) btfFunctions(filter *Filter) ([]string, error) {
	s, err := r.btfSpec()
	if err != nil {
		return nil, err
	}
	names, err := s.FuncNames()
	if err != nil {
		return nil, err
	}
	out := names[:0]
	for _, n := range names {
		if filter.Match(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// btfVars is -V from BTF: a function's parameters at its entry, typed as
// perf's die_get_typename would print them.
func (r *Resolver) btfVars(pp *spec.Point) ([]VarList, error) {
	if pp.HasFile || pp.Line != 0 || pp.HasLazy || pp.Offset != 0 || !pp.HasFunction || lines.IsGlob(pp.Function) {
		return nil, errorf(ErrNeedsDWARF, "%s: variables there need DWARF debug information; BTF describes only function prototypes (parameters at the entry).", pp.String())
	}
	s, err := r.btfSpec()
	if err != nil {
		return nil, errorf(ErrNeedsDWARF, "No DWARF and no BTF to list %s's variables: %v", pp.Function, err)
	}
	fn, err := s.FuncArch(pp.Function, r.arch)
	if err != nil {
		return nil, errorf(ErrNotFound, "Failed to find %s in BTF: %v", pp.Function, err)
	}
	vl := VarList{Symbol: pp.Function}
	for _, p := range fn.Params {
		if p.Reg == "" {
			continue
		}
		vl.Vars = append(vl.Vars, btfTypeName(p.Type)+"\t"+p.Name)
	}
	sort.Strings(vl.Vars)
	return []VarList{vl}, nil
}

// btfTypeName is perf's die_get_typename for a BTF type.
func btfTypeName(t btf.Type) string {
	for {
		switch x := t.(type) {
		case *btf.Const:
			t = x.Type
			continue
		case *btf.Volatile:
			t = x.Type
			continue
		case *btf.Restrict:
			t = x.Type
			continue
		case *btf.TypeTag:
			t = x.Type
			continue
		}
		break
	}
	switch x := t.(type) {
	case *btf.Pointer:
		if _, ok := x.Target.(*btf.FuncProto); ok {
			return "(function_type)*"
		}
		if _, ok := x.Target.(*btf.Void); ok {
			return "(unknown_type)"
		}
		return btfTypeName(x.Target) + "*"
	case *btf.Array:
		return btfTypeName(x.Type) + "*"
	case *btf.Struct:
		return "struct " + x.Name
	case *btf.Union:
		return "union " + x.Name
	case *btf.Enum:
		return "enum " + x.Name
	case *btf.FuncProto:
		return "(function_type)"
	case nil, *btf.Void:
		return "(unknown_type)"
	}
	return t.TypeName()
}
