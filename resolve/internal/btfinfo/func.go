package btfinfo

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/internal/brief"
)

// Func is a function's prototype as BTF records it.
type Func struct {
	Name string // the BTF name (base name for name.isra.N lookups)
	// Params in declaration order. Reg is empty until ParamRegs (or FuncArch)
	// fills it in.
	Params   []Param
	Return   Type // *btf.Void for void functions
	Variadic bool // the prototype ends in "..." (not listed in Params)
	// SretReg is set by ParamRegs when the function returns a struct larger
	// than 16 bytes: the register holding the hidden result pointer ("di" on
	// x86-64, which shifts every parameter by one register; "x8" on arm64).
	SretReg string
	BTF     *btf.Func
}

// Param is one function parameter.
type Param struct {
	Name  string
	Type  Type
	Index int // 0-based position in the prototype
	// Reg is the argument register holding the parameter at function entry
	// (one of arch.Arch.ArgRegisters), "" if the parameter is passed on
	// the stack or not in a general-purpose register (float/double). Filled
	// in by ParamRegs.
	Reg string
	// Regs lists every register of a parameter that spans more than one
	// (a 16-byte struct or __int128 passed in two registers); Regs[0] == Reg.
	Regs []string
	// ByRef: arm64 passes composites larger than 16 bytes as a pointer to a
	// caller-made copy; Reg then holds that pointer, not the value.
	ByRef bool
}

// Func returns the prototype of the kernel function name.
//
// "name.isra.0", "name.constprop.3", "name.part.1", "name.cold" ... are
// looked up by their base name when BTF has no exact entry (pahole emits only
// the base function). When BTF holds several functions with the name (static
// functions in different files), the first is used if all prototypes are
// identical; otherwise the error wraps ErrNotFound and lists the candidates.
//
// Parameter registers are not filled in: call ParamRegs, or use FuncArch.
func (s *Spec) Func(name string) (*Func, error) {
	fns, err := s.funcsByName(name)
	if err != nil {
		return nil, err
	}
	if len(fns) == 0 {
		if i := strings.IndexByte(name, '.'); i > 0 {
			fns, err = s.funcsByName(name[:i])
			if err != nil {
				return nil, err
			}
		}
	}
	if len(fns) == 0 {
		return nil, fmt.Errorf("function %s: %w", name, ErrNotFound)
	}
	first := protoString(fns[0])
	for _, f := range fns[1:] {
		if p := protoString(f); p != first {
			var protos []string
			for _, g := range fns {
				protos = append(protos, protoString(g))
			}
			return nil, fmt.Errorf("function %s: %d BTF functions with different prototypes (%s): %w",
				name, len(fns), brief.Join(protos, " | "), ErrNotFound)
		}
	}
	return newFunc(fns[0])
}

// FuncArch is Func followed by ParamRegs(arch, f).
func (s *Spec) FuncArch(name string, isa arch.Arch) (*Func, error) {
	f, err := s.Func(name)
	if err != nil {
		return nil, err
	}
	if err := s.ParamRegs(isa, f); err != nil {
		return nil, err
	}
	return f, nil
}

func protoString(f *btf.Func) string { return TypeString(f.Type, 1) }

func (s *Spec) funcsByName(name string) ([]*btf.Func, error) {
	ts, err := s.typesByName(name)
	if err != nil {
		return nil, err
	}
	var fns []*btf.Func
	for _, t := range ts {
		if f, ok := t.(*btf.Func); ok {
			fns = append(fns, f)
		}
	}
	return fns, nil
}

// FuncFromBTF builds a Func from a cilium *btf.Func (e.g. from iterating
// Spec.BTF().All()).
func FuncFromBTF(bf *btf.Func) (*Func, error) { return newFunc(bf) }

func newFunc(bf *btf.Func) (*Func, error) {
	proto, ok := bf.Type.(*btf.FuncProto)
	if !ok {
		return nil, fmt.Errorf("function %s: type is %T, not a prototype: %w", bf.Name, bf.Type, ErrUnsupported)
	}
	f := &Func{Name: bf.Name, Return: proto.Return, BTF: bf}
	if f.Return == nil {
		f.Return = &btf.Void{}
	}
	for i, p := range proto.Params {
		if _, ok := p.Type.(*btf.Void); ok && i == len(proto.Params)-1 {
			f.Variadic = true
			break
		}
		f.Params = append(f.Params, Param{Name: p.Name, Type: p.Type, Index: i})
	}
	return f, nil
}

// ParamRegs fills in Param.Reg/Regs/ByRef for f following the C calling
// convention of arch (System V x86-64 psABI, or AAPCS64), whose integer
// argument registers are arch.ArgRegisters():
//
//   - integers, enums, pointers and bools up to 8 bytes take one register;
//   - 9..16-byte integers (__int128) and structs/unions take two registers
//     (arm64 starts a 16-byte-aligned __int128 on an even register); if not
//     enough registers remain, the parameter goes on the stack (on arm64 all
//     later ones do too, on x86-64 later smaller ones still use registers);
//   - structs larger than 16 bytes: x86-64 passes them on the stack; arm64
//     passes a pointer in a register (ByRef);
//   - a struct/union return value larger than 16 bytes takes a hidden
//     pointer argument: %di on x86-64 (parameters start at %si), x8 on arm64;
//   - float/double use vector registers: Reg "" (the kernel does not use them).
//
// Struct classification is simplified: any struct of 16 bytes or less is
// treated as INTEGER class (true for kernel code, which has no floats).
// Another architecture gives an error wrapping ErrUnsupported.
func (s *Spec) ParamRegs(isa arch.Arch, f *Func) error {
	var arm bool
	switch isa {
	case arch.AMD64:
	case arch.ARM64:
		arm = true
	default:
		return fmt.Errorf("architecture %v: no calling convention: %w", isa, ErrUnsupported)
	}
	regs := isa.ArgRegisters()
	next := 0
	f.SretReg = ""
	// A struct/union returned in memory (larger than 16 bytes) is written
	// through a hidden pointer: the first argument register on x86-64 (all
	// parameters shift by one), x8 on arm64 (not an argument register).
	if r := btf.UnderlyingType(f.Return); isComposite(r) {
		if sz, err := btf.Sizeof(r); err == nil && sz > 16 {
			if arm {
				f.SretReg = "x8"
			} else {
				f.SretReg = regs[0]
				next = 1
			}
		}
	}
	for i := range f.Params {
		p := &f.Params[i]
		p.Reg, p.Regs, p.ByRef = "", nil, false
		t := btf.UnderlyingType(p.Type)
		size, err := btf.Sizeof(t)
		if err != nil {
			// Unsized (incomplete) type: cannot happen in valid C; guess 1 reg.
			size = 8
		}
		need := 1
		switch v := t.(type) {
		case *btf.Float:
			continue
		case *btf.Struct, *btf.Union, *btf.Array:
			if size > 16 {
				if !arm {
					continue // memory class: on the stack
				}
				p.ByRef = true
			} else if size > 8 {
				need = 2
			}
		case *btf.Int:
			if v.Size > 8 {
				need = 2
				if arm && next%2 == 1 {
					next++ // C.9: 16-byte aligned types start on an even register
				}
			}
		}
		if next+need > len(regs) {
			if arm {
				next = len(regs) // C.13: no more register arguments
			}
			continue
		}
		p.Regs = append([]string(nil), regs[next:next+need]...)
		p.Reg = p.Regs[0]
		next += need
	}
	return nil
}
