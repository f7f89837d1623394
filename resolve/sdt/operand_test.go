package sdt

import (
	"debug/elf"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
)

// x86Cases: operand → perf 6.1's text (from arch/x86/util/perf_regs.c,
// confirmed by perf's output on the binaries of the differential tests),
// gprobe's fetch text, type. gprobe "" means dropped.
// operandCase is an operand, perf's text for it, gprobe's fetch ("":
// dropped) and its type.
type operandCase struct{ text, perf, gprobe, typ string }

var x86Cases = []operandCase{
	{"8@%rbx", "%bx", "%bx", "u64"},
	{"-4@%eax", "%ax", "%ax", "s32"},
	{"-4@%r9d", "%r9", "%r9", "s32"},
	{"-2@%r13w", "%r13", "%r13", "s16"},
	{"1@%r12b", "%r12", "%r12", "u8"},
	{"1@%al", "%ax", "%ax", "u8"},
	{"-1@%ah", "%ax", "%ax", "s8"},
	{"8@%rsp", "%sp", "%sp", "u64"},
	{"4@%esi", "%si", "%si", "u32"},
	{"1@%dil", "%di", "%di", "u8"},
	{"8@%r8", "%r8", "%r8", "u64"},
	{"8@%r15", "%r15", "%r15", "u64"},
	{"1@37(%r14)", "+37(%r14)", "+37(%r14)", "u8"},
	{"8@16(%rbp)", "+16(%bp)", "+16(%bp)", "u64"},
	{"-4@+24(%rdi)", "+24(%di)", "+24(%di)", "s32"},
	{"-4@112(%rsp)", "+112(%sp)", "+112(%sp)", "s32"},
	{"8@-80(%rbx)", "-80(%bx)", "-80(%bx)", "u64"},
	{"-80(%rbx)", "-80(%bx)", "-80(%bx)", ""}, // no size: no type
	{"-8@(%rsi)", "+0(%si)", "+0(%si)", "s64"},
	{"%rdi", "%di", "%di", ""},
	// Constants: perf drops them, gprobe reads them as immediates.
	{"-4@$42", "", `\42`, "s32"},
	{"-4@$-7", "", `\-7`, "s32"},
	{"4@$-1", "", `\-1`, "u32"},
	{"8@$0x10", "", `\16`, "u64"},
	{"-4@$0", "", `\0`, "s32"},
	// Neither reads these.
	{"-8@g(%rip)", "", "", "s64"},
	{"8@check_action(%rip)", "", "", "u64"},
	{"8@44+mp_(%rip)", "", "", "u64"},
	{"8@(%rax,%rsi,8)", "", "", "u64"},
	{"8@10(%rax,%rsi,8)", "", "", "u64"},
	{"8@$foo", "", "", "u64"},
	// perf writes what the kernel refuses; gprobe drops it.
	{"16@%xmm0", "", "", ""}, // size out of range: error, below
	{"8@%xmm0", "%xmm0", "", "u64"},
	{"8@(%rax", "+0(%ax", "", "u64"},
	{"8@%rax)", "%ax)", "", "u64"},
	{"8@+8%rax", "8%ax", "", "u64"},
	// perf's prefix match: "%r1" is the first table name starting so.
	{"8@%r1", "%r10", "%r10", "u64"},
	{"3@%rax", "%ax", "%ax", ""},
	{"0@%rax", "%ax", "%ax", ""},
	{"x@%rax", "%ax", "%ax", ""}, // strtol: 0
	{"+8@%rax", "%ax", "%ax", "u64"},
}

func TestX86Operands(t *testing.T) { checkOperands(t, elf.EM_X86_64, arch.AMD64, x86Cases) }

func TestARM64Operands(t *testing.T) { checkOperands(t, elf.EM_AARCH64, arch.ARM64, arm64Cases) }

