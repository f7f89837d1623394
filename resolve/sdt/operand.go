package sdt

import (
	"debug/elf"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
)

// ErrSize: an operand's size is outside -8..8; perf then ignores every
// marker of the file.
var ErrSize = errors.New("SDT operand size out of range")

// Operand is one argument of a marker.
type Operand struct {
	// Text is the operand as the note writes it ("-4@%eax", "8@[sp, 16]").
	Text string
	// Size is N of "N@OP" (negative: signed); 0 when the operand has none.
	Size int
	// Op is OP, the assembler operand.
	Op string
	// Type is the fetch type for Size: u8, u16, u32, u64, s8 ... s64; ""
	// for no size or another one, which the kernel reads as its default.
	Type string
	// Fetch is how gprobe fetches the operand; nil when it cannot be
	// fetched (Why says why).
	Fetch probe.Fetch
	Why   string
	// Perf is what perf 6.1 on this machine's architecture writes for OP
	// ("%ax", "+16(%bp)"); "" when perf drops the operand.
	Perf string
}

// Name is the fetch argument's name: arg<I> for the operand at position i
// (0-based), as perf names them; a dropped operand keeps its number.
func Name(i int) string { return "arg" + strconv.Itoa(i+1) }

// Options are what the target kernel offers for operands.
type Options struct {
	// Immediates: the kernel reads immediate values (\IMM, tracefs README
	// "\imm-value"), which carry constant operands. Without it constants
	// are dropped, as perf drops them.
	Immediates bool
}

// Operands splits a note's argument string and translates each operand
// for a binary of machine m.
//
// The split is perf's: at white space, an operand holding "[sp," joined
// with the next word ("-4@[sp, 12]", which arm64 notes write with a space
// inside); gprobe joins any word that opens '[' without closing it
// ("-4@[x20, 8]"), where perf 6.1 counts two operands. The size is read as
// strtol reads it; a size outside -8..8 is an error wrapping ErrSize.
//
// Translation follows perf on x86 (EM_X86_64, EM_386): a register or
// [+-]NUM(REG) with GAS register names mapped to the kernel's (%eax and
// %al are %ax, %r12d is %r12); anything else — constants ($42),
// symbol-relative (foo(%rip)) and scaled-index operands — perf drops.
// gprobe fetches constants as immediates (\42, when opts.Immediates), and
// drops an operand whose register the kernel cannot fetch (%xmm0), which
// perf writes and the kernel refuses. On arm64 perf reads xNUM and
// [sp, NUM]; gprobe also reads x30, wNUM, [xNUM], [xNUM, OFF], [sp, -OFF]
// and constants (42, #42). Markers of other machines have their operands
// dropped.
func Operands(m elf.Machine, args string, opts Options) ([]Operand, error) {
	words := strings.Fields(args)
	var ops []Operand
	for i := 0; i < len(words); i++ {
		w := words[i]
		if i+1 < len(words) && strings.Contains(w, "[") && !strings.Contains(w, "]") {
			w += " " + words[i+1]
			i++
		}
		o, err := operand(m, w, opts)
		if err != nil {
			return nil, err
		}
		ops = append(ops, o)
	}
	return ops, nil
}

// PerfOperands is the operand list as perf 6.1 on this machine splits and
// translates it: the same as Operands but for the split (only "[sp," joins
// two words).
func PerfOperands(m elf.Machine, args string) ([]Operand, error) {
	words := strings.Fields(args)
	var ops []Operand
	for i := 0; i < len(words); i++ {
		w := words[i]
		if i+1 < len(words) && strings.Contains(w, "[sp,") {
			w += " " + words[i+1]
			i++
		}
		o, err := operand(m, w, Options{})
		if err != nil {
			return nil, err
		}
		ops = append(ops, o)
	}
	return ops, nil
}

