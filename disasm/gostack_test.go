package disasm

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/internal/testenv"
)

// goStackGolden is testdata/gostack.txt: the start of real Go functions
// (testdata/goprogs/values built for x86-64 and arm64 by the Go release
// named in the file's header) and what FindGoStackCheck finds in them.
const goStackGolden = "testdata/gostack.txt"

// goStackBase is the address the golden cases are decoded at.
const goStackBase = 0x400000

// renderGoStack is the golden form of FindGoStackCheck's answer: "none",
// or "end=N more=+M guard=G" with M the morestack block's offset from the
// entry, and " tls" when g is loaded from thread-local storage.
func renderGoStack(sc GoStackCheck, ok bool, base uint64) string {
	if !ok {
		return "none"
	}
	s := fmt.Sprintf("end=%d more=+%d guard=%d", sc.End, sc.Morestack-base, sc.Guard)
	if sc.TLS {
		s += " tls"
	}
	return s
}

// TestGoStackCheckGolden decodes the golden cases: isa, function, hex
// bytes, answer; tab-separated.
func TestGoStackCheckGolden(t *testing.T) {
	data, err := os.ReadFile(goStackGolden)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	seen := map[string]bool{}
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("%s:%d: want 4 tab-separated fields, have %d", goStackGolden, i+1, len(f))
		}
		isa, known := map[string]arch.Arch{"x86_64": arch.AMD64, "arm64": arch.ARM64}[f[0]]
		if !known {
			t.Fatalf("%s:%d: unknown isa %q", goStackGolden, i+1, f[0])
		}
		code, err := hex.DecodeString(f[2])
		if err != nil {
			t.Fatalf("%s:%d: %v", goStackGolden, i+1, err)
		}
		sc, ok := FindGoStackCheck(isa, code, goStackBase)
		if got := renderGoStack(sc, ok, goStackBase); got != f[3] {
			t.Errorf("%s %s: got %s, want %s", f[0], f[1], got, f[3])
		}
		seen[f[0]+" "+strings.Fields(f[3])[0]] = ok
		n++
	}
	if n < 10 {
		t.Fatalf("only %d golden cases", n)
	}
	// Every form is covered on both architectures.
	for _, want := range []string{"x86_64 none", "arm64 none"} {
		if _, ok := seen[want]; !ok {
			t.Errorf("no golden case %q", want)
		}
	}
}

// TestGoStackCheckRefusesNearMisses changes one thing at a time in a real
// check: each must stop the decoder from finding one.
func TestGoStackCheckRefusesNearMisses(t *testing.T) {
	x86 := func(s string) []byte { b, _ := hex.DecodeString(s); return b }
	good := "493b66100f86c4000000" // cmp 0x10(%r14),%rsp; jbe
	if _, ok := FindGoStackCheck(arch.AMD64, x86(good), 0); !ok {
		t.Fatal("the real check is not found")
	}
	for name, code := range map[string]string{
		"another register for g": "493b67100f86c4000000", // cmp 0x10(%r15),%rsp
		"another guard offset":   "493b66200f86c4000000", // 0x20(%r14)
		"another condition":      "493b66100f87c4000000", // ja
		"no branch":              "493b6610",
		"empty":                  "",
		"lea from another base":  "4c8da53800000049" + "3b6610",
		"arm64 bytes":            "f9400b90eb3063ff54000469",
	} {
		if sc, ok := FindGoStackCheck(arch.AMD64, x86(code), 0); ok {
			t.Errorf("x86-64 %s: found %+v", name, sc)
		}
	}
	a64 := func(words ...uint32) []byte {
		b := make([]byte, 4*len(words))
		for i, w := range words {
			binary.LittleEndian.PutUint32(b[4*i:], w)
		}
		return b
	}
	if _, ok := FindGoStackCheck(arch.ARM64, a64(0xf9400b90, 0xeb3063ff, 0x54000469), 0); !ok {
		t.Fatal("the real arm64 check is not found")
	}
	for name, code := range map[string][]byte{
		"g in x27":             a64(0xf9400b70, 0xeb3063ff, 0x54000469),
		"guard at 32":          a64(0xf9401390, 0xeb3063ff, 0x54000469),
		"b.hi":                 a64(0xf9400b90, 0xeb3063ff, 0x54000468),
		"cmp x17 without sub":  a64(0xf9400b90, 0xeb10023f, 0x54000469),
		"subs without b.lo":    a64(0xf9400b90, 0xf11743f1, 0xeb10023f, 0x54000469),
		"mov x27 then sub imm": a64(0xf9400b90, 0xd2831a1b, 0xd11743f1, 0xeb10023f, 0x54000469),
		"truncated":            a64(0xf9400b90, 0xeb3063ff),
		"unaligned tail":       append(a64(0xf9400b90, 0xeb3063ff), 0x69, 0x04),
	} {
		if sc, ok := FindGoStackCheck(arch.ARM64, code, 0); ok {
			t.Errorf("arm64 %s: found %+v", name, sc)
		}
	}
}

