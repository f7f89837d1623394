// Package arch describes each architecture gprobe supports, once: its ELF
// machine, the names the kernel and perf give it and its registers (a
// DWARF register number as a kprobe fetch argument names it, the registers
// a fetch argument may name) and the registers of its C calling
// convention. It is a leaf every layer may import: the grammar checker
// (emit/probedef), the DWARF and BTF readers and the disassembler.
package arch

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
)

var (
	// ErrUnsupported: the architecture or ELF machine is not handled.
	ErrUnsupported = errors.New("unsupported architecture")
	// ErrUnknownRegister: a DWARF register number has no kprobe name.
	ErrUnknownRegister = errors.New("unknown DWARF register")
)

// Arch is an instruction set architecture gprobe supports, and the one
// place that describes it: its ELF machine, its names, the registers kprobe
// fetch arguments name, and the registers of its C calling convention.
// Adding an architecture means adding its entry to arches and a decoder
// (disasm.Boundaries, disasm.Map.Insn). What is not a table stays with its user: the
// calling convention's rules (btfinfo.ParamRegs), ELF relocations
// (dwarfinfo), and the kernel's x86 ENDBR entry offset (probedef).
type Arch int

// Supported architectures. The zero value is not a valid Arch; options that
// take an Arch read it as "the running machine" (Host).
const (
	AMD64 Arch = iota + 1
	ARM64
)

// archInfo is what gprobe knows about one architecture. Register names are
// the kernel's pt_regs names as kprobe fetch arguments spell them, without
// the leading '%'.
type archInfo struct {
	name    string // as the kernel and perf spell it
	goarch  string // runtime.GOARCH of a host of this architecture
	machine elf.Machine
	// dwarfRegs maps a DWARF register number to its name as perf 6.1 prints
	// it (tools/perf/arch/*/include/dwarf-regs-table.h).
	dwarfRegs []string
	// fetchRegs are the names a kprobe fetch argument may use: the kernel's
	// regoffset_table, which regs_query_register_offset searches.
	fetchRegs []string
	// argRegs are the integer argument registers of the C calling
	// convention, in order.
	argRegs []string
	ret, sp string // the return-value register and the stack pointer
	// goInts, goFloats and goG are Go's register ABI (ABIInternal, Go
	// 1.17+, src/cmd/compile/abi-internal.md): the integer and
	// floating-point argument and result registers in order, and the
	// register that holds the running goroutine's g.
	goInts, goFloats []string
	goG              string
	// vectorBase is the DWARF number of the first floating-point/vector
	// register (xmm0: 17, v0: 64); vectorN how many there are and
	// vectorName their name's prefix.
	vectorBase, vectorN int
	vectorName          string
}

// arches is indexed by Arch; index 0 (the invalid Arch) is empty, AMD64 is
// the first valid index.
var arches = [...]archInfo{
	AMD64: {
		name:    "x86_64",
		goarch:  "amd64",
		machine: elf.EM_X86_64,
		// System V psABI numbering: rax rdx rcx rbx rsi rdi rbp rsp r8..r15,
		// in pt_regs names (ax, not rax). DWARF 16 (the return address
		// column, rip) has no entry: perf rejects it.
		dwarfRegs: []string{
			"ax", "dx", "cx", "bx", "si", "di", "bp", "sp",
			"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
		},
		// arch/x86/kernel/ptrace.c with CONFIG_X86_64, in its order.
		fetchRegs: []string{
			"r15", "r14", "r13", "r12", "r11", "r10", "r9", "r8",
			"bx", "cx", "dx", "si", "di", "bp", "ax",
			"orig_ax", "ip", "cs", "flags", "sp", "ss",
		},
		argRegs: []string{"di", "si", "dx", "cx", "r8", "r9"},
		ret:     "ax",
		sp:      "sp",
		goInts:  []string{"ax", "bx", "cx", "di", "si", "r8", "r9", "r10", "r11"},
		goFloats: []string{"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
			"xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14"},
		goG:        "r14",
		vectorBase: 17, vectorN: 16, vectorName: "xmm",
	},
	ARM64: {
		name:    "arm64",
		goarch:  "arm64",
		machine: elf.EM_AARCH64,
		// AArch64 DWARF numbering: x0..x30, sp. perf names x30 "lr", which
		// the kernel accepts as well as "x30".
		dwarfRegs: []string{
			"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7",
			"x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
			"x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23",
			"x24", "x25", "x26", "x27", "x28", "x29", "lr", "sp",
		},
		// arch/arm64/kernel/ptrace.c regoffset_table, "lr" (x30) included:
		// it is the name gprobe prints for DWARF register 30.
		fetchRegs: []string{
			"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7",
			"x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
			"x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23",
			"x24", "x25", "x26", "x27", "x28", "x29", "x30", "lr",
			"sp", "pc", "pstate",
		},
		argRegs: []string{"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"},
		ret:     "x0",
		sp:      "sp",
		goInts: []string{"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7",
			"x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15"},
		goFloats: []string{"v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7",
			"v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15"},
		goG:        "x28",
		vectorBase: 64, vectorN: 32, vectorName: "v",
	},
}

