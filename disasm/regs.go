package disasm

import "fmt"

// DWARF register number → kprobe register name, as perf 6.1 prints them in
// probe definitions (tools/perf/arch/*/include/dwarf-regs-table.h, selected by
// the ELF machine in get_dwarf_regstr), without the leading '%'.
var (
	// x86-64 DWARF numbering (System V psABI): rax rdx rcx rbx rsi rdi rbp
	// rsp r8..r15. Kprobes use the pt_regs names (ax, not rax). DWARF 16
	// (the return address column, rip) has no entry: perf rejects it.
	x86Regs = []string{
		"ax", "dx", "cx", "bx", "si", "di", "bp", "sp",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
	}
	// AArch64 DWARF numbering: x0..x30, sp. perf names x30 "lr", which is
	// also the only name the kernel's arm64 regs_query_register_offset
	// accepts for it.
	arm64Regs = []string{
		"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7",
		"x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
		"x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23",
		"x24", "x25", "x26", "x27", "x28", "x29", "lr", "sp",
	}
)

// RegisterError reports a DWARF register number with no kprobe name. It wraps
// ErrUnknownRegister.
type RegisterError struct {
	Arch Arch
	Reg  int
}

// Error returns perf's wording for the same failure.
func (e *RegisterError) Error() string {
	return fmt.Sprintf("Mapping for the register number %d missing on this architecture.", e.Reg)
}

// Unwrap returns ErrUnknownRegister.
func (e *RegisterError) Unwrap() error { return ErrUnknownRegister }

// KprobeRegister maps a DWARF register number to the kprobe register name as
// perf 6.1 prints it, without the leading '%': on x86-64 0..15 give ax, dx,
// cx, bx, si, di, bp, sp, r8..r15; on arm64 0..29 give x0..x29, 30 gives lr
// and 31 gives sp. Any other number gives a *RegisterError (wrapping
// ErrUnknownRegister) whose text is perf's: "Mapping for the register number
// N missing on this architecture." An invalid arch gives an error wrapping
// ErrUnsupportedArch.
func KprobeRegister(arch Arch, dwarfReg int) (string, error) {
	var tbl []string
	switch arch {
	case AMD64:
		tbl = x86Regs
	case ARM64:
		tbl = arm64Regs
	default:
		return "", fmt.Errorf("arch %v: %w", arch, ErrUnsupportedArch)
	}
	if dwarfReg < 0 || dwarfReg >= len(tbl) {
		return "", &RegisterError{Arch: arch, Reg: dwarfReg}
	}
	return tbl[dwarfReg], nil
}
