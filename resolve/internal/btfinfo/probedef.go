package btfinfo

import (
	"sync"

	"github.com/cilium/ebpf/btf"

	"github.com/gprobe/gprobe/emit/probedef"
)

// ProbeBTF is s as the kernel's probe-event parser reads BTF, for
// probedef.Options.BTF: the checks of BTF arguments (parameter names, their
// members, $retval's type) then answer as that kernel would.
func (s *Spec) ProbeBTF() probedef.BTF { return probeBTF{s} }

type probeBTF struct{ s *Spec }

// Func is btf_find_func_proto: the first function of that name, as
// bpf_find_btf_id finds it.
func (b probeBTF) Func(name string) ([]probedef.BTFParam, probedef.BTFType, bool) {
	fns, err := b.s.funcsByName(name)
	if err != nil || len(fns) == 0 {
		return nil, nil, false
	}
	proto, ok := fns[0].Type.(*btf.FuncProto)
	if !ok {
		return nil, nil, false
	}
	var params []probedef.BTFParam
	for _, p := range proto.Params {
		params = append(params, probedef.BTFParam{Name: p.Name, Type: probeType(p.Type)})
	}
	var ret probedef.BTFType
	if r := btf.UnderlyingType(proto.Return); r != nil {
		if _, void := r.(*btf.Void); !void {
			ret = probeType(r)
		}
	}
	return params, ret, true
}

// probeType wraps t with its modifiers and typedefs skipped
// (btf_type_skip_modifiers); nil stays nil.
func probeType(t btf.Type) probedef.BTFType {
	if t == nil {
		return nil
	}
	return kernelType{btf.UnderlyingType(t)}
}

type kernelType struct{ t btf.Type }

func (k kernelType) Kind() probedef.BTFKind {
	switch x := k.t.(type) {
	case *btf.Int:
		return probedef.BTFInt
	case *btf.Pointer:
		return probedef.BTFPointer
	case *btf.Array:
		return probedef.BTFArray
	case *btf.Struct, *btf.Union:
		return probedef.BTFStruct
	case *btf.Enum:
		if x.Size == 8 {
			return probedef.BTFEnum64
		}
		return probedef.BTFEnum
	}
	return probedef.BTFOther
}

func (k kernelType) Int() (bits, offset int, signed bool) {
	i, ok := k.t.(*btf.Int)
	if !ok {
		return 0, 0, false
	}
	return int(i.Size) * 8, 0, i.Encoding&btf.Signed != 0
}

func (k kernelType) Elem() probedef.BTFType {
	switch x := k.t.(type) {
	case *btf.Pointer:
		return kernelType{btf.UnderlyingType(x.Target)}
	case *btf.Array:
		return kernelType{btf.UnderlyingType(x.Type)}
	}
	return nil
}

// Member is btf_find_struct_member: the direct members first, then the
// anonymous structs and unions, the last one first.
func (k kernelType) Member(name string) (probedef.BTFType, int, int, bool) {
	ms := members(k.t)
	for _, m := range ms {
		if m.Name == name {
			return probeType(m.Type), int(m.Offset), int(m.BitfieldSize), true
		}
	}
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		if m.Name != "" {
			continue
		}
		anon := btf.UnderlyingType(m.Type)
		if !isComposite(anon) {
			continue
		}
		if t, off, bits, ok := (kernelType{anon}).Member(name); ok {
			return t, int(m.Offset) + off, bits, true
		}
	}
	return nil, 0, 0, false
}

// RunningProbeBTF is the running kernel's BTF (/sys/kernel/btf/vmlinux) as
// ProbeBTF gives it, loaded on its first question: checking lines that use
// no BTF argument costs nothing. Without kernel BTF no function is found.
func RunningProbeBTF() probedef.BTF { return &lazyBTF{} }

type lazyBTF struct {
	once sync.Once
	b    probedef.BTF
}

func (l *lazyBTF) Func(name string) ([]probedef.BTFParam, probedef.BTFType, bool) {
	l.once.Do(func() {
		if s, err := LoadKernel(); err == nil {
			l.b = s.ProbeBTF()
		}
	})
	if l.b == nil {
		return nil, nil, false
	}
	return l.b.Func(name)
}
