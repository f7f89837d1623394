package disasm

import (
	"encoding/binary"

	"github.com/gprobe/gprobe/disasm/arch"

	"golang.org/x/arch/x86/x86asm"
)

// GoStackCheck is the stack-growth check a Go function starts with: the
// stack pointer (less the frame) compared with the goroutine's stack
// guard, and a conditional branch to a block that calls runtime.morestack
// and jumps back to the function's entry. When the stack must grow, the
// check runs again on the new stack, so a probe at the entry fires twice
// for one call; a probe at End fires once, with the stack pointer of the
// entry and the register arguments untouched.
//
// The compiler writes it as (cmd/internal/obj/x86/obj6.go and
// arm64/obj7.go, stacksplit), for a frame of F bytes:
//
//	x86-64, F <= 128:   cmp %rsp, 0x10(%r14); jbe MORE
//	x86-64, F <= 4096:  lea -(F-128)(%rsp), %r12; cmp %r12, 0x10(%r14); jbe MORE
//	x86-64, larger:     mov %rsp, %r12; sub $(F-128), %r12; jb MORE; cmp %r12, 0x10(%r14); jbe MORE
//	arm64, F <= 128:    ldr x16, [x28,#16]; cmp sp, x16; b.ls MORE
//	arm64, F <= 4096:   ldr x16, [x28,#16]; sub x17, sp, #(F-128); cmp x17, x16; b.ls MORE
//	arm64, larger:      ldr x16, [x28,#16]; subs x17, sp, #(F-128); b.lo MORE; cmp x17, x16; b.ls MORE
//	                    (F-128 built in x27 first when no immediate holds it:
//	                    mov x27, #lo; movk x27, #hi, lsl #16; subs x17, sp, x27 ...)
//
// ABI0 (assembly) code on x86-64 first loads g from thread-local storage
// (mov %fs:-8, %r14); code marked as C compares with stackguard1 (0x18).
type GoStackCheck struct {
	// End is the offset from the entry of the first instruction after the
	// check.
	End int
	// Morestack is the address the check branches to when the stack must
	// grow.
	Morestack uint64
	// Guard is the offset in runtime.g of the guard compared with: 16
	// (stackguard0) or 24 (stackguard1).
	Guard int64
	// TLS is set when the check loads g from thread-local storage first
	// (ABI0 code on x86-64); g is in the g register (%r14) after it either
	// way.
	TLS bool
}

// Go's g register and the registers its stack check uses.
const (
	goGuard0 = 16 // offsetof(runtime.g, stackguard0): after stack.lo, stack.hi
	goGuard1 = 24 // stackguard1
)

// FindGoStackCheck decodes the start of a Go function (code from its
// entry, at address addr) and returns its stack-growth check, or false
// when the function does not start with one (a function marked NOSPLIT,
// or code not compiled by Go). Only the patterns the Go compiler writes
// are recognised, so a false answer is never a guess.
func FindGoStackCheck(isa arch.Arch, code []byte, addr uint64) (GoStackCheck, bool) {
	switch isa {
	case arch.AMD64:
		return goStackCheckX86(code, addr)
	case arch.ARM64:
		return goStackCheckARM64(code, addr)
	}
	return GoStackCheck{}, false
}

// x86Step decodes one instruction at off, or reports false.
func x86Step(code []byte, off int) (x86asm.Inst, bool) {
	if off >= len(code) {
		return x86asm.Inst{}, false
	}
	inst, ok := x86asmDecode(code[off:])
	return inst, ok
}

func goStackCheckX86(code []byte, addr uint64) (GoStackCheck, bool) {
	var sc GoStackCheck
	off := 0
	inst, ok := x86Step(code, off)
	if !ok {
		return sc, false
	}
	// ABI0: mov %fs:-8, %r14 (g from TLS into the g register).
	if inst.Op == x86asm.MOV && len(inst.Args) >= 2 {
		if r, isReg := inst.Args[0].(x86asm.Reg); isReg && r == x86asm.R14 {
			if m, isMem := inst.Args[1].(x86asm.Mem); isMem && m.Segment == x86asm.FS {
				sc.TLS = true
				off += inst.Len
				if inst, ok = x86Step(code, off); !ok {
					return sc, false
				}
			}
		}
	}
	cmpReg := x86asm.RSP
	switch {
	case inst.Op == x86asm.LEA && isX86Reg(inst.Args[0], x86asm.R12) && isX86Mem(inst.Args[1], x86asm.RSP):
		// lea -(F-128)(%rsp), %r12
		cmpReg = x86asm.R12
		off += inst.Len
		if inst, ok = x86Step(code, off); !ok {
			return sc, false
		}
	case inst.Op == x86asm.MOV && isX86Reg(inst.Args[0], x86asm.R12) && isX86Reg(inst.Args[1], x86asm.RSP):
		// mov %rsp, %r12; sub $(F-128), %r12; jb MORE
		cmpReg = x86asm.R12
		off += inst.Len
		if inst, ok = x86Step(code, off); !ok || inst.Op != x86asm.SUB || !isX86Reg(inst.Args[0], x86asm.R12) {
			return sc, false
		}
		if _, imm := inst.Args[1].(x86asm.Imm); !imm {
			return sc, false
		}
		off += inst.Len
		if inst, ok = x86Step(code, off); !ok || inst.Op != x86asm.JB {
			return sc, false
		}
		off += inst.Len
		if inst, ok = x86Step(code, off); !ok {
			return sc, false
		}
	}
	// cmp REG, 0x10(%r14), either operand order.
	if inst.Op != x86asm.CMP {
		return sc, false
	}
	a, b := inst.Args[0], inst.Args[1]
	if _, isMem := a.(x86asm.Mem); isMem {
		a, b = b, a
	}
	m, isMem := b.(x86asm.Mem)
	if !isX86Reg(a, cmpReg) || !isMem || m.Segment != 0 || m.Base != x86asm.R14 || m.Index != 0 || (m.Disp != goGuard0 && m.Disp != goGuard1) {
		return sc, false
	}
	sc.Guard = m.Disp
	off += inst.Len
	if inst, ok = x86Step(code, off); !ok || inst.Op != x86asm.JBE {
		return sc, false
	}
	rel, isRel := inst.Args[0].(x86asm.Rel)
	if !isRel {
		return sc, false
	}
	off += inst.Len
	sc.End = off
	sc.Morestack = addr + uint64(off) + uint64(int64(rel))
	return sc, true
}

