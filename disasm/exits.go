package disasm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/gprobe/gprobe/disasm/arch"
)

// ErrNoFunction: Exits was given no code to decode.
var ErrNoFunction = errors.New("no function code")

// ExitKind classifies an instruction by which a function leaves.
type ExitKind uint8

const (
	// Return is a return instruction: x86-64 ret (ret imm16, rep ret),
	// arm64 ret, retaa, retab; or a jump to a return thunk (x86 kernels
	// built with return thunks end functions with jmp __x86_return_thunk,
	// which the kernel patches at boot into ret or a jump to its chosen
	// thunk). The return value is in the ABI return register when it
	// executes.
	Return ExitKind = iota + 1
	// TailCall is an unconditional direct jump out of the function (to
	// another function, or to an x86 kernel's __x86_indirect_thunk_REG,
	// which is a tail call through a function pointer): the function's
	// frame is gone and the callee returns to the caller. Nothing is known
	// of the return value yet.
	TailCall
	// CondTailCall is a conditional branch out of the function (x86 jcc,
	// arm64 b.cond, cbz, cbnz, tbz, tbnz): a probe on it cannot tell
	// whether it leaves.
	CondTailCall
	// CondReturn is a conditional branch to a return thunk: likewise.
	CondReturn
	// IndirectJump is a jump through a register or memory (x86 jmp *X,
	// arm64 br, braa...): a jump table inside the function or a tail call
	// through a pointer; the code alone does not say which.
	IndirectJump
	// OtherReturn is a return that is not a function's (x86 far and
	// interrupt returns, sysret, sysexit; arm64 eret and its variants).
	OtherReturn
)

var exitNames = [...]string{
	Return:       "return",
	TailCall:     "tailcall",
	CondTailCall: "cond-tailcall",
	CondReturn:   "cond-return",
	IndirectJump: "indirect-jump",
	OtherReturn:  "other-return",
}

// String is the kind's name in listings: "return", "tailcall",
// "cond-tailcall", "cond-return", "indirect-jump", "other-return".
func (k ExitKind) String() string {
	if int(k) < len(exitNames) && exitNames[k] != "" {
		return exitNames[k]
	}
	return fmt.Sprintf("ExitKind(%d)", int(k))
}

// Probeable reports whether one probe on the instruction fires exactly
// when the function leaves through it: Return and TailCall. A conditional
// branch is probed whether or not it is taken, an indirect jump may stay
// in the function, and OtherReturn is not a function's return.
func (k ExitKind) Probeable() bool { return k == Return || k == TailCall }

// Code is one contiguous part of a function: its address, its bytes and
// offsets (from Addr) known to start instructions, such as line-table
// addresses, for Boundaries.
type Code struct {
	Addr  uint64
	Bytes []byte
	Known []int
}

func (c Code) end() uint64 { return c.Addr + uint64(len(c.Bytes)) }

func (c Code) contains(a uint64) bool { return c.Addr <= a && a < c.end() }

// Function is what Exits decodes: a function's code in one or more parts
// (its entry part first), and what the caller knows about the targets of
// jumps out of them.
type Function struct {
	Parts []Code
	// More returns the part of this function that holds target, when a
	// jump out of the known parts lands in another part of the same
	// function (GCC's FUNC.cold); ok false when target is not the
	// function's. Nil: the parts are all there is.
	More func(target uint64) (part Code, ok bool)
	// ReturnThunk reports whether a jump to target is a return (the x86
	// kernel's __x86_return_thunk). Nil: none is.
	ReturnThunk func(target uint64) bool
}

// Exit is one instruction by which a function leaves.
type Exit struct {
	Addr   uint64
	Len    int
	Kind   ExitKind
	Target uint64 // the branch target of a direct jump; 0 otherwise
	Text   string // the instruction in GNU syntax (relative targets as .+N)
}

// UndecodableError reports function code that could not be decoded: a
// return may hide in it, so no list of exits is complete. It wraps
// ErrUndecodable.
type UndecodableError struct {
	Regions []Region // absolute addresses, end exclusive
}