// morestackNames are the functions a stack check's slow path calls.
var morestackNames = map[string]bool{"runtime.morestack": true, "runtime.morestack_noctxt": true, "runtime.morestackc": true}

// TestGoStackCheckRealBinaries builds testdata/goprogs/values for x86-64
// and arm64 and checks every function of both binaries (the runtime's
// Go and assembly functions, the program's) against an oracle that does
// not look at the prologue: a function has a stack check if and only if
// it calls runtime.morestack (or _noctxt, or morestackc); the check's
// branch goes to the block that makes that call, which then jumps back to
// the entry. With -update it rewrites testdata/gostack.txt from chosen
// functions of these builds.
func TestGoStackCheckRealBinaries(t *testing.T) {
	dir := testenv.GoProgram(t, "values")
	var golden []string
	for _, goarch := range []string{"amd64", "arm64"} {
		bin := testenv.BuildGo(t, dir, goarch)
		golden = append(golden, checkGoBinary(t, bin)...)
	}
	if *testenv.Update {
		head := "# FindGoStackCheck on real Go functions: isa, function, its first bytes (hex), the answer\n" +
			"# (\"end=N more=+M guard=G [tls]\" or \"none\"). Written by go test ./disasm -run TestGoStackCheckRealBinaries -update\n" +
			"# from testdata/goprogs/values built by " + goVersion(t) + ".\n"
		if err := os.WriteFile(goStackGolden, []byte(head+strings.Join(golden, "")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func goVersion(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// goldenFuncs are the functions whose starts go into the golden file: a
// small, medium and huge frame, a leaf without check, a method, a closure,
// a generic instance, ABI0 assembly with and without a check.
var goldenFuncs = map[string]bool{
	"main.small": true, "main.medium": true, "main.huge": true, "main.leaf": true,
	"main.(*T).Method": true, "main.main.func1": true, "main.generic[go.shape.int]": true,
	"runtime.rt0_go.abi0": true, "runtime.morestack": true, "runtime.mstart.abi0": true,
	"runtime.systemstack_switch": true, "runtime.asmcgocall.abi0": true, "runtime.gcWriteBarrier1": true,
	"syscall.Syscall6": true, "internal/runtime/syscall/linux.Syscall6": true,
	"debugCall128": true, "internal/bytealg.countGeneric.abi0": true,
}

// checkGoBinary checks every sized function of bin and returns the golden
// lines of goldenFuncs.
func checkGoBinary(t *testing.T, bin string) []string {
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	isa, err := arch.ForMachine(f.Machine)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	text := f.Section(".text")
	data, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	code := func(lo, hi uint64) []byte {
		if lo < text.Addr || hi > text.Addr+uint64(len(data)) || hi < lo {
			return nil
		}
		return data[lo-text.Addr : hi-text.Addr]
	}
	morestack := map[uint64]string{}
	for _, s := range syms {
		// runtime.morestack.abi0 when an ABIInternal wrapper exists too
		if morestackNames[strings.TrimSuffix(s.Name, ".abi0")] {
			morestack[s.Value] = s.Name
		}
	}
	if len(morestack) < 3 {
		t.Fatalf("%s: morestack functions %v", bin, morestack)
	}
	sort.Slice(syms, func(i, j int) bool { return syms[i].Name < syms[j].Name })
	var golden []string
	checked, withCheck, tls := 0, 0, 0
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 || s.Section == elf.SHN_UNDEF {
			continue
		}
		b := code(s.Value, s.Value+s.Size)
		if b == nil {
			continue
		}
		checked++
		sc, ok := FindGoStackCheck(isa, b, s.Value)
		calls := morestackCalls(t, isa, b, s.Value, morestack)
		switch {
		case ok && len(calls) == 0:
			t.Errorf("%s %s: found a check %+v, but it calls no morestack", isa, s.Name, sc)
		case !ok && len(calls) > 0:
			t.Errorf("%s %s: calls morestack at %#x, but no check found (starts % x)", isa, s.Name, calls, b[:min(24, len(b))])
		case ok:
			withCheck++
			if sc.TLS {
				tls++
			}
			if err := checkMorestackBlock(isa, b, s.Value, sc, calls); err != nil {
				t.Errorf("%s %s: %v", isa, s.Name, err)
			}
		}
		if goldenFuncs[s.Name] {
			n := min(len(b), 48)
			if ok {
				n = min(len(b), sc.End+8)
			}
			golden = append(golden, fmt.Sprintf("%s\t%s\t%s\t%s\n", isa, s.Name, hex.EncodeToString(b[:n]), renderGoStack(sc, ok, s.Value)))
		}
	}
	t.Logf("%s %s: %d functions, %d with a stack check (%d loading g from TLS)", isa, filepath.Base(bin), checked, withCheck, tls)
	if checked < 1000 || withCheck < checked/3 {
		t.Errorf("%s: only %d of %d functions have a check", bin, withCheck, checked)
	}
	if isa == arch.AMD64 && tls == 0 {
		t.Errorf("%s: no ABI0 check (g from TLS) found", bin)
	}
	return golden
}

// morestackCalls lists the direct calls in the function's code to a
// morestack function, decoding it linearly from its entry.
func morestackCalls(t *testing.T, isa arch.Arch, b []byte, addr uint64, morestack map[uint64]string) []uint64 {
	m, err := Boundaries(isa, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for i, start := range m.starts {
		n := m.lens[i]
		if n == 0 {
			continue
		}
		if target, ok := directCall(isa, b[start:start+n], addr+uint64(start)); ok && morestack[target] != "" {
			out = append(out, addr+uint64(start))
		}
	}
	return out
}

// directCall decodes a call to an address: call rel32 on x86-64, bl on
// arm64.
func directCall(isa arch.Arch, insn []byte, addr uint64) (uint64, bool) {
	switch isa {
	case arch.AMD64:
		if len(insn) == 5 && insn[0] == 0xe8 {
			return addr + 5 + uint64(int64(int32(binary.LittleEndian.Uint32(insn[1:])))), true
		}
	case arch.ARM64:
		if len(insn) == 4 {
			w := binary.LittleEndian.Uint32(insn)
			if w&0xfc000000 == 0x94000000 {
				return addr + uint64(signExtend(w&0x03ffffff, 26)<<2), true
			}
		}
	}
	return 0, false
}

// checkMorestackBlock checks that the check's branch target starts the
// block that calls morestack (register spills before the call, no branch)
// and that the block then jumps back to the entry.
func checkMorestackBlock(isa arch.Arch, b []byte, addr uint64, sc GoStackCheck, calls []uint64) error {
	if sc.Morestack <= addr+uint64(sc.End) || sc.Morestack >= addr+uint64(len(b)) {
		return fmt.Errorf("morestack block %#x outside the function's body", sc.Morestack)
	}
	call := uint64(0)
	for _, c := range calls {
		if c >= sc.Morestack {
			call = c
			break
		}
	}
	if call == 0 {
		return fmt.Errorf("no morestack call after the block's start %#x (calls %#x)", sc.Morestack, calls)
	}
	m, err := Boundaries(isa, b, []int{int(sc.Morestack - addr)})
	if err != nil {
		return err
	}
	backToEntry := false
	for i, start := range m.starts {
		a := addr + uint64(start)
		n := m.lens[i]
		if a < sc.Morestack || n == 0 {
			continue
		}
		f, isFlow := classify(isa, b[start:start+n], a)
		if a < call && isFlow {
			return fmt.Errorf("a branch at %#x between the block's start %#x and the call %#x", a, sc.Morestack, call)
		}
		if a > call && isFlow {
			backToEntry = f.direct && !f.cond && f.target == addr
			break
		}
	}
	if !backToEntry {
		return fmt.Errorf("the morestack block at %#x does not jump back to the entry after its call", sc.Morestack)
	}
	return nil
}

// FuzzGoStackCheck: any bytes, either architecture, never a panic, and a
// check found ends inside the code.
func FuzzGoStackCheck(f *testing.F) {
	f.Add([]byte{0x49, 0x3b, 0x66, 0x10, 0x0f, 0x86, 0xc4, 0, 0, 0}, false)
	f.Add([]byte{0x90, 0x0b, 0x40, 0xf9, 0xff, 0x63, 0x30, 0xeb, 0x69, 0x04, 0x00, 0x54}, true)
	f.Fuzz(func(t *testing.T, code []byte, arm bool) {
		isa := arch.AMD64
		if arm {
			isa = arch.ARM64
		}
		if sc, ok := FindGoStackCheck(isa, code, 0x1000); ok && (sc.End <= 0 || sc.End > len(code)) {
			t.Fatalf("end %d outside %d bytes", sc.End, len(code))
		}
	})
}