func operand(m elf.Machine, w string, opts Options) (Operand, error) {
	o := Operand{Text: w, Op: w}
	if at := strings.IndexByte(w, '@'); at >= 0 {
		n, ok := strtol(w[:at])
		if !ok || n < -8 || n > 8 {
			return o, fmt.Errorf("operand %q: %w", w, ErrSize)
		}
		o.Size, o.Op = int(n), w[at+1:]
		o.Type = typeOf(o.Size)
	}
	o.Perf = perfOp(hostArch(), o.Op)
	switch m {
	case elf.EM_X86_64, elf.EM_386:
		o.Fetch, o.Why = x86Fetch(o.Op, opts)
	case elf.EM_AARCH64:
		o.Fetch, o.Why = arm64Fetch(o.Op, opts)
	default:
		o.Why = fmt.Sprintf("operands of %v markers are not translated", m)
	}
	return o, nil
}

// typeOf is perf's type_to_suffix: 1, 2, 4, 8 bytes unsigned, negative
// signed, other sizes no type.
func typeOf(size int) string {
	switch size {
	case 1, 2, 4, 8:
		return "u" + strconv.Itoa(8*size)
	case -1, -2, -4, -8:
		return "s" + strconv.Itoa(-8*size)
	}
	return ""
}

// strtol reads a decimal long as C's strtol(s, NULL, 10): leading white
// space, a sign, digits up to the first other byte; no digits is 0. ok is
// false on overflow (strtol then returns LONG_MIN or LONG_MAX, which perf
// refuses as it would any size out of range).
func strtol(s string) (int64, bool) {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n > (1<<63-1)/10 {
			return 0, false
		}
		n = n*10 + int64(s[i]-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// hostArch is the architecture whose rules perf running here applies to
// every binary: perf picks arch_sdt_arg_parse_op when it is built.
var hostArch = sync.OnceValue(func() arch.Arch {
	if runtime.GOARCH == "arm64" {
		return arch.ARM64
	}
	return arch.AMD64
})

// perfOp is perf 6.1's arch_sdt_arg_parse_op for arch: the uprobe text for
// OP, or "" when perf skips it.
func perfOp(a arch.Arch, op string) string {
	if a == arch.ARM64 {
		return perfARM64(op)
	}
	if x, ok := perfX86(op); ok {
		return x.text()
	}
	return ""
}

// x86Op is an operand perf's x86 pattern matched:
// ^([+-]?)([0-9]*)(\(?)(%[a-z][a-z0-9]+)(\)?)$.
type x86Op struct {
	sign, num      string
	open, close    bool
	gasReg, kernel string // the register as written (with '%') and renamed
}

func perfX86(op string) (x86Op, bool) {
	if strings.ContainsAny(op, ",$") {
		return x86Op{}, false
	}
	return matchX86(op)
}

// matchX86 matches perf's pattern ^([+-]?)([0-9]*)(\(?)(%[a-z][a-z0-9]+)(\)?)$
// (SDT_OP_REGEX, which admits no backtracking choice) and requires the
// register to be at most 6 bytes with its '%', as perf does.
func matchX86(op string) (x86Op, bool) {
	var x x86Op
	i := 0
	if i < len(op) && (op[i] == '+' || op[i] == '-') {
		x.sign, i = op[:1], 1
	}
	j := i
	for j < len(op) && isDigit(op[j]) {
		j++
	}
	x.num, i = op[i:j], j
	if i < len(op) && op[i] == '(' {
		x.open, i = true, i+1
	}
	if i+2 >= len(op) || op[i] != '%' || !isLower(op[i+1]) || !(isLower(op[i+2]) || isDigit(op[i+2])) {
		return x86Op{}, false
	}
	j = i + 3
	for j < len(op) && (isLower(op[j]) || isDigit(op[j])) {
		j++
	}
	x.gasReg, i = op[i:j], j
	if i < len(op) && op[i] == ')' {
		x.close, i = true, i+1
	}
	if i != len(op) || len(x.gasReg) > 6 {
		return x86Op{}, false
	}
	x.kernel = renameX86(x.gasReg)
	return x, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

// text is perf's rendering: a sign ('+' when only a displacement is
// written, "+0" when neither is) before the parenthesis, the displacement,
// the register renamed.
func (x x86Op) text() string {
	prefix := ""
	if x.open {
		switch {
		case x.sign != "":
			prefix = x.sign
		case x.num != "":
			prefix = "+"
		default:
			prefix = "+0"
		}
	}
	s := prefix + x.num
	if x.open {
		s += "("
	}
	s += x.kernel
	if x.close {
		s += ")"
	}
	return s
}

// x86Renames is perf's sdt_reg_tbl, in its order: GAS register names and
// the kernel's.
var x86Renames = [...][2]string{
	{"%eax", "%ax"}, {"%rax", "%ax"}, {"%al", "%ax"}, {"%ah", "%ax"},
	{"%ebx", "%bx"}, {"%rbx", "%bx"}, {"%bl", "%bx"}, {"%bh", "%bx"},
	{"%ecx", "%cx"}, {"%rcx", "%cx"}, {"%cl", "%cx"}, {"%ch", "%cx"},
	{"%edx", "%dx"}, {"%rdx", "%dx"}, {"%dl", "%dx"}, {"%dh", "%dx"},
	{"%esi", "%si"}, {"%rsi", "%si"}, {"%sil", "%si"},
	{"%edi", "%di"}, {"%rdi", "%di"}, {"%dil", "%di"},
	{"%ebp", "%bp"}, {"%rbp", "%bp"}, {"%bpl", "%bp"},
	{"%rsp", "%sp"}, {"%esp", "%sp"}, {"%spl", "%sp"},
	{"%r8b", "%r8"}, {"%r8w", "%r8"}, {"%r8d", "%r8"},
	{"%r9b", "%r9"}, {"%r9w", "%r9"}, {"%r9d", "%r9"},
	{"%r10b", "%r10"}, {"%r10w", "%r10"}, {"%r10d", "%r10"},
	{"%r11b", "%r11"}, {"%r11w", "%r11"}, {"%r11d", "%r11"},
	{"%r12b", "%r12"}, {"%r12w", "%r12"}, {"%r12d", "%r12"},
	{"%r13b", "%r13"}, {"%r13w", "%r13"}, {"%r13d", "%r13"},
	{"%r14b", "%r14"}, {"%r14w", "%r14"}, {"%r14d", "%r14"},
	{"%r15b", "%r15"}, {"%r15w", "%r15"}, {"%r15d", "%r15"},
}

// renameX86 is perf's sdt_rename_register: the first table name that
// starts with reg (strncmp over reg's length), else reg itself. So "%ax"
// and "%r12" are kept, and also "%r1" becomes "%r10".
func renameX86(reg string) string {
	for _, r := range x86Renames {
		if strings.HasPrefix(r[0], reg) {
			return r[1]
		}
	}
	return reg
}

// x86Fetch is gprobe's fetch for an x86 operand.
func x86Fetch(op string, opts Options) (probe.Fetch, string) {
	if x, ok := perfX86(op); ok {
		reg := strings.TrimPrefix(x.kernel, "%")
		switch {
		case !arch.AMD64.IsFetchRegister(reg):
			return nil, fmt.Sprintf("the kernel cannot fetch register %s", x.gasReg)
		case x.open != x.close:
			return nil, "unbalanced parenthesis"
		case !x.open && (x.sign != "" || x.num != ""):
			return nil, "a displacement without a parenthesis"
		case !x.open:
			return probe.Reg(reg), ""
		}
		off, err := strconv.ParseInt(x.num, 10, 64)
		if x.num == "" {
			off, err = 0, nil
		}
		if err != nil {
			return nil, "displacement out of range"
		}
		if x.sign == "-" {
			off = -off
		}
		return probe.Mem{Off: off, Inner: probe.Reg(reg)}, ""
	}
	if v, ok := strings.CutPrefix(op, "$"); ok {
		return immediate(v, opts)
	}
	switch {
	case strings.Contains(op, "(%rip)") || strings.Contains(op, "(%eip)"):
		return nil, "a symbol-relative operand (the address is not in the note)"
	case strings.Contains(op, ","):
		return nil, "a scaled-index operand, which fetch arguments cannot express"
	}
	return nil, "an operand neither perf nor gprobe reads"
}

// immediate fetches a constant operand as \IMM.
func immediate(v string, opts Options) (probe.Fetch, string) {
	n, ok := constant(v)
	switch {
	case !ok:
		return nil, "a constant that is not a number"
	case !opts.Immediates:
		return nil, "a constant, and the kernel has no immediate values (\\IMM)"
	}
	return probe.Imm(n), ""
}

// constant reads a GAS integer: decimal, 0x hex or leading-0 octal, with a
// sign; values beyond int64 keep their 64-bit pattern.
func constant(v string) (int64, bool) {
	neg := false
	if v != "" && (v[0] == '-' || v[0] == '+') {
		neg, v = v[0] == '-', v[1:]
	}
	if v == "" || v[0] < '0' || v[0] > '9' {
		return 0, false
	}
	u, err := strconv.ParseUint(v, 0, 64)
	if err != nil {
		return 0, false
	}
	n := int64(u)
	if neg {
		n = -n
	}
	return n, true
}

// perfARM64 is perf's arm64 arch_sdt_arg_parse_op: its patterns
// ^(x[1-2]?[0-9]|3[0-1])$ (so x30 is missed and a constant 30 read as
// "%30") and ^\[sp(, )?([0-9]+)?\]$.
func perfARM64(op string) string {
	switch {
	case len(op) == 2 && op[0] == 'x' && isDigit(op[1]),
		len(op) == 3 && op[0] == 'x' && (op[1] == '1' || op[1] == '2') && isDigit(op[2]),
		op == "30" || op == "31":
		return "%" + op
	}
	rest, ok := strings.CutPrefix(op, "[sp")
	if !ok || !strings.HasSuffix(rest, "]") {
		return ""
	}
	rest = strings.TrimPrefix(rest[:len(rest)-1], ", ")
	for i := 0; i < len(rest); i++ {
		if !isDigit(rest[i]) {
			return ""
		}
	}
	if rest == "" {
		return "+0(%sp)"
	}
	return "+" + rest + "(%sp)"
}

// arm64Memory reads [REG] and [REG, OFF] (OFF with an optional '#', sign
// and 0x), gprobe's addition to perf's forms.
func arm64Memory(op string) (reg, off string, ok bool) {
	inner, found := strings.CutPrefix(op, "[")
	if !found || !strings.HasSuffix(inner, "]") {
		return "", "", false
	}
	inner = inner[:len(inner)-1]
	reg, off, _ = strings.Cut(inner, ",")
	off = strings.TrimPrefix(strings.TrimLeft(off, " "), "#")
	if reg == "" || strings.TrimLeft(reg, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
		return "", "", false
	}
	if strings.Contains(inner, ",") {
		if _, ok := constant(off); !ok {
			return "", "", false
		}
	}
	return reg, off, true
}

// arm64Fetch is gprobe's fetch for an arm64 operand.
func arm64Fetch(op string, opts Options) (probe.Fetch, string) {
	if r, ok := arm64Register(op); ok {
		return probe.Reg(r), ""
	}
	if reg, disp, ok := arm64Memory(op); ok {
		r, ok := arm64Register(reg)
		if !ok {
			return nil, fmt.Sprintf("the kernel cannot fetch register %s", reg)
		}
		var off int64
		if disp != "" {
			off, _ = constant(disp)
		}
		return probe.Mem{Off: off, Inner: probe.Reg(r)}, ""
	}
	if v, ok := strings.CutPrefix(op, "#"); ok {
		return immediate(v, opts)
	}
	if _, ok := constant(op); ok {
		return immediate(op, opts)
	}
	if strings.Contains(op, ":lo12:") || strings.Contains(op, ":got") {
		return nil, "a symbol-relative operand (the address is not in the note)"
	}
	return nil, "an operand neither perf nor gprobe reads"
}

// arm64Register maps an arm64 register operand to the kernel's name: x0
// to x30 (w0 to w30 read as their x register), sp.
func arm64Register(s string) (string, bool) {
	if s == "sp" {
		return "sp", true
	}
	if len(s) < 2 || (s[0] != 'x' && s[0] != 'w') {
		return "", false
	}
	n, err := strconv.Atoi(s[1:])
	if err != nil || n < 0 || n > 30 || strconv.Itoa(n) != s[1:] {
		return "", false
	}
	return "x" + s[1:], true
}
