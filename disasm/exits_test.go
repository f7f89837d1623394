package disasm

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/internal/testenv"
)

// Cases of testdata/exits.txt sit at codeBase; a jump to thunkAddr is a
// jump to the return thunk.
const (
	codeBase  = 0x1000
	thunkAddr = 0x2000
)

// renderExits is the golden form of exits: "OFF:KIND" (OFF from base,
// decimal), ">0xTARGET" after a direct jump's kind, comma-separated; "-"
// for none.
func renderExits(exits []Exit, base uint64) string {
	if len(exits) == 0 {
		return "-"
	}
	var parts []string
	for _, e := range exits {
		s := fmt.Sprintf("%d:%s", e.Addr-base, e.Kind)
		if e.Target != 0 {
			s += fmt.Sprintf(">%#x", e.Target)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

// TestExitsCode reads testdata/exits.txt: arch, hex bytes, the exits (or
// "undecodable"), a note; tab-separated.
func TestExitsCode(t *testing.T) {
	f, err := os.ReadFile("testdata/exits.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, line := range strings.Split(string(f), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 4 {
			t.Fatalf("exits.txt:%d: want 4 tab-separated fields, have %d", i+1, len(fields))
		}
		isa := map[string]arch.Arch{"x86_64": arch.AMD64, "arm64": arch.ARM64}[fields[0]]
		code, err := hex.DecodeString(strings.ReplaceAll(fields[1], " ", ""))
		if isa == 0 || err != nil {
			t.Fatalf("exits.txt:%d: bad arch or bytes: %v", i+1, err)
		}
		n++
		fn := Function{Parts: []Code{{Addr: codeBase, Bytes: code}}, ReturnThunk: func(a uint64) bool { return a == thunkAddr }}
		exits, err := Exits(isa, fn)
		got := renderExits(exits, codeBase)
		var ue *UndecodableError
		if errors.As(err, &ue) {
			got = "undecodable"
		} else if err != nil {
			t.Fatalf("exits.txt:%d (%s): %v", i+1, fields[3], err)
		}
		if got != fields[2] {
			t.Errorf("exits.txt:%d (%s): exits %s, want %s", i+1, fields[3], got, fields[2])
		}
	}
	if n < 30 {
		t.Fatalf("only %d cases", n)
	}
}

// fixture is a vmlinux fixture's function symbols and text.
type fixture struct {
	name string
	arch arch.Arch
	file *elf.File
	syms []elf.Symbol // functions, by address
}

const fixtureDir = "../testdata/vmlinux-fixtures"

func openFixture(t *testing.T, name string) *fixture {
	t.Helper()
	f, err := elf.Open(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	isa, err := arch.ForMachine(f.Machine)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{name: name, arch: isa, file: f}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 0 {
			fx.syms = append(fx.syms, s)
		}
	}
	slices.SortFunc(fx.syms, func(a, b elf.Symbol) int { return int(a.Value>>1) - int(b.Value>>1) })
	return fx
}

func (fx *fixture) code(s elf.Symbol) Code {
	text := fx.file.Section(".text")
	b, err := text.Data()
	if err != nil || s.Value < text.Addr || s.Value+s.Size > text.Addr+text.Size {
		return Code{}
	}
	off := s.Value - text.Addr
	return Code{Addr: s.Value, Bytes: b[off : off+s.Size]}
}

func (fx *fixture) symbolAt(a uint64) (elf.Symbol, bool) {
	for _, s := range fx.syms {
		if s.Value <= a && a < s.Value+s.Size {
			return s, true
		}
	}
	return elf.Symbol{}, false
}

func (fx *fixture) lookup(name string) (elf.Symbol, bool) {
	for _, s := range fx.syms {
		if s.Name == name {
			return s, true
		}
	}
	return elf.Symbol{}, false
}

// function is fn's Function as gprobe's resolver builds it without DWARF:
// the symbol, and its FUNC.cold part when it jumps there.
func (fx *fixture) function(fn elf.Symbol) Function {
	return Function{
		Parts: []Code{fx.code(fn)},
		More: func(target uint64) (Code, bool) {
			s, ok := fx.symbolAt(target)
			if !ok || s.Name != fn.Name+".cold" {
				return Code{}, false
			}
			return fx.code(s), true
		},
	}
}

// place renders an address as SYM+OFF.
func (fx *fixture) place(a uint64) string {
	if s, ok := fx.symbolAt(a); ok {
		return fmt.Sprintf("%s+%d", s.Name, a-s.Value)
	}
	return fmt.Sprintf("%#x", a)
}

// render is the golden form of a fixture function's exits: "PLACE:KIND"
// and ">TARGET" for a direct jump, space-separated; "-" for none.
func (fx *fixture) render(exits []Exit) string {
	if len(exits) == 0 {
		return "-"
	}
	var parts []string
	for _, e := range exits {
		s := fx.place(e.Addr) + ":" + e.Kind.String()
		if e.Target != 0 {
			s += ">" + strings.TrimSuffix(fx.place(e.Target), "+0")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// TestExitsFixtures reads testdata/exits_fixtures.txt: fixture, function,
// its exits (as render writes them), a note; -update rewrites the exits.
func TestExitsFixtures(t *testing.T) {
	const path = "testdata/exits_fixtures.txt"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fixtures := map[string]*fixture{}
	var out bytes.Buffer
	arches := map[arch.Arch]int{}
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		fields := strings.Split(line, "\t")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			continue
		}
		if len(fields) != 4 {
			t.Fatalf("%s:%d: want 4 tab-separated fields, have %d", path, i+1, len(fields))
		}
		fx := fixtures[fields[0]]
		if fx == nil {
			fx = openFixture(t, fields[0])
			fixtures[fields[0]] = fx
		}
		fn, ok := fx.lookup(fields[1])
		if !ok {
			t.Fatalf("%s:%d: no function %s in %s", path, i+1, fields[1], fields[0])
		}
		exits, err := Exits(fx.arch, fx.function(fn))
		if err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		got := fx.render(exits)
		arches[fx.arch]++
		if got != fields[2] && !*testenv.Update {
			t.Errorf("%s:%d (%s %s, %s):\n got  %s\n want %s", path, i+1, fields[0], fields[1], fields[3], got, fields[2])
		}
		fields[2] = got
		out.WriteString(strings.Join(fields, "\t") + "\n")
	}
	if arches[arch.AMD64] < 10 || arches[arch.ARM64] < 10 {
		t.Errorf("too few cases: %v", arches)
	}
	if *testenv.Update {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// objdumpInsn is one instruction of objdump -d.
type objdumpInsn struct {
	addr     uint64
	mnemonic string
	operands string
}

var objdumpLine = regexp.MustCompile(`^\s*([0-9a-f]+):\t(?:[0-9a-f]{2} |[0-9a-f]{8} )+\s*\t(\S+)\s*(.*)$`)

func objdump(t *testing.T, tool, path string) []objdumpInsn {
	t.Helper()
	out, err := exec.Command(tool, "-d", path).Output()
	if err != nil {
		t.Fatalf("%s -d %s: %v", tool, path, err)
	}
	var insns []objdumpInsn
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := objdumpLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		a, _ := strconv.ParseUint(m[1], 16, 64)
		in := objdumpInsn{addr: a, mnemonic: m[2], operands: m[3]}
		for objdumpPrefixes[in.mnemonic] { // "notrack jmp *%rax", "repz ret"
			in.mnemonic, in.operands, _ = strings.Cut(in.operands, " ")
			in.operands = strings.TrimSpace(in.operands)
		}
		insns = append(insns, in)
	}
	return insns
}

var objdumpPrefixes = map[string]bool{"notrack": true, "bnd": true, "repz": true, "rep": true, "ds": true, "cs": true}

var objdumpTarget = regexp.MustCompile(`^([0-9a-f]+) <`)

// TestExitsAgreeWithObjdump decodes every function of every fixture and
// requires binutils' objdump to see the same exits: every ret, and every
// branch leaving the function's parts (symbol and .cold part).
func TestExitsAgreeWithObjdump(t *testing.T) {
	tools := map[arch.Arch]string{arch.AMD64: "objdump", arch.ARM64: "aarch64-linux-gnu-objdump"}
	names, _ := filepath.Glob(filepath.Join(fixtureDir, "*.elf"))
	if len(names) < 10 {
		t.Fatalf("fixtures: %v", names)
	}
	for _, path := range names {
		t.Run(filepath.Base(path), func(t *testing.T) {
			fx := openFixture(t, filepath.Base(path))
			insns := objdump(t, testenv.Tool(t, tools[fx.arch]), path)
			checked := 0
			for _, fn := range fx.syms {
				if strings.HasSuffix(fn.Name, ".cold") {
					continue
				}
				f := fx.function(fn)
				exits, err := Exits(fx.arch, f)
				if err != nil {
					t.Errorf("%s: %v", fn.Name, err)
					continue
				}
				// A cold part is reached only from its function, so Exits
				// decodes it; objdump's view of it is compared too.
				parts := f.Parts
				if cold, ok := fx.lookup(fn.Name + ".cold"); ok {
					parts = append(parts, fx.code(cold))
				}
				want := objdumpExits(fx.arch, insns, parts)
				if got := fx.render(exits); got != fx.render(want) {
					t.Errorf("%s:\n gprobe  %s\n objdump %s", fn.Name, got, fx.render(want))
				}
				checked++
			}
			if checked < 50 {
				t.Errorf("only %d functions", checked)
			}
		})
	}
}

// objdumpExits classifies objdump's instructions in parts by mnemonic.
func objdumpExits(isa arch.Arch, insns []objdumpInsn, parts []Code) []Exit {
	inside := func(a uint64) bool {
		return slices.ContainsFunc(parts, func(c Code) bool { return c.contains(a) })
	}
	var out []Exit
	for _, in := range insns {
		if !inside(in.addr) {
			continue
		}
		kind := ExitKind(0)
		var target uint64
		m := in.mnemonic
		direct := objdumpTarget.FindStringSubmatch(in.operands)
		if direct != nil {
			target, _ = strconv.ParseUint(direct[1], 16, 64)
		}
		switch isa {
		case arch.AMD64:
			switch {
			case m == "ret" || m == "retq":
				kind = Return
			case (m == "jmp" || m == "jmpq") && strings.HasPrefix(in.operands, "*"):
				kind = IndirectJump
			case m == "jmp" || m == "jmpq":
				kind = TailCall
			case m != "jmp" && strings.HasPrefix(m, "j") || strings.HasPrefix(m, "loop"):
				kind = CondTailCall
			}
		case arch.ARM64:
			switch {
			case m == "ret" || m == "retaa" || m == "retab":
				kind = Return
			case m == "br" || strings.HasPrefix(m, "bra"):
				kind = IndirectJump
			case m == "b":
				kind = TailCall
			case strings.HasPrefix(m, "b.") || m == "cbz" || m == "cbnz" || m == "tbz" || m == "tbnz":
				kind = CondTailCall
			}
		}
		if kind == 0 || (kind == TailCall || kind == CondTailCall) && (direct == nil || inside(target)) {
			continue
		}
		out = append(out, Exit{Addr: in.addr, Kind: kind, Target: target})
	}
	return out
}

// FuzzExits: no panic on any bytes, and every exit lies in the code, in
// order, on an instruction boundary.
func FuzzExits(f *testing.F) {
	f.Add([]byte{0xc3}, true)
	f.Add([]byte{0xe9, 0xfb, 0x0f, 0x00, 0x00, 0x75, 0x10}, true)
	f.Add([]byte{0xc0, 0x03, 0x5f, 0xd6, 0xff, 0x0b, 0x5f, 0xd6, 0x00, 0x02, 0x1f, 0xd6}, false)
	f.Fuzz(func(t *testing.T, code []byte, x86 bool) {
		isa := arch.ARM64
		if x86 {
			isa = arch.AMD64
		}
		exits, err := Exits(isa, Function{Parts: []Code{{Addr: codeBase, Bytes: code}}, ReturnThunk: func(a uint64) bool { return a == thunkAddr }})
		if err != nil {
			return
		}
		m, _ := Boundaries(isa, code, nil)
		for i, e := range exits {
			if e.Addr < codeBase || e.Addr+uint64(e.Len) > codeBase+uint64(len(code)) || i > 0 && exits[i-1].Addr >= e.Addr {
				t.Fatalf("exit %+v out of code or order", e)
			}
			if ok, _ := m.IsBoundary(int(e.Addr - codeBase)); !ok {
				t.Fatalf("exit %+v is not an instruction start", e)
			}
		}
	})
}

// Exits names each instruction as Insn does; arm64asm does not know the
// pointer-authenticating returns, which are named here.
func TestExitText(t *testing.T) {
	for _, c := range []struct {
		arch arch.Arch
		code []byte
		want string
	}{
		{arch.AMD64, []byte{0xc2, 0x08, 0x00}, "retq $0x8"},
		{arch.AMD64, []byte{0xe9, 0x00, 0x01, 0x00, 0x00}, "jmpq .+0x100"},
		{arch.ARM64, []byte{0xff, 0x0b, 0x5f, 0xd6}, "retaa"},
		{arch.ARM64, []byte{0xff, 0x0f, 0x5f, 0xd6}, "retab"},
		{arch.ARM64, []byte{0x00, 0x02, 0x1f, 0xd6}, "br x16"},
	} {
		exits, err := Exits(c.arch, Function{Parts: []Code{{Addr: codeBase, Bytes: c.code}}})
		if err != nil || len(exits) != 1 || exits[0].Text != c.want {
			t.Errorf("% x: %+v, %v; want %q", c.code, exits, err, c.want)
		}
	}
}
