package disasm

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/disasm/arch"
)

// goldenCase is one line of testdata/boundaries.txt.
type goldenCase struct {
	line     int
	arch     arch.Arch
	code     []byte
	known    []int
	wantErr  bool
	want     []int
	wantUndo []Region
	note     string
}

func parseInts(s string) ([]int, error) {
	if s == "-" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func parseRegions(s string) ([]Region, error) {
	if s == "-" {
		return nil, nil
	}
	var out []Region
	for _, f := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(f), "-")
		if !ok {
			return nil, fmt.Errorf("bad region %q", f)
		}
		start, err1 := strconv.Atoi(a)
		end, err2 := strconv.Atoi(b)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("bad region %q", f)
		}
		out = append(out, Region{start, end})
	}
	return out, nil
}

func readGolden(t *testing.T, path string) []goldenCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []goldenCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 6 {
			t.Fatalf("%s:%d: want 6 tab-separated fields, have %d", path, n, len(fields))
		}
		c := goldenCase{line: n, note: fields[5]}
		switch fields[0] {
		case "x86_64":
			c.arch = arch.AMD64
		case "arm64":
			c.arch = arch.ARM64
		default:
			t.Fatalf("%s:%d: unknown arch %q", path, n, fields[0])
		}
		if fields[1] != "-" {
			c.code, err = hex.DecodeString(strings.ReplaceAll(fields[1], " ", ""))
			if err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
		}
		if c.known, err = parseInts(fields[2]); err != nil {
			t.Fatalf("%s:%d: known: %v", path, n, err)
		}
		if fields[3] == "error" {
			c.wantErr = true
		} else if c.want, err = parseInts(fields[3]); err != nil {
			t.Fatalf("%s:%d: boundaries: %v", path, n, err)
		}
		if c.wantUndo, err = parseRegions(fields[4]); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// checkGolden returns a description of every way m (or err) differs from c.
func checkGolden(c goldenCase, m *Map, err error) []string {
	var bad []string
	if c.wantErr {
		if err == nil {
			bad = append(bad, "want error, got none")
		}
		return bad
	}
	if err != nil {
		return []string{fmt.Sprintf("unexpected error: %v", err)}
	}
	if got := m.Boundaries(); !slices.Equal(got, c.want) {
		bad = append(bad, fmt.Sprintf("boundaries = %v, want %v", got, c.want))
	}
	if got := m.Undecodable(); !slices.Equal(got, c.wantUndo) {
		bad = append(bad, fmt.Sprintf("undecodable = %v, want %v", got, c.wantUndo))
	}
	return bad
}

func TestGolden(t *testing.T) {
	cases := readGolden(t, "testdata/boundaries.txt")
	if len(cases) < 40 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for _, c := range cases {
		m, err := Boundaries(c.arch, c.code, c.known)
		for _, msg := range checkGolden(c, m, err) {
			t.Errorf("line %d (%s): %s", c.line, c.note, msg)
		}
		if err == nil {
			if msg := checkInvariants(m, c.known); msg != "" {
				t.Errorf("line %d (%s): %s", c.line, c.note, msg)
			}
		}
	}
}

// TestGoldenDetectsMistakes makes sure the golden comparison is not vacuous:
// perturbing any expectation must be reported.
func TestGoldenDetectsMistakes(t *testing.T) {
	for _, c := range readGolden(t, "testdata/boundaries.txt") {
		m, err := Boundaries(c.arch, c.code, c.known)
		mutants := []goldenCase{c, c, c}
		mutants[0].wantErr = !c.wantErr
		if c.wantErr {
			mutants = mutants[:1]
		} else {
			mutants[1].want = append(slices.Clone(c.want), len(c.code)+1)
			mutants[2].wantUndo = append(slices.Clone(c.wantUndo), Region{len(c.code), len(c.code) + 1})
		}
		for i, mc := range mutants {
			if len(checkGolden(mc, m, err)) == 0 {
				t.Errorf("line %d: mutant %d of the expectation was not detected", c.line, i)
			}
		}
	}
}