// info returns a's entry, or nil for an invalid Arch.
func (a Arch) info() *archInfo {
	if a <= 0 || int(a) >= len(arches) {
		return nil
	}
	return &arches[a]
}

// String returns the architecture name as the kernel and perf spell it:
// "x86_64" or "arm64". Other values print as "Arch(N)".
func (a Arch) String() string {
	if i := a.info(); i != nil {
		return i.name
	}
	return fmt.Sprintf("Arch(%d)", int(a))
}

// ForMachine returns the Arch for an ELF machine: EM_X86_64 gives AMD64
// and EM_AARCH64 gives ARM64. Any other machine gives an error wrapping
// ErrUnsupported.
func ForMachine(m elf.Machine) (Arch, error) {
	for a := AMD64; int(a) < len(arches); a++ {
		if arches[a].machine == m {
			return a, nil
		}
	}
	return 0, fmt.Errorf("ELF machine %v: %w", m, ErrUnsupported)
}

// ForFile returns the Arch of the ELF file at path, read from its ELF
// header alone (debug/elf.Open reads and allocates every section header
// too: libjvm.so's 46 SDT markers checked one by one made 0.5 MB of it).
// A file that is not ELF, or of another machine, gives an error.
func ForFile(path string) (Arch, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var h [20]byte // e_ident, e_type, e_machine
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:4]) != elf.ELFMAG {
		return 0, fmt.Errorf("%s: not an ELF file: %w", path, ErrUnsupported)
	}
	var order binary.ByteOrder = binary.LittleEndian
	if elf.Data(h[elf.EI_DATA]) == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	return ForMachine(elf.Machine(order.Uint16(h[18:])))
}

// OfFile returns the Arch of the ELF binary at path, or the host's when it
// cannot tell (not ELF, unreadable, another machine).
func OfFile(path string) Arch {
	if a, err := ForFile(path); err == nil {
		return a
	}
	a, _ := Host()
	return a
}

// Files remembers the Arch of each binary OfFile was asked about, for a
// caller asking once for each of many probes of one binary.
type Files map[string]Arch

// Of is OfFile(path), read once for each path.
func (fs Files) Of(path string) Arch {
	a, ok := fs[path]
	if !ok {
		a = OfFile(path)
		fs[path] = a
	}
	return a
}

// Machine returns a's ELF machine (EM_X86_64, EM_AARCH64), or EM_NONE for an
// invalid Arch.
func (a Arch) Machine() elf.Machine {
	if i := a.info(); i != nil {
		return i.machine
	}
	return elf.EM_NONE
}

// Host returns the Arch of the machine gprobe runs on. On any other
// machine it returns an error wrapping ErrUnsupported.
func Host() (Arch, error) {
	for a := AMD64; int(a) < len(arches); a++ {
		if arches[a].goarch == runtime.GOARCH {
			return a, nil
		}
	}
	return 0, fmt.Errorf("GOARCH %s: %w", runtime.GOARCH, ErrUnsupported)
}

