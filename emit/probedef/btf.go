package probedef

// What the kernel reads from its BTF to parse BTF arguments (kernels whose
// README offers "<argname>"): a function's prototype, and the types reached
// through its parameters. Options.BTF supplies it (resolve/internal/btfinfo
// adapts a vmlinux's or the running kernel's BTF); without it, BTF names are
// checked for syntax only.

// BTF is the kernel's BTF as trace_probe.c queries it.
type BTF interface {
	// Func is btf_find_func_proto: the parameters and the return type (nil
	// for void) of the function named name; ok is false when BTF has no
	// such function.
	Func(name string) (params []BTFParam, ret BTFType, ok bool)
}

// BTFParam is one parameter of a function prototype.
type BTFParam struct {
	Name string // "" when BTF records none
	Type BTFType
}

// BTFKind is the kind of a BTF type, as far as the kernel tells them apart.
type BTFKind int

// The kinds the kernel's BTF argument parser looks at.
const (
	BTFOther BTFKind = iota // void, float, function prototypes...
	BTFInt
	BTFPointer
	BTFArray
	BTFStruct // a struct or a union
	BTFEnum
	BTFEnum64
)

// BTFType is one type, with modifiers and typedefs already skipped
// (btf_type_skip_modifiers).
type BTFType interface {
	Kind() BTFKind
	// Int describes an integer: its width in bits (BTF_INT_BITS), its
	// BTF_INT_OFFSET and whether its encoding is signed.
	Int() (bits, offset int, signed bool)
	// Elem is the type a pointer points to or an array holds.
	Elem() BTFType
	// Member is btf_find_struct_member on a struct or union: the member
	// named name (anonymous members searched too), its bit offset from the
	// start of the type and its bitfield size (0: not a bitfield).
	Member(name string) (typ BTFType, bitOffset, bitSize int, ok bool)
}