// checkInvariants verifies the contract of a Map against the known offsets it
// was built from. It returns "" if all holds.
func checkInvariants(m *Map, known []int) string {
	n := m.Len()
	bs := m.Boundaries()
	undo := m.Undecodable()
	isStart := make([]bool, n)
	for i, b := range bs {
		if b < 0 || b >= n {
			return fmt.Sprintf("boundary %d outside [0,%d)", b, n)
		}
		if i > 0 && bs[i-1] >= b {
			return fmt.Sprintf("boundaries not sorted and unique: %v", bs)
		}
		isStart[b] = true
	}
	inUndo := make([]bool, n)
	regionBytes := 0
	for i, r := range undo {
		if r.Start < 0 || r.End > n || r.Start >= r.End {
			return fmt.Sprintf("bad region %v for length %d", r, n)
		}
		if i > 0 && undo[i-1].End > r.Start {
			return fmt.Sprintf("regions overlap or unsorted: %v", undo)
		}
		if !isStart[r.Start] {
			return fmt.Sprintf("region %v does not start at a boundary", r)
		}
		for off := r.Start; off < r.End; off++ {
			inUndo[off] = true
		}
		regionBytes += r.End - r.Start
	}
	inRange := func(off int) bool { return off >= 0 && off < n }
	if n > 0 && !isStart[0] {
		return "offset 0 is not a boundary"
	}
	for _, k := range known {
		if inRange(k) && !inUndo[k] && !isStart[k] {
			return fmt.Sprintf("known offset %d is neither a boundary nor undecodable", k)
		}
	}
	covered := 0
	for off := -2; off < n+2; off++ {
		want := inRange(off) && isStart[off]
		region := inRange(off) && inUndo[off]
		isB, err := m.IsBoundary(off)
		if isB != want {
			return fmt.Sprintf("IsBoundary(%d) = %v, boundaries %v", off, isB, bs)
		}
		if err != nil && (!errors.Is(err, ErrUndecodable) || !region || isB) {
			return fmt.Sprintf("IsBoundary(%d): unexpected error %v", off, err)
		}
		if err == nil && region && !isB {
			return fmt.Sprintf("IsBoundary(%d): no error inside an undecodable region", off)
		}
		// Check and Insn render text, which is slow enough (arm64asm.Decode
		// searches linearly) to starve the fuzzer, so they are sampled;
		// insn is Insn without the text.
		start, length, ok := m.insn(off)
		if ok {
			if off < start || off >= start+length || !isStart[start] || region {
				return fmt.Sprintf("insn(%d) = %d,%d", off, start, length)
			}
			covered++
		} else if inRange(off) && !region {
			return fmt.Sprintf("insn(%d) not found outside undecodable regions", off)
		}
		if off >= 64 && off < n-16 && off%8 != 0 {
			continue
		}
		cerr := m.Check(off)
		switch {
		case isB && cerr != nil:
			return fmt.Sprintf("Check(%d) = %v for a boundary", off, cerr)
		case !isB && err != nil && !errors.Is(cerr, ErrUndecodable):
			return fmt.Sprintf("Check(%d) = %v, want ErrUndecodable", off, cerr)
		case !isB && err == nil && !errors.Is(cerr, ErrNotBoundary):
			return fmt.Sprintf("Check(%d) = %v, want ErrNotBoundary", off, cerr)
		}
		if s, l, _, ok2 := m.Insn(off); ok2 != ok || s != start || l != length {
			return fmt.Sprintf("Insn(%d) = %d,%d,%v; insn = %d,%d,%v", off, s, l, ok2, start, length, ok)
		}
	}
	// Decoded instructions tile the code outside the undecodable regions.
	if covered+regionBytes != n {
		return fmt.Sprintf("instructions cover %d bytes and regions %d of %d", covered, regionBytes, n)
	}
	return ""
}

func TestCheckMessage(t *testing.T) {
	code := []byte{0xe8, 0, 0, 0, 0, 0x55}
	m, err := Boundaries(arch.AMD64, code, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = m.Check(3)
	if !errors.Is(err, ErrNotBoundary) {
		t.Fatalf("Check(3) = %v, want ErrNotBoundary", err)
	}
	if errors.Is(err, ErrUndecodable) {
		t.Errorf("Check(3) = %v also wraps ErrUndecodable", err)
	}
	msg := err.Error()
	for _, want := range []string{"offset 3", "5-byte instruction", "at offset 0", "call"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Check(3) = %q, want it to mention %q", msg, want)
		}
	}
	t.Log(msg)
	for _, off := range []int{0, 5} {
		if err := m.Check(off); err != nil {
			t.Errorf("Check(%d) = %v", off, err)
		}
	}
	for _, off := range []int{-1, 6, 100} {
		if err := m.Check(off); !errors.Is(err, ErrNotBoundary) {
			t.Errorf("Check(%d) = %v, want ErrNotBoundary", off, err)
		}
	}
	start, length, text, ok := m.Insn(4)
	if !ok || start != 0 || length != 5 || !strings.HasPrefix(text, "call") {
		t.Errorf("Insn(4) = %d, %d, %q, %v", start, length, text, ok)
	}
}

func TestCheckUndecodable(t *testing.T) {
	// ENCLS then an unassigned 0f 01 form, resynchronised at known offset 6.
	m, err := Boundaries(arch.AMD64, []byte{0x0f, 0x01, 0xcf, 0x0f, 0x01, 0xcc, 0xc3}, []int{6})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, text, _ := m.Insn(1); text != "encls" {
		t.Errorf("Insn(1) text = %q, want encls", text)
	}
	if err := m.Check(3); err != nil {
		t.Errorf("Check(3) = %v: the failure point is a boundary", err)
	}
	err = m.Check(4)
	if !errors.Is(err, ErrUndecodable) || errors.Is(err, ErrNotBoundary) {
		t.Errorf("Check(4) = %v, want ErrUndecodable only", err)
	}
	if ok, err := m.IsBoundary(4); ok || !errors.Is(err, ErrUndecodable) {
		t.Errorf("IsBoundary(4) = %v, %v", ok, err)
	}
	if _, _, _, ok := m.Insn(3); ok {
		t.Error("Insn(3) found an instruction of unknown length")
	}
	if err := m.Check(6); err != nil {
		t.Errorf("Check(6) = %v", err)
	}
}