func isX86Reg(a x86asm.Arg, r x86asm.Reg) bool {
	got, ok := a.(x86asm.Reg)
	return ok && got == r
}

func isX86Mem(a x86asm.Arg, base x86asm.Reg) bool {
	m, ok := a.(x86asm.Mem)
	return ok && m.Segment == 0 && m.Base == base && m.Index == 0
}

// arm64 words of the check (Arm ARM C4.1), registers fixed by the Go
// compiler: g in x28, the guard loaded into x16, SP less the frame in x17.
const (
	a64LdrGuardMask = 0xffc003ff // LDR x16, [x28, #imm12*8]
	a64LdrGuard     = 0xf9400000 | 28<<5 | 16
	a64SubImmMask   = 0xff8003ff // SUB/SUBS x17, sp, #imm12{, lsl #12}
	a64SubX17       = 0xd1000000 | 31<<5 | 17
	a64SubsX17      = 0xf1000000 | 31<<5 | 17
	a64SubsX17X27   = 0xeb3b63f1 // SUBS x17, sp, x27, uxtx (a frame too large for an immediate)
	a64MovWideMask  = 0xff80001f // MOVZ/MOVN/MOVK x27, #imm16{, lsl #N}
	a64MovzX27      = 0xd2800000 | 27
	a64MovnX27      = 0x92800000 | 27
	a64MovkX27      = 0xf2800000 | 27
	a64OrrImmMask   = 0xff8003ff // ORR x27, xzr, #bitmask (MOV x27, #imm)
	a64OrrX27       = 0xb2000000 | 31<<5 | 27
	a64CmpSPX16     = 0xeb3063ff // CMP sp, x16 (SUBS xzr, sp, x16, uxtx)
	a64CmpX17X16    = 0xeb10023f // CMP x17, x16 (SUBS xzr, x17, x16)
)

// arm64 condition codes (Arm ARM C1.2.4).
const (
	condLO = 3 // CC: unsigned lower
	condLS = 9 // unsigned lower or same
)

func goStackCheckARM64(code []byte, addr uint64) (GoStackCheck, bool) {
	var sc GoStackCheck
	word := func(off int) (uint32, bool) {
		if off < 0 || off+4 > len(code) {
			return 0, false
		}
		return binary.LittleEndian.Uint32(code[off:]), true
	}
	w, ok := word(0)
	if !ok || w&a64LdrGuardMask != a64LdrGuard {
		return sc, false
	}
	sc.Guard = int64(w>>10&0xfff) * 8
	if sc.Guard != goGuard0 && sc.Guard != goGuard1 {
		return sc, false
	}
	off := 4
	// A frame size no immediate holds is built in x27 first (MOVD $F-128, R27).
	mov := 0
	for ; mov < 4; mov++ {
		w, _ = word(off + 4*mov)
		switch {
		case w&a64MovWideMask == a64MovzX27 || w&a64MovWideMask == a64MovnX27 ||
			w&a64MovWideMask == a64MovkX27 || w&a64OrrImmMask == a64OrrX27:
			continue
		}
		break
	}
	cmp := uint32(a64CmpSPX16)
	switch w, _ = word(off + 4*mov); {
	case mov == 0 && w&a64SubImmMask == a64SubX17:
		cmp = a64CmpX17X16
		off += 4
	case mov == 0 && w&a64SubImmMask == a64SubsX17 || mov > 0 && w == a64SubsX17X27:
		cmp = a64CmpX17X16
		off += 4 * mov
		if _, ok := arm64CondBranch(code, off+4, condLO); !ok {
			return sc, false
		}
		off += 8
	case mov > 0:
		return sc, false
	}
	if w, ok = word(off); !ok || w != cmp {
		return sc, false
	}
	off += 4
	rel, ok := arm64CondBranch(code, off, condLS)
	if !ok {
		return sc, false
	}
	sc.End = off + 4
	sc.Morestack = addr + uint64(off) + uint64(rel)
	return sc, true
}

// arm64CondBranch decodes B.cond at off and returns its target relative
// to the instruction, when its condition is cond.
func arm64CondBranch(code []byte, off int, cond uint32) (int64, bool) {
	if off < 0 || off+4 > len(code) {
		return 0, false
	}
	w := binary.LittleEndian.Uint32(code[off:])
	if w&0xff000010 != 0x54000000 || w&0xf != cond {
		return 0, false
	}
	return signExtend(w>>5&0x7ffff, 19) << 2, true
}
