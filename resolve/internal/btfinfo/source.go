package btfinfo

import (
	"sort"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/internal/brief"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/spec"
)

// The BTF source of the resolver (core.Prototypes): when an image has no
// DWARF, BTF (the kernel's /sys/kernel/btf/vmlinux, a vmlinux's .BTF
// section, or a module's split BTF) still gives every function's prototype
// and every struct's layout. That is enough for arguments at a function's
// entry: each parameter is in the register the calling convention gives
// it, and struct->field chains are offsets. Source lines, locals and
// anything after the first instruction need DWARF, and gprobe says so.

// Prototypes is s as the resolver's source of prototypes for arch, with
// hex (the kernel's README offers x8..x64) choosing hexadecimal types for
// unsigned values.
func (s *Spec) Prototypes(isa arch.Arch, hex bool) core.Prototypes {
	return &prototypes{s: s, arch: isa, hex: hex}
}

type prototypes struct {
	s    *Spec
	arch arch.Arch
	hex  bool
}

// EntryArgs resolves the arguments of a FUNC entry probe (or FUNC%return
// with raw arguments) from BTF.
func (r *prototypes) EntryArgs(p *spec.Probe) ([]probe.FetchArg, error) {
	pp := p.Point
	if !core.WithVar(p.Args) {
		return core.RawArgs(p.Args), nil
	}
	why := ""
	switch {
	case pp.HasFile || pp.Line != 0 || pp.HasLazy:
		why = "a source line"
	case pp.Offset != 0:
		why = "an offset inside the function (parameters are known only at the entry)"
	case !pp.HasFunction || spec.IsGlob(pp.Function):
		why = "a function pattern"
	}
	if why != "" {
		return nil, core.Errorf(core.ErrNeedsDWARF, "%s: arguments at %s need DWARF debug information; BTF describes only function prototypes and types.\n Use a vmlinux with debug info (-k), or probe the function's entry.", pp.String(), why)
	}
	name := pp.Function
	if i := strings.IndexByte(name, '.'); i > 0 {
		// .isra/.constprop clones may drop or reorder parameters; BTF
		// records the source prototype only.
		return nil, core.Errorf(core.ErrNeedsDWARF, "%s is a compiler-made clone of %s: its registers need not follow the prototype BTF records. Arguments of clones need DWARF.", name, name[:i])
	}
	fn, err := r.s.FuncArch(name, r.arch)
	if err != nil {
		return nil, core.Errorf(core.ErrNotFound, "Failed to find %s in BTF: %v", name, err)
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
				typ, _ := FetchType(prm.Type, r.hex, "")
				out = append(out, probe.FetchArg{Name: prm.Name, Expr: probe.Reg(prm.Reg), Type: typ})
			}
		case !spec.IsCVarname(a.Var):
			out = append(out, core.RawArgs([]spec.Arg{*a})...)
		default:
			fa, err := r.arg(fn, a)
			if err != nil {
				return nil, err
			}
			out = append(out, fa)
		}
	}
	return out, nil
}

// HasStruct says whether the struct or union name is described.
func (r *prototypes) HasStruct(name string) error {
	_, err := r.s.StructByName(name)
	return err
}

// StructArg resolves a's fields in the struct name, a pointer to which is
// in reg (an eprobe's event field stands in for the register).
func (r *prototypes) StructArg(owner, name, reg string, a *spec.Arg) (probe.FetchArg, error) {
	st, err := r.s.StructByName(name)
	if err != nil {
		return probe.FetchArg{}, err
	}
	fn := &Func{Name: owner, Params: []Param{{Name: a.Var, Type: &btf.Pointer{Target: st}, Reg: reg}}}
	return r.arg(fn, a)
}

