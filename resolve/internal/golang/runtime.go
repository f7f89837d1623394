package golang

import (
	"debug/dwarf"
	"fmt"

	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// Runtime is the layout of the runtime's goroutine, struct runtime.g, as
// the program's own DWARF gives it (it changes between Go releases: goid
// is at 152 in go1.26 on amd64).
type Runtime struct {
	// Goid is the offset of g.goid, the goroutine's id (a uint64 since
	// go1.20, an int64 before).
	Goid int64
	// GoidSize is its size in bytes.
	GoidSize int64
	// StackHi is the offset of g.stack.hi, the top of the goroutine's
	// stack: the stack grows down from it, and moves with it, so hi less
	// the stack pointer is a call's depth whichever stack it runs on.
	StackHi int64
}

// ReadRuntime reads runtime.g's layout from the DWARF of a Go program:
// Go's linker puts every type in a unit named "runtime".
func ReadRuntime(f *dwarfinfo.File) (*Runtime, error) {
	units, err := f.UnitsNamed("runtime")
	if err != nil {
		return nil, err
	}
	// The types' unit is one of them, usually the last.
	for i := len(units) - 1; i >= 0; i-- {
		cu, err := f.Unit(units[i])
		if err != nil {
			return nil, err
		}
		kids, err := cu.Children(cu.Lines.Offset)
		if err != nil {
			return nil, err
		}
		for _, k := range kids {
			if k.Tag != dwarf.TagStructType || k.Val(dwarf.AttrName) != "runtime.g" {
				continue
			}
			return runtimeG(cu, uint64(k.Offset))
		}
	}
	return nil, fmt.Errorf("%s: %w", f.Path, ErrNoRuntime)
}

func runtimeG(cu *dwarfinfo.CU, off uint64) (*Runtime, error) {
	ts := NewTypes(cu)
	g, err := ts.At(off)
	if err != nil {
		return nil, err
	}
	rt := &Runtime{}
	goid, ok := g.Field("goid")
	if !ok {
		return nil, fmt.Errorf("%w: runtime.g has no goid", ErrNoRuntime)
	}
	goidType, err := ts.At(goid.Type)
	if err != nil {
		return nil, err
	}
	rt.Goid, rt.GoidSize = goid.Off, goidType.Size
	stack, ok := g.Field("stack")
	if !ok {
		return nil, fmt.Errorf("%w: runtime.g has no stack", ErrNoRuntime)
	}
	st, err := ts.At(stack.Type)
	if err != nil {
		return nil, err
	}
	hi, ok := st.Field("hi")
	if !ok {
		return nil, fmt.Errorf("%w: runtime.g's stack has no hi", ErrNoRuntime)
	}
	rt.StackHi = stack.Off + hi.Off
	return rt, nil
}
