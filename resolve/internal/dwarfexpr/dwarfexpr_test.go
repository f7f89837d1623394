package dwarfexpr

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
)

type golden struct {
	line     int
	arch     arch.Arch
	expr     []byte
	fb       FrameBase
	fbText   string
	want     string
	note     string
	exprText string
}

func parseArch(s string) (arch.Arch, error) {
	switch s {
	case "x86_64":
		return arch.AMD64, nil
	case "arm64":
		return arch.ARM64, nil
	}
	return 0, fmt.Errorf("unknown arch %q", s)
}

func parseFrameBase(s string) (FrameBase, error) {
	if s == "none" {
		return FrameBase{}, nil
	}
	f := strings.Split(s, ":")
	if len(f) != 3 {
		return FrameBase{}, fmt.Errorf("bad frame base %q", s)
	}
	var fb FrameBase
	switch f[0] {
	case "reg":
		fb.Kind = FrameBaseReg
	case "cfa":
		fb.Kind = FrameBaseCFA
	default:
		return FrameBase{}, fmt.Errorf("bad frame base kind %q", s)
	}
	r, err := strconv.Atoi(f[1])
	if err != nil {
		return FrameBase{}, err
	}
	o, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return FrameBase{}, err
	}
	fb.Reg, fb.Offset = r, o
	return fb, nil
}