func TestInsnText(t *testing.T) {
	for _, tc := range []struct {
		arch arch.Arch
		hex  string
		want string
	}{
		{arch.AMD64, "f30f1efa", "endbr64"},
		{arch.AMD64, "660f01ca", "data16 clac"},
		{arch.AMD64, "f30f01e8", "setssbsy"},
		{arch.AMD64, "f3480f1ec8", "rdsspq"},
		{arch.AMD64, "c5f877", "vzeroupper"},
		{arch.AMD64, "0f2018", "mov %cr3,%rax"},
		{arch.AMD64, "cc", "int3"},
		{arch.ARM64, "c0035fd6", "ret"},
		{arch.ARM64, "5f2403d5", ""}, // whatever arm64asm calls bti c, if anything
	} {
		code, _ := hex.DecodeString(tc.hex)
		m, err := Boundaries(tc.arch, code, nil)
		if err != nil {
			t.Fatal(err)
		}
		start, length, text, ok := m.Insn(0)
		if !ok || start != 0 || length != len(code) {
			t.Errorf("%v %s: Insn(0) = %d, %d, %q, %v", tc.arch, tc.hex, start, length, text, ok)
			continue
		}
		if tc.want != "" && text != tc.want {
			t.Errorf("%v %s: text %q, want %q", tc.arch, tc.hex, text, tc.want)
		}
		if text == "" {
			t.Errorf("%v %s: empty text", tc.arch, tc.hex)
		}
	}
}

func TestUnsupportedArch(t *testing.T) {
	for _, a := range []arch.Arch{0, 3, -1} {
		if _, err := Boundaries(a, []byte{0x90}, nil); !errors.Is(err, arch.ErrUnsupported) {
			t.Errorf("Boundaries(%v) error = %v", a, err)
		}
	}
}

func TestImmutable(t *testing.T) {
	code := []byte{0xe8, 0, 0, 0, 0, 0xc3}
	m, err := Boundaries(arch.AMD64, code, nil)
	if err != nil {
		t.Fatal(err)
	}
	code[0] = 0x90
	m.Boundaries()[0] = 42
	if got := m.Boundaries(); !slices.Equal(got, []int{0, 5}) {
		t.Errorf("boundaries changed to %v", got)
	}
	if _, _, text, _ := m.Insn(0); !strings.HasPrefix(text, "call") {
		t.Errorf("text changed to %q", text)
	}
	var zero Map
	if ok, err := zero.IsBoundary(0); ok || err != nil {
		t.Errorf("zero Map: IsBoundary(0) = %v, %v", ok, err)
	}
}

func FuzzBoundaries(f *testing.F) {
	for _, s := range [][]byte{
		{0xf3, 0x0f, 0x1e, 0xfa, 0xe8, 0, 0, 0, 0, 0x55, 0x48, 0x89, 0xe5},
		{0x0f, 0x01, 0xca, 0x66, 0x0f, 0x01, 0xcb, 0xc5, 0xf8, 0x77, 0xc5, 0xfe, 0x6f, 0x06},
		{0x66, 0x0f, 0x38, 0x80, 0x00, 0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x06, 0xc3},
		{0x5f, 0x24, 0x03, 0xd5, 0x3f, 0x23, 0x03, 0xd5, 0xc0},
	} {
		f.Add(byte(1), s, []byte{4, 9})
		f.Add(byte(2), s, []byte{8})
	}
	f.Fuzz(func(t *testing.T, isa byte, code []byte, knownSeed []byte) {
		a := arch.Arch(isa % 3) // 0 is invalid, 1 AMD64, 2 ARM64
		// Small inputs keep the fuzzer's minimiser, which is quadratic in
		// input length, from starving it. Nothing in Boundaries depends on
		// size.
		if len(code) > 256 {
			code = code[:256]
		}
		if len(knownSeed) > 64 {
			knownSeed = knownSeed[:64]
		}
		var known []int
		for i := 0; i+1 < len(knownSeed); i += 2 {
			known = append(known, int(int16(uint16(knownSeed[i])|uint16(knownSeed[i+1])<<8)))
		}
		m, err := Boundaries(a, code, known)
		if err != nil {
			if a == arch.AMD64 {
				t.Fatalf("arch.AMD64: unexpected error %v", err)
			}
			if a == arch.ARM64 && !errors.Is(err, ErrNotBoundary) {
				t.Fatalf("arch.ARM64: unexpected error %v", err)
			}
			return
		}
		if msg := checkInvariants(m, known); msg != "" {
			t.Fatalf("%v % x known %v: %s", a, code, known, msg)
		}
	})
}