// checkOperands translates each case for machine m, and perf's text with
// perf's rules for arch.
func checkOperands(t *testing.T, m elf.Machine, a arch.Arch, cases []operandCase) {
	t.Helper()
	for _, c := range cases {
		ops, err := Operands(m, c.text, Options{Immediates: true})
		if c.text == "16@%xmm0" {
			if !errors.Is(err, ErrSize) {
				t.Errorf("%s: err %v, want ErrSize", c.text, err)
			}
			continue
		}
		if err != nil || len(ops) != 1 {
			t.Errorf("%s: %v %v", c.text, ops, err)
			continue
		}
		o := ops[0]
		got := ""
		if o.Fetch != nil {
			got = o.Fetch.String()
		}
		if perf := perfOp(a, o.Op); perf != c.perf || got != c.gprobe || o.Type != c.typ {
			t.Errorf("%s: perf %q gprobe %q type %q, want %q %q %q (%s)", c.text, perf, got, o.Type, c.perf, c.gprobe, c.typ, o.Why)
		}
		if o.Fetch == nil && o.Why == "" {
			t.Errorf("%s: dropped without a reason", c.text)
		}
	}
}

func TestImmediatesNeedTheKernel(t *testing.T) {
	ops, err := Operands(elf.EM_X86_64, "-4@$42 8@%rax", Options{})
	if err != nil || len(ops) != 2 || ops[0].Fetch != nil || !strings.Contains(ops[0].Why, `\IMM`) || ops[1].Fetch == nil {
		t.Errorf("without immediates: %+v %v", ops, err)
	}
}

var arm64Cases = []operandCase{
	{"-4@x0", "%x0", "%x0", "s32"},
	{"8@x19", "%x19", "%x19", "u64"},
	{"8@x29", "%x29", "%x29", "u64"},
	{"8@x30", "", "%x30", "u64"}, // perf's pattern misses x30
	{"-4@w3", "", "%x3", "s32"},
	{"8@sp", "", "%sp", "u64"},
	{"-4@[sp, 12]", "+12(%sp)", "+12(%sp)", "s32"},
	{"-4@[sp]", "+0(%sp)", "+0(%sp)", "s32"},
	{"-4@[sp, -16]", "", "-16(%sp)", "s32"},
	{"-4@[x20, 8]", "", "+8(%x20)", "s32"},
	{"1@[x20, 12]", "", "+12(%x20)", "u8"},
	{"-8@[x1]", "", "+0(%x1)", "s64"},
	{"-8@[x29, #-24]", "", "-24(%x29)", "s64"},
	{"-4@42", "", `\42`, "s32"},
	{"-4@-7", "", `\-7`, "s32"},
	{"-4@#5", "", `\5`, "s32"},
	{"8@30", "%30", `\30`, "u64"}, // perf reads "30" as a register
	{"-8@[x0, #:lo12:.LANCHOR0]", "", "", "s64"},
	{"8@[x31]", "", "", "u64"},
	{"8@v0", "", "", "u64"},
}

