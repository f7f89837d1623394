package golang

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/gprobe/gprobe/disasm/arch"
)

// Part is where a piece of a value is passed by the register ABI: an
// integer register (Reg, a kprobe register name), a floating-point one
// (Float set, Reg its name for messages: probes cannot fetch it), or the
// stack (Stack set, StackOff from the start of the stack-assigned area,
// which is 8 bytes above the stack pointer at the entry and at a return
// on both x86-64 and arm64).
type Part struct {
	Off, Size int64 // the bytes of the value this part holds
	Reg       string
	Float     bool
	Stack     bool
	StackOff  int64
}

// Frame is where a function's arguments and results are at its entry and
// at its returns: one list of parts per value, in order.
type Frame struct {
	Args, Results [][]Part
}

// ABI is a Go function's calling convention.
type ABI int

const (
	// ABIInternal is the register ABI of compiled Go code (Go 1.17+ on
	// x86-64, 1.18+ on arm64).
	ABIInternal ABI = iota
	// ABI0 passes everything on the stack: assembly, and the few Go
	// functions whose body the compiler writes for assembly callers.
	ABI0
)

// FuncABI tells a function's ABI from the symbol at its entry and its
// source file: Go's linker names an ABI0 body NAME.abi0 when the function
// has an ABIInternal one too, and assembly (a .s file) is ABI0 unless it
// says otherwise, which the binary does not record (gprobe reads no
// arguments of assembly anyway: its DWARF has none).
func FuncABI(symbol, declFile string) ABI {
	if strings.HasSuffix(symbol, ".abi0") || strings.HasSuffix(declFile, ".s") {
		return ABI0
	}
	return ABIInternal
}

// Signature is what Assign places: a function's ABI, its arguments (the
// receiver first) and results as its DWARF lists them, and where the
// hidden dictionary of a generic function's shape instance goes (Dict).
type Signature struct {
	ABI           ABI
	Dict          Dict
	Args, Results []*Type
}

// Dict is where a function takes a generic dictionary, which its DWARF
// does not list.
type Dict int

const (
	// NoDict: not a shape instance, or one that takes no dictionary (a
	// closure, which captures it; a type's generated equality function).
	NoDict Dict = iota
	// DictFirst: a generic function's shape instance, dictionary first.
	DictFirst
	// DictAfterReceiver: a generic type's method, dictionary after the
	// receiver.
	DictAfterReceiver
)

