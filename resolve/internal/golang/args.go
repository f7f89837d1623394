package golang

import (
	"fmt"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
)

// GoidArg is $goid: the running goroutine's id, g.goid read through the g
// register (+152(%r14):u64 with go1.26 on x86-64). Only code that keeps g
// in that register may use it (KeepsG).
func GoidArg(isa arch.Arch, rt *Runtime) probe.FetchArg {
	typ := fmt.Sprintf("u%d", 8*rt.GoidSize)
	return probe.FetchArg{Name: probe.GoroutineField, Expr: probe.Mem{Off: rt.Goid, Inner: probe.Reg(isa.GoGRegister())}, Type: typ}
}

// PairingArgs are the fields gprobe adds to the probes of a Go function's
// entry (after its stack check) and return instructions, for readers to
// pair each call's entry with its return by goroutine and depth (see
// probe.GoStackPointerField): the goroutine's id, the stack pointer and
// the top of the goroutine's stack. The fields the probe already has
// (a $goid of the user's) are not repeated.
func PairingArgs(isa arch.Arch, rt *Runtime, have []probe.FetchArg) []probe.FetchArg {
	g := probe.Reg(isa.GoGRegister())
	all := []probe.FetchArg{
		GoidArg(isa, rt),
		{Name: probe.GoStackPointerField, Expr: probe.Reg(isa.StackPointer()), Type: "x64"},
		{Name: probe.GoStackTopField, Expr: probe.Mem{Off: rt.StackHi, Inner: g}, Type: "x64"},
	}
	var out []probe.FetchArg
	for _, a := range all {
		dup := false
		for _, h := range have {
			dup = dup || h.Name == a.Name
		}
		if !dup {
			out = append(out, a)
		}
	}
	return out
}