func loadGolden(t *testing.T) []golden {
	t.Helper()
	f, err := os.Open("testdata/exprs.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []golden
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Split(line, "\t")
		if len(fs) != 5 {
			t.Fatalf("exprs.txt:%d: want 5 tab-separated fields, got %d", n, len(fs))
		}
		isa, err := parseArch(fs[0])
		if err != nil {
			t.Fatalf("exprs.txt:%d: %v", n, err)
		}
		expr, err := hex.DecodeString(fs[1])
		if err != nil {
			t.Fatalf("exprs.txt:%d: %v", n, err)
		}
		fb, err := parseFrameBase(fs[2])
		if err != nil {
			t.Fatalf("exprs.txt:%d: %v", n, err)
		}
		cases = append(cases, golden{line: n, arch: isa, expr: expr, fb: fb, fbText: fs[2], want: fs[3], note: fs[4], exprText: fs[1]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// result renders a Translate outcome the way the golden file spells it.
func result(isa arch.Arch, expr []byte, fb FrameBase) string {
	loc, err := Translate(expr, isa, fb, 8)
	if err != nil {
		if loc != nil {
			return "BUG: both location and error"
		}
		return "error: " + err.Error()
	}
	if _, ok := loc.Fetch.(probe.Symbol); ok {
		loc.SetSymbol(fmt.Sprintf("0x%x", loc.Addr))
	}
	return probe.FetchArg{Expr: loc.Fetch}.String()
}

// checkGolden returns the mismatches of cases.
func checkGolden(cases []golden) []string {
	var bad []string
	for _, c := range cases {
		got := result(c.arch, c.expr, c.fb)
		if got != c.want {
			bad = append(bad, fmt.Sprintf("exprs.txt:%d: %v %s fb=%s (%s):\n\tgot  %s\n\twant %s",
				c.line, c.arch, c.exprText, c.fbText, c.note, got, c.want))
		}
	}
	return bad
}

func TestGolden(t *testing.T) {
	cases := loadGolden(t)
	if len(cases) < 40 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for _, m := range checkGolden(cases) {
		t.Error(m)
	}
	t.Logf("%d golden cases", len(cases))
}

// TestGoldenDetectsMismatch flips expectations and makes sure the checker
// notices: a golden file that cannot fail proves nothing.
func TestGoldenDetectsMismatch(t *testing.T) {
	cases := loadGolden(t)
	for _, i := range []int{0, len(cases) / 2, len(cases) - 1} {
		flipped := append([]golden(nil), cases...)
		c := flipped[i]
		if strings.HasPrefix(c.want, "error: ") {
			c.want = "%di"
		} else {
			c.want = c.want + "X"
		}
		flipped[i] = c
		if bad := checkGolden(flipped); len(bad) != 1 {
			t.Errorf("flipping case at line %d: %d mismatches reported, want 1", c.line, len(bad))
		}
	}
}

func TestErrorClasses(t *testing.T) {
	for _, tc := range []struct {
		hex  string
		fb   FrameBase
		want []error
		not  []error
	}{
		{"a30155", FrameBase{}, []error{ErrUnsupported}, []error{ErrOptimizedOut}},
		{"9170", FrameBase{}, []error{ErrUnsupported}, nil},
		{"", FrameBase{}, []error{ErrOptimizedOut}, []error{ErrMalformed}},
		{"75", FrameBase{}, []error{ErrMalformed, ErrOptimizedOut}, []error{ErrUnsupported}},
		{"9020", FrameBase{}, []error{ErrUnsupported, arch.ErrUnknownRegister}, nil},
	} {
		b, _ := hex.DecodeString(tc.hex)
		loc, err := Translate(b, arch.AMD64, tc.fb, 8)
		if loc != nil || err == nil {
			t.Errorf("%s: want error, got %v, %v", tc.hex, loc, err)
			continue
		}
		for _, w := range tc.want {
			if !errors.Is(err, w) {
				t.Errorf("%s: %v is not %v", tc.hex, err, w)
			}
		}
		for _, w := range tc.not {
			if errors.Is(err, w) {
				t.Errorf("%s: %v unexpectedly is %v", tc.hex, err, w)
			}
		}
	}
	var ue *UnsupportedError
	_, err := Translate([]byte{0xa3, 0x01, 0x55}, arch.AMD64, FrameBase{}, 8)
	if !errors.As(err, &ue) || ue.Op != 0xa3 || ue.Detail != "DW_OP a3 is not supported." {
		t.Errorf("entry_value detail: %#v", err)
	}
	if _, err := Translate([]byte{0x55}, arch.Arch(0), FrameBase{}, 8); !errors.Is(err, arch.ErrUnsupported) {
		t.Errorf("bad arch: %v", err)
	}
	if _, err := Translate([]byte{0x03, 1, 2, 3, 4}, arch.AMD64, FrameBase{}, 4); err != nil {
		t.Errorf("4-byte DW_OP_addr: %v", err)
	}
	if _, err := Translate([]byte{0x03, 1, 2}, arch.AMD64, FrameBase{}, 2); !errors.Is(err, ErrMalformed) {
		t.Errorf("2-byte address size: %v", err)
	}
}

func TestLocationFields(t *testing.T) {
	loc, err := Translate([]byte{0x91, 0x58}, arch.AMD64, FrameBase{Kind: FrameBaseCFA, Reg: 7, Offset: 8}, 8)
	if err != nil {
		t.Fatal(err)
	}
	want := probe.Mem{Off: -32, Inner: probe.Reg("sp")}
	if loc.Fetch != want || !loc.IsAddress || loc.Op != 0x91 || loc.Ops != 1 {
		t.Errorf("fbreg: %+v", loc)
	}
	loc, err = Translate([]byte{0x55, 0x93, 0x08, 0x54, 0x93, 0x08}, arch.AMD64, FrameBase{}, 8)
	if err != nil || loc.Fetch != probe.Reg("di") || loc.IsAddress || loc.Ops != 4 {
		t.Errorf("reg5 pieces: %+v %v", loc, err)
	}
	loc, err = Translate([]byte{0x03, 0x10, 0x20, 0, 0, 0, 0, 0, 0}, arch.AMD64, FrameBase{}, 8)
	if err != nil || !loc.IsAddress || loc.Addr != 0x2010 {
		t.Fatalf("addr: %+v %v", loc, err)
	}
	loc.SetSymbol("jiffies")
	if Format(loc) != "@jiffies+0" || loc.Symbol != "jiffies" {
		t.Errorf("addr symbol: %q", Format(loc))
	}
}

func TestParseFrameBase(t *testing.T) {
	for _, tc := range []struct {
		hex     string
		want    FrameBase
		needCFA bool
	}{
		{"9c", FrameBase{Kind: FrameBaseCFA}, true},
		{"56", FrameBase{Kind: FrameBaseReg, Reg: 6}, false},
		{"7708", FrameBase{Kind: FrameBaseReg, Reg: 7, Offset: 8}, false},
		{"921f70", FrameBase{Kind: FrameBaseReg, Reg: 31, Offset: -16}, false},
		{"9006", FrameBase{Kind: FrameBaseReg, Reg: 6}, false},
		{"", FrameBase{}, false},
		{"9c06", FrameBase{}, false}, // not a single call_frame_cfa: perf's fb_ops[0] is unusable
		{"a30156", FrameBase{}, false},
	} {
		b, _ := hex.DecodeString(tc.hex)
		fb, need, err := ParseFrameBase(b, 8)
		if err != nil || fb != tc.want || need != tc.needCFA {
			t.Errorf("%s: got %+v %v %v, want %+v %v", tc.hex, fb, need, err, tc.want, tc.needCFA)
		}
	}
	if _, _, err := ParseFrameBase([]byte{0x77}, 8); !errors.Is(err, ErrMalformed) {
		t.Errorf("truncated frame base: %v", err)
	}
}

func TestNotFoundMessage(t *testing.T) {
	want := "Failed to find the location of the 'x' variable at this address.\n" +
		" Perhaps it has been optimized out.\n" +
		" Use -V with the --range option to show 'x' location range."
	if got := NotFoundMessage("x"); got != want {
		t.Errorf("got %q", got)
	}
}

func FuzzTranslate(f *testing.F) {
	cases := []string{"55", "7708", "9170", "a30155", "030000008100000000", "9207", "921f08", "9e0401020304", "f40a02aabb", "a6087f", "ff"}
	for _, c := range cases {
		b, _ := hex.DecodeString(c)
		f.Add(b, uint8(0), uint8(0), int64(0), int16(0), uint8(8))
		f.Add(b, uint8(1), uint8(2), int64(7), int16(8), uint8(8))
	}
	f.Fuzz(func(t *testing.T, expr []byte, archSel, kind uint8, reg int64, off int16, addrSize uint8) {
		isa := arch.AMD64
		if archSel&1 == 1 {
			isa = arch.ARM64
		}
		if archSel&2 == 2 {
			isa = arch.Arch(archSel) // sometimes invalid
		}
		fb := FrameBase{Kind: int(kind % 4), Reg: int(reg), Offset: int64(off)}
		loc, err := Translate(expr, isa, fb, int(addrSize%10))
		if (loc == nil) == (err == nil) {
			t.Fatalf("Translate(%x) = %v, %v: want exactly one", expr, loc, err)
		}
		if loc != nil {
			if loc.Fetch == nil {
				t.Fatalf("nil Fetch for %x", expr)
			}
			_ = loc.Fetch.String()
			if loc.Ops < 1 {
				t.Fatalf("Ops %d for %x", loc.Ops, expr)
			}
		}
		ParseFrameBase(expr, int(addrSize%10))
	})
}

func TestHelpers(t *testing.T) {
	if got := Format(StaticVar("jiffies")); got != "@jiffies+0" {
		t.Errorf("StaticVar: %q", got)
	}
	if l := StaticVar("x"); !l.IsAddress || l.Symbol != "x" {
		t.Errorf("StaticVar: %+v", l)
	}
	if got := Format(ConstValue(-3)); got != "\\-3" {
		t.Errorf("ConstValue: %q", got)
	}
	if Format(nil) != "" {
		t.Error("Format(nil)")
	}
}