func (e *UndecodableError) Error() string {
	var b strings.Builder
	for i, r := range e.Regions {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%#x-%#x", r.Start, r.End)
	}
	return fmt.Sprintf("bytes %s could not be decoded, a return may hide there: %v", b.String(), ErrUndecodable)
}

func (e *UndecodableError) Unwrap() error { return ErrUndecodable }

// Exits decodes every part of fn (following jumps into further parts
// through fn.More) and returns every instruction by which it leaves, in
// address order: returns, and branches whose target lies outside all of
// its parts (a branch to a local label is not an exit, a branch to its
// own entry is a loop). Decoding is Boundaries' on each part, so code it
// cannot decode is an *UndecodableError rather than a silent gap. The
// other errors wrap arch.ErrUnsupported or ErrNoFunction, or ErrNotBoundary
// for a misaligned arm64 known offset. Exits never panics.
func Exits(isa arch.Arch, fn Function) ([]Exit, error) {
	if len(fn.Parts) == 0 {
		return nil, ErrNoFunction
	}
	parts := slices.Clone(fn.Parts)
	inside := func(a uint64) bool {
		return slices.ContainsFunc(parts, func(c Code) bool { return c.contains(a) })
	}
	type branch struct {
		exit Exit
		cond bool
	}
	var out []Exit
	var branches []branch
	var bad []Region
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		m, err := Boundaries(isa, p.Bytes, p.Known)
		if err != nil {
			return nil, err
		}
		for _, r := range m.undecodable {
			bad = append(bad, Region{int(p.Addr) + r.Start, int(p.Addr) + r.End})
		}
		for j, start := range m.starts {
			n := m.lens[j]
			if n == 0 {
				continue
			}
			addr := p.Addr + uint64(start)
			f, ok := classify(isa, p.Bytes[start:start+n], addr)
			if !ok {
				continue
			}
			e := Exit{Addr: addr, Len: n, Kind: f.kind, Target: f.target}
			if f.direct {
				branches = append(branches, branch{e, f.cond})
				if !inside(f.target) && fn.More != nil {
					if more, ok := fn.More(f.target); ok && more.contains(f.target) && !overlaps(parts, more) {
						parts = append(parts, more)
					}
				}
				continue
			}
			out = append(out, e)
		}
	}
	if len(bad) > 0 {
		return nil, &UndecodableError{Regions: bad}
	}
	// Only now are all parts known: a branch is an exit if it leaves them.
	for _, b := range branches {
		e := b.exit
		if inside(e.Target) {
			continue
		}
		thunk := fn.ReturnThunk != nil && fn.ReturnThunk(e.Target)
		switch {
		case thunk && b.cond:
			e.Kind = CondReturn
		case thunk:
			e.Kind = Return
		case b.cond:
			e.Kind = CondTailCall
		default:
			e.Kind = TailCall
		}
		out = append(out, e)
	}
	for i := range out {
		out[i].Text = insnText(isa, codeAt(parts, out[i].Addr, out[i].Len))
	}
	slices.SortFunc(out, func(a, b Exit) int {
		switch {
		case a.Addr < b.Addr:
			return -1
		case a.Addr > b.Addr:
			return 1
		}
		return 0
	})
	return out, nil
}

func overlaps(parts []Code, c Code) bool {
	return slices.ContainsFunc(parts, func(p Code) bool { return p.Addr < c.end() && c.Addr < p.end() })
}

func codeAt(parts []Code, addr uint64, n int) []byte {
	for _, p := range parts {
		if p.contains(addr) {
			off := int(addr - p.Addr)
			return p.Bytes[off : off+n]
		}
	}
	return nil
}

func insnText(isa arch.Arch, b []byte) string {
	switch isa {
	case arch.AMD64:
		return textX86(b)
	case arch.ARM64:
		return textARM64(b)
	}
	return ""
}