// OrHost returns a, or Host() if a is the zero Arch: options that take
// an Arch mean the running machine by the zero value. An invalid a gives an
// error wrapping ErrUnsupported.
func (a Arch) OrHost() (Arch, error) {
	switch {
	case a == 0:
		return Host()
	case a.info() == nil:
		return 0, fmt.Errorf("arch %v: %w", a, ErrUnsupported)
	}
	return a, nil
}

// FetchRegisters returns the register names a kprobe fetch argument may use
// on a ("%NAME"), without the '%': the names the kernel's
// regs_query_register_offset accepts. An invalid Arch gives nil. The slice
// is the caller's.
func (a Arch) FetchRegisters() []string {
	if i := a.info(); i != nil {
		return slices.Clone(i.fetchRegs)
	}
	return nil
}

// IsFetchRegister reports whether name (without the '%') is one of
// FetchRegisters, without copying them; an invalid Arch knows none.
func (a Arch) IsFetchRegister(name string) bool {
	i := a.info()
	return i != nil && slices.Contains(i.fetchRegs, name)
}

// ArgRegisters returns the integer argument registers of a's C calling
// convention in order (System V: di si dx cx r8 r9; AAPCS64: x0..x7),
// without the '%'. An invalid Arch gives nil. The slice is the caller's.
func (a Arch) ArgRegisters() []string {
	if i := a.info(); i != nil {
		return slices.Clone(i.argRegs)
	}
	return nil
}

// ReturnRegister returns the register holding an integer return value ("ax",
// "x0"), without the '%'. An invalid Arch gives "".
func (a Arch) ReturnRegister() string {
	if i := a.info(); i != nil {
		return i.ret
	}
	return ""
}

// StackPointer returns the stack pointer register ("sp"), without the '%'.
// An invalid Arch gives "".
func (a Arch) StackPointer() string {
	if i := a.info(); i != nil {
		return i.sp
	}
	return ""
}

// GoIntRegisters returns the integer registers of Go's register ABI in
// assignment order (x86-64: ax bx cx di si r8 r9 r10 r11; arm64: x0..x15),
// as kprobe fetch arguments name them. An invalid Arch gives nil. The
// slice is the caller's.
func (a Arch) GoIntRegisters() []string {
	if i := a.info(); i != nil {
		return slices.Clone(i.goInts)
	}
	return nil
}

// GoFloatRegisters returns the floating-point registers of Go's register
// ABI in assignment order (x86-64: xmm0..xmm14; arm64: v0..v15). A probe
// cannot fetch them: they are named for messages. An invalid Arch gives
// nil. The slice is the caller's.
func (a Arch) GoFloatRegisters() []string {
	if i := a.info(); i != nil {
		return slices.Clone(i.goFloats)
	}
	return nil
}

// GoGRegister returns the register in which Go code compiled for the
// register ABI keeps the running goroutine's g ("r14", "x28"). An invalid
// Arch gives "".
func (a Arch) GoGRegister() string {
	if i := a.info(); i != nil {
		return i.goG
	}
	return ""
}

// VectorRegister names the floating-point or vector register a DWARF
// register number denotes (x86-64 17-32: xmm0-xmm15; arm64 64-95:
// v0-v31), which kprobe fetch arguments cannot read: for messages that
// say where a value is. ok is false for any other number.
func VectorRegister(a Arch, dwarfReg int) (name string, ok bool) {
	i := a.info()
	if i == nil || dwarfReg < i.vectorBase || dwarfReg >= i.vectorBase+i.vectorN {
		return "", false
	}
	return fmt.Sprintf("%s%d", i.vectorName, dwarfReg-i.vectorBase), true
}

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
// ErrUnsupported.
func KprobeRegister(arch Arch, dwarfReg int) (string, error) {
	i := arch.info()
	if i == nil {
		return "", fmt.Errorf("arch %v: %w", arch, ErrUnsupported)
	}
	if dwarfReg < 0 || dwarfReg >= len(i.dwarfRegs) {
		return "", &RegisterError{Arch: arch, Reg: dwarfReg}
	}
	return i.dwarfRegs[dwarfReg], nil
}