// closureName matches the closures the compiler names inside a function
// (F.func1, F.gowrap2, F.deferwrap1, nested F.func1.2), compiled on
// first use (not at each gprobe start).
var closureName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\.(func|gowrap|deferwrap)[0-9]+(\.|$)`)
})

// DictOf tells from a function's name whether it is a generic shape
// instance and where its dictionary goes: "main.Map[go.shape.int]" takes
// it first, "main.(*Box[go.shape.string]).Get" after the receiver, their
// closures ("main.Map[go.shape.int].func1") none.
func DictOf(name string) Dict {
	i := strings.Index(name, "[go.shape.")
	if i < 0 || strings.HasPrefix(name, "type:") {
		return NoDict
	}
	depth, end := 0, -1
	for j := i; j < len(name) && end < 0; j++ {
		switch name[j] {
		case '[':
			depth++
		case ']':
			if depth--; depth == 0 {
				end = j
			}
		}
	}
	if end < 0 {
		return NoDict
	}
	rest := name[end+1:]
	switch {
	case closureName().MatchString(rest):
		return NoDict
	case rest == "":
		return DictFirst
	}
	return DictAfterReceiver
}

// Assign places a function's arguments (the receiver first) and results
// by Go's register ABI (src/cmd/compile/abi-internal.md, "Function call
// argument and result passing"): each value goes whole into the next free
// integer and floating-point registers if they suffice, else whole onto
// the stack; results start again from the first registers, and
// stack-assigned results follow the stack-assigned arguments, aligned to
// 8 bytes. Go's DWARF describes where the arguments are, not the results:
// this is how a probe on a return instruction finds them.
func Assign(isa arch.Arch, ts *Types, sig Signature) (Frame, error) {
	ints, floats := isa.GoIntRegisters(), isa.GoFloatRegisters()
	if ints == nil {
		return Frame{}, fmt.Errorf("%w: Go's register ABI on %v", ErrUnsupported, isa)
	}
	if sig.ABI == ABI0 {
		ints, floats = nil, nil
	}
	a := &assigner{ts: ts, ints: ints, floats: floats}
	dict := func() error {
		_, err := a.value(&Type{Name: ".dict", Kind: UnsafePointer, Size: 8})
		return err
	}
	if sig.Dict == DictFirst {
		if err := dict(); err != nil {
			return Frame{}, err
		}
	}
	var fr Frame
	for i, t := range sig.Args {
		if i == 1 && sig.Dict == DictAfterReceiver {
			if err := dict(); err != nil {
				return Frame{}, err
			}
		}
		p, err := a.value(t)
		if err != nil {
			return Frame{}, err
		}
		fr.Args = append(fr.Args, p)
	}
	a.stack = align(a.stack, 8)
	a.i, a.f = 0, 0
	for _, t := range sig.Results {
		p, err := a.value(t)
		if err != nil {
			return Frame{}, err
		}
		fr.Results = append(fr.Results, p)
	}
	return fr, nil
}

type assigner struct {
	ts           *Types
	ints, floats []string
	i, f         int   // next free registers
	stack        int64 // next free stack offset
}

// value assigns one argument or result: registers if it fits, else stack.
func (a *assigner) value(t *Type) ([]Part, error) {
	i, f := a.i, a.f
	var parts []Part
	ok, err := a.regs(t, 0, &parts)
	if err != nil {
		return nil, err
	}
	if ok {
		return parts, nil
	}
	a.i, a.f = i, f
	al, err := a.ts.Align(t)
	if err != nil {
		return nil, err
	}
	a.stack = align(a.stack, al)
	p := []Part{{Off: 0, Size: t.Size, Stack: true, StackOff: a.stack}}
	a.stack += t.Size
	return p, nil
}

// regs register-assigns t at offset off of the value, reporting false
// when the registers do not suffice (or an array of more than one element
// is met).
func (a *assigner) regs(t *Type, off int64, parts *[]Part) (bool, error) {
	switch {
	case t.Size == 0 && t.Kind != Array && t.Kind != Struct:
		return true, nil
	case t.Kind.integer() || t.Kind.pointerShaped():
		return a.int(off, t.Size, parts), nil
	case t.Kind == Float32 || t.Kind == Float64:
		return a.float(off, t.Size, parts), nil
	case t.Kind == Complex64 || t.Kind == Complex128:
		half := t.Size / 2
		return a.float(off, half, parts) && a.float(off+half, half, parts), nil
	case t.Kind == String || t.Kind == Interface || t.Kind == Slice || t.Kind == Struct:
		for _, fl := range t.Fields {
			ft, err := a.ts.At(fl.Type)
			if err != nil {
				return false, err
			}
			ok, err := a.regs(ft, off+fl.Off, parts)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case t.Kind == Array:
		switch t.Len {
		case 0:
			return true, nil
		case 1:
			et, err := a.ts.At(t.Elem)
			if err != nil {
				return false, err
			}
			return a.regs(et, off, parts)
		}
		return false, nil
	}
	return false, fmt.Errorf("%w: a %v (%s) in Go's register ABI", ErrUnsupported, t.Kind, t.Name)
}

func (a *assigner) int(off, size int64, parts *[]Part) bool {
	if a.i >= len(a.ints) {
		return false
	}
	*parts = append(*parts, Part{Off: off, Size: size, Reg: a.ints[a.i]})
	a.i++
	return true
}

func (a *assigner) float(off, size int64, parts *[]Part) bool {
	if a.f >= len(a.floats) {
		return false
	}
	*parts = append(*parts, Part{Off: off, Size: size, Reg: a.floats[a.f], Float: true})
	a.f++
	return true
}

func align(n, a int64) int64 {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}