// flow is what classify found: an exit kind, or a direct branch to target
// (conditional or not) whose kind depends on where target is.
type flow struct {
	kind   ExitKind
	direct bool
	cond   bool
	target uint64
}

// classify reads one whole instruction at addr.
func classify(isa arch.Arch, b []byte, addr uint64) (flow, bool) {
	switch isa {
	case arch.AMD64:
		return classifyX86(b, addr)
	case arch.ARM64:
		if len(b) == 4 {
			return classifyARM64(binary.LittleEndian.Uint32(b), addr)
		}
	}
	return flow{}, false
}

func classifyX86(b []byte, addr uint64) (flow, bool) {
	inst, ok := x86asmDecode(b)
	if !ok || inst.Len != len(b) {
		return flow{}, false // only the table instructions x86asm lacks: none branches
	}
	switch inst.Op {
	case x86asm.RET:
		return flow{kind: Return}, true
	case x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ, x86asm.SYSRET, x86asm.SYSEXIT:
		return flow{kind: OtherReturn}, true
	case x86asm.JMP:
		if rel, ok := inst.Args[0].(x86asm.Rel); ok {
			return flow{direct: true, target: addr + uint64(len(b)) + uint64(int64(rel))}, true
		}
		return flow{kind: IndirectJump}, true
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE, x86asm.JL,
		x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JS,
		x86asm.JCXZ, x86asm.JECXZ, x86asm.JRCXZ, x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		if rel, ok := inst.Args[0].(x86asm.Rel); ok {
			return flow{direct: true, cond: true, target: addr + uint64(len(b)) + uint64(int64(rel))}, true
		}
	}
	return flow{}, false
}

// arm64 encodings (Arm ARM, C4.1 "A64 instruction set encoding").
const (
	arm64RetMask   = 0xfffffc1f // RET Xn: d65f0000 | Rn<<5
	arm64Ret       = 0xd65f0000
	arm64RetAA     = 0xd65f0bff
	arm64RetAB     = 0xd65f0fff
	arm64BrMask    = 0xfffffc1f // BR Xn: d61f0000 | Rn<<5
	arm64Br        = 0xd61f0000
	arm64BrPACMask = 0xfefff800 // BRAA, BRAB, BRAAZ, BRABZ: d61f08xx, d71f08xx
	arm64BrPAC     = 0xd61f0800
	arm64Eret      = 0xd69f03e0
	arm64EretAA    = 0xd69f0bff
	arm64EretAB    = 0xd69f0fff
)

func classifyARM64(w uint32, addr uint64) (flow, bool) {
	switch {
	case w&arm64RetMask == arm64Ret, w == arm64RetAA, w == arm64RetAB:
		return flow{kind: Return}, true
	case w == arm64Eret, w == arm64EretAA, w == arm64EretAB:
		return flow{kind: OtherReturn}, true
	case w&arm64BrMask == arm64Br, w&arm64BrPACMask == arm64BrPAC:
		return flow{kind: IndirectJump}, true
	case w&0xfc000000 == 0x14000000: // B imm26
		return flow{direct: true, target: addr + uint64(signExtend(w&0x03ffffff, 26)<<2)}, true
	case w&0xff000000 == 0x54000000: // B.cond, BC.cond imm19
		return flow{direct: true, cond: true, target: addr + uint64(signExtend(w>>5&0x7ffff, 19)<<2)}, true
	case w&0x7e000000 == 0x34000000: // CBZ, CBNZ imm19
		return flow{direct: true, cond: true, target: addr + uint64(signExtend(w>>5&0x7ffff, 19)<<2)}, true
	case w&0x7e000000 == 0x36000000: // TBZ, TBNZ imm14
		return flow{direct: true, cond: true, target: addr + uint64(signExtend(w>>5&0x3fff, 14)<<2)}, true
	}
	return flow{}, false
}

// signExtend reads the low bits bits of v as a two's complement number.
func signExtend(v uint32, bits uint) int64 {
	shift := 64 - bits
	return int64(uint64(v)<<shift) >> shift
}