// TestSplit: operands split at white space, "[..., ...]" joined; perf
// joins only "[sp," and so counts "[x20, 8]" as two operands.
func TestSplit(t *testing.T) {
	args := "-4@[x20, 8] 1@[sp, 12] -8@x0"
	ops, err := Operands(elf.EM_AARCH64, args, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range ops {
		got = append(got, o.Text)
	}
	if strings.Join(got, "|") != "-4@[x20, 8]|1@[sp, 12]|-8@x0" {
		t.Errorf("gprobe split %q", got)
	}
	pops, err := PerfOperands(elf.EM_AARCH64, args)
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, o := range pops {
		got = append(got, o.Text)
	}
	if strings.Join(got, "|") != "-4@[x20,|8]|1@[sp, 12]|-8@x0" {
		t.Errorf("perf split %q", got)
	}
}

// TestOtherMachines: operands of machines gprobe does not translate are
// dropped, as perf's default arch_sdt_arg_parse_op drops them.
func TestOtherMachines(t *testing.T) {
	ops, err := Operands(elf.EM_RISCV, "8@a0 -4@8(sp)", Options{Immediates: true})
	if err != nil || len(ops) != 2 || ops[0].Fetch != nil || ops[1].Fetch != nil {
		t.Errorf("%+v %v", ops, err)
	}
}

func TestSizes(t *testing.T) {
	for size, typ := range map[string]string{"1": "u8", "2": "u16", "4": "u32", "8": "u64",
		"-1": "s8", "-2": "s16", "-4": "s32", "-8": "s64", "5": "", "-3": "", "": "", " 4": "u32", "4x": "u32"} {
		ops, err := Operands(elf.EM_X86_64, size+"@%rax", Options{})
		if err != nil || ops[0].Type != typ {
			t.Errorf("size %q: %+v %v, want type %q", size, ops, err, typ)
		}
	}
	for _, size := range []string{"9", "-9", "16", "99999999999999999999"} {
		if _, err := Operands(elf.EM_X86_64, size+"@%rax", Options{}); !errors.Is(err, ErrSize) {
			t.Errorf("size %q: %v, want ErrSize", size, err)
		}
	}
}

// FuzzOperands: any argument string gives operands or ErrSize, never a
// panic; each fetch gprobe makes is one the kernel's grammar accepts on a
// uprobe of that architecture, and each translation is stable.
func FuzzOperands(f *testing.F) {
	for _, c := range x86Cases {
		f.Add(c.text, false)
	}
	for _, c := range arm64Cases {
		f.Add(c.text, true)
	}
	f.Add("8@%rbp 8@%r12 -4@%eax", false)
	f.Add("-4@[sp, 12] -4@[sp, 8] -4@[sp,", true)
	f.Fuzz(func(t *testing.T, args string, arm bool) {
		m, a := elf.EM_X86_64, arch.AMD64
		if arm {
			m, a = elf.EM_AARCH64, arch.ARM64
		}
		ops, err := Operands(m, args, Options{Immediates: true})
		if err != nil {
			if !errors.Is(err, ErrSize) {
				t.Fatalf("%q: %v", args, err)
			}
			return
		}
		p := probe.Probe{Kind: probe.Uprobe, Group: "g", Event: "e", Target: probe.Location{Path: "/bin/sh", Offset: 1}}
		for i, o := range ops {
			if o.Fetch == nil {
				if o.Why == "" {
					t.Fatalf("%q: operand %d dropped without a reason", args, i)
				}
				continue
			}
			p.Args = append(p.Args, probe.FetchArg{Name: Name(i), Expr: o.Fetch, Type: o.Type})
		}
		if len(p.Args) == 0 || len(p.Args) > probedef.MaxTraceArgs {
			return
		}
		if _, err := probedef.Parse(p.String(), &probedef.Options{Arch: a, NoStat: true}); err != nil {
			t.Fatalf("%q: %s: %v", args, p.String(), err)
		}
		again, err := Operands(m, args, Options{Immediates: true})
		if err != nil || len(again) != len(ops) {
			t.Fatalf("%q: not stable", args)
		}
	})
}

// TestConsistent: the probes of one event end up with the same argument
// names and types, as the kernel requires.
func TestConsistent(t *testing.T) {
	mk := func(args ...probe.FetchArg) probe.Probe {
		return probe.Probe{Kind: probe.Uprobe, Group: "g", Event: "e", Target: probe.Location{Path: "/bin/sh", Offset: 1}, Args: args}
	}
	reg := func(name, typ string) probe.FetchArg {
		return probe.FetchArg{Name: name, Expr: probe.Reg("ax"), Type: typ}
	}
	imm := func(name, typ string) probe.FetchArg {
		return probe.FetchArg{Name: name, Expr: probe.Imm(-1), Type: typ}
	}
	// libjvm's AttachCurrentThread__return: -4@%eax and 4@$-1.
	got, dropped := Consistent([]probe.Probe{mk(reg("arg1", "s32")), mk(imm("arg1", "u32"))})
	if len(dropped) != 0 || got[0].String() != "p:g/e /bin/sh:0x1 arg1=%ax:s32" || got[1].String() != `p:g/e /bin/sh:0x1 arg1=\-1:s32` {
		t.Errorf("signedness: %v %v", got, dropped)
	}
	// libjvm's NewDirectByteBuffer__return: a pointer, 8@%rax, and NULL,
	// -8@$0: the pointer's type.
	got, dropped = Consistent([]probe.Probe{mk(reg("arg1", "u64")), mk(imm("arg1", "s64"))})
	if len(dropped) != 0 || got[0].Args[0].Type != "u64" || got[1].Args[0].Type != "u64" {
		t.Errorf("a pointer and NULL: %v %v", got, dropped)
	}
	// A marker without the argument (perf drops a constant), or sizes
	// that differ: left out of all.
	got, dropped = Consistent([]probe.Probe{mk(reg("arg1", "u64"), reg("arg2", "u8")), mk(reg("arg2", "u8"))})
	if strings.Join(dropped, ",") != "arg1" || len(got[0].Args) != 1 || got[0].Args[0].Name != "arg2" {
		t.Errorf("missing: %v %v", got, dropped)
	}
	got, dropped = Consistent([]probe.Probe{mk(reg("arg1", "u64")), mk(reg("arg1", "u32"))})
	if strings.Join(dropped, ",") != "arg1" || len(got[0].Args)+len(got[1].Args) != 0 {
		t.Errorf("sizes: %v %v", got, dropped)
	}
	same := []probe.Probe{mk(reg("arg1", "u64")), mk(reg("arg1", "u64"))}
	if got, dropped := Consistent(same); len(dropped) != 0 || &got[0] != &same[0] {
		t.Errorf("consistent already: %v %v", got, dropped)
	}
	for _, p := range got {
		for _, a := range p.Args {
			if _, ok := a.Expr.(probe.Reg); !ok {
				t.Errorf("%v", a)
			}
		}
	}
}

// perf's patterns, as regular expressions (arch/x86/util/perf_regs.c,
// arch/arm64/util/perf_regs.c): the oracle of the hand-written matchers.
var (
	perfX86Regexp   = regexp.MustCompile(`^([+\-]?)([0-9]*)(\(?)(%[a-z][a-z0-9]+)(\)?)$`)
	perfARM64Reg    = regexp.MustCompile(`^(x[1-2]?[0-9]|3[0-1])$`)
	perfARM64Stack  = regexp.MustCompile(`^\[sp(, )?([0-9]+)?\]$`)
	operandExamples = []string{"%rax", "-80(%rbx)", "(%rsi)", "+8%rax", "(%rax", "%r15d", "%abcdefg", "%a", "8(%r1)", "-(%rax)",
		"x0", "x29", "x30", "30", "31", "32", "[sp]", "[sp, 8]", "[sp,8]", "[sp, ]", "[sp8]", "[sp, -8]", "[x1, 8]", ""}
)

func perfByRegexp(arm bool, op string) string {
	if arm {
		if m := perfARM64Reg.FindStringSubmatch(op); m != nil {
			return "%" + m[1]
		}
		if m := perfARM64Stack.FindStringSubmatch(op); m != nil {
			if m[2] == "" {
				return "+0(%sp)"
			}
			return "+" + m[2] + "(%sp)"
		}
		return ""
	}
	m := perfX86Regexp.FindStringSubmatch(op)
	if strings.ContainsAny(op, ",$") || m == nil || len(m[4]) > 6 {
		return ""
	}
	return x86Op{sign: m[1], num: m[2], open: m[3] != "", close: m[5] != "", gasReg: m[4], kernel: renameX86(m[4])}.text()
}

// FuzzPerfPatterns: the hand-written matchers are perf's regular
// expressions.
func FuzzPerfPatterns(f *testing.F) {
	for _, op := range operandExamples {
		f.Add(op, false)
		f.Add(op, true)
	}
	f.Fuzz(func(t *testing.T, op string, arm bool) {
		a := arch.AMD64
		if arm {
			a = arch.ARM64
		}
		if got, want := perfOp(a, op), perfByRegexp(arm, op); got != want {
			t.Fatalf("%q (arm64 %v): %q, perf's pattern %q", op, arm, got, want)
		}
	})
}