// arg resolves one C-variable argument: a parameter and its fields.
func (r *prototypes) arg(fn *Func, a *spec.Arg) (probe.FetchArg, error) {
	s := r.s
	var prm *Param
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
		return probe.FetchArg{}, core.Errorf(core.ErrNotFound, "'%s' is not a parameter of %s (parameters: %s). Locals need DWARF debug information.", a.Var, fn.Name, brief.Join(names, ", "))
	}
	if prm.Reg == "" {
		return probe.FetchArg{}, core.Errorf(core.ErrUnsupported, "Parameter '%s' of %s is not passed in a general-purpose register (it is on the stack or a float).", a.Var, fn.Name)
	}
	t := &core.TraceArg{Value: "%" + prm.Reg}
	if a.HasName {
		t.Name = a.Name
	} else {
		t.Name = strings.Replace(a.String(), ":", "_", 1)
	}
	final := prm.Type
	var bitfield string
	if len(a.Fields) > 0 || prm.ByRef {
		var steps []Step
		for _, f := range a.Fields {
			steps = append(steps, Step{Name: f.Name, Arrow: f.Ref && !f.IsIndex, IsIndex: f.IsIndex, Index: f.Index})
		}
		var acc *Access
		var err error
		switch {
		case prm.ByRef:
			// arm64 passes a struct over 16 bytes as a pointer to a copy.
			if len(steps) > 0 && steps[0].Arrow {
				return probe.FetchArg{}, core.Errorf(core.ErrInvalid, "Semantic error: %s must be referred by '.'", a.Fields[0].Name)
			}
			acc, err = s.ResolveStruct(prm.Type, steps)
		case len(prm.Regs) > 1:
			return probe.FetchArg{}, core.Errorf(core.ErrUnsupported, "Structure on a register is not supported yet.")
		default:
			acc, err = s.Resolve(prm.Type, steps)
		}
		if err != nil {
			return probe.FetchArg{}, btfError(a, err)
		}
		for _, off := range acc.Derefs {
			t.Refs = append(t.Refs, core.Ref{Off: off, User: a.User})
		}
		final, bitfield = acc.Final, acc.BitfieldType()
	} else if len(prm.Regs) > 1 {
		return probe.FetchArg{}, core.Errorf(core.ErrInvalid, "'%s' is passed in %d registers (%s); fetch one of its members.", a.Var, len(prm.Regs), strings.Join(prm.Regs, ", "))
	}
	cast := a.Type
	switch {
	case a.HasType && cast != "string" && cast != "ustring" && cast != "x" && cast != "s" && cast != "u":
		t.Type = cast
	case bitfield != "":
		t.Type = bitfield
	case a.HasType && (cast == "string" || cast == "ustring"):
		under := btf.UnderlyingType(final)
		var elem btf.Type
		switch x := under.(type) {
		case *btf.Pointer:
			elem = x.Target
			t.Refs = append(t.Refs, core.Ref{User: a.User})
		case *btf.Array:
			elem = x.Type
		default:
			return probe.FetchArg{}, core.Errorf(core.ErrInvalid, "Failed to cast into string: %s(%s) is not a pointer nor array.", a.Var, TypeString(final, 0))
		}
		if i, ok := btf.UnderlyingType(elem).(*btf.Int); !ok || i.Size != 1 {
			return probe.FetchArg{}, core.Errorf(core.ErrInvalid, "Failed to cast into string: %s is not (unsigned) char *.", a.Var)
		}
		t.Type = cast
	default:
		typ, bits := FetchType(final, r.hex, cast)
		if bits > core.MaxBasicTypeBits {
			return probe.FetchArg{}, core.Errorf(core.ErrInvalid, "%s is %d bits wide (%s); a fetch argument holds at most %d bits.\n Fetch one of its members, or cast it (%s:x64) to read its first 8 bytes.",
				spec.Arg{Var: a.Var, Fields: a.Fields}.String(), bits, TypeString(final, 0), core.MaxBasicTypeBits, spec.Arg{Var: a.Var, Fields: a.Fields}.String())
		}
		t.Type = typ
	}
	return t.FetchArg(), nil
}

func btfError(a *spec.Arg, err error) error {
	return core.Errorf(core.ErrInvalid, "%s: %v", a.Raw, err)
}

// Functions lists the functions BTF describes (those the kernel did not
// inline everywhere), those match keeps, sorted.
func (r *prototypes) Functions(match func(string) bool) ([]string, error) {
	names, err := r.s.FuncNames()
	if err != nil {
		return nil, err
	}
	out := names[:0]
	for _, n := range names {
		if match(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Vars is -V from BTF: a function's parameters at its entry, typed as
// perf's die_get_typename would print them.
func (r *prototypes) Vars(pp *spec.Point) ([]core.VarList, error) {
	if pp.HasFile || pp.Line != 0 || pp.HasLazy || pp.Offset != 0 || !pp.HasFunction || spec.IsGlob(pp.Function) {
		return nil, core.Errorf(core.ErrNeedsDWARF, "%s: variables there need DWARF debug information; BTF describes only function prototypes (parameters at the entry).", pp.String())
	}
	fn, err := r.s.FuncArch(pp.Function, r.arch)
	if err != nil {
		return nil, core.Errorf(core.ErrNotFound, "Failed to find %s in BTF: %v", pp.Function, err)
	}
	vl := core.VarList{Symbol: pp.Function}
	for _, p := range fn.Params {
		if p.Reg == "" {
			continue
		}
		vl.Vars = append(vl.Vars, btfTypeName(p.Type)+"\t"+p.Name)
	}
	sort.Strings(vl.Vars)
	return []core.VarList{vl}, nil
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
