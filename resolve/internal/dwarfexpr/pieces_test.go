package dwarfexpr

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/disasm/arch"
)

// renderPieces is "SIZE:FETCH[&]" per piece ("&" when the fetch is the
// part's address), "SIZE:-" for an unavailable part, space-separated.
func renderPieces(ps []Piece) string {
	var parts []string
	for _, p := range ps {
		s := "-"
		if p.Unreadable != "" {
			s = "!" + p.Unreadable
		}
		if p.Loc != nil {
			s = Format(p.Loc)
			if p.Loc.IsAddress {
				s += "&"
			}
		}
		parts = append(parts, strings.TrimSpace(strings.Join([]string{strconv.FormatInt(p.Size, 10), s}, ":")))
	}
	return strings.Join(parts, " ")
}

// TestPieces: the locations Go's compiler writes (taken from real Go
// DWARF: testdata/goprogs/values) and C's split structs, on both arches.
func TestPieces(t *testing.T) {
	cfa := FrameBase{Kind: FrameBaseCFA, Reg: 7, Offset: 8}    // %sp+8 on x86-64
	cfa64 := FrameBase{Kind: FrameBaseCFA, Reg: 31, Offset: 0} // sp on arm64
	fbCFA := FrameBase{Kind: FrameBaseCFA, Reg: 7, Offset: 8}  // Go's frame base is the CFA
	for _, c := range []struct {
		isa     arch.Arch
		expr    string
		fb, cfa FrameBase
		want    string
		wantErr error
	}{
		// a Go string in RAX and RBX
		{arch.AMD64, "50930853930 8", fbCFA, cfa, "8:%ax 8:%bx", nil},
		// a slice whose pointer is gone (empty first piece)
		{arch.AMD64, "93085493085893 08", fbCFA, cfa, "8:- 8:%si 8:%r8", nil},
		// a stack argument: the CFA itself, or the frame base plus 8
		{arch.AMD64, "9c", fbCFA, cfa, "0:+8(%sp)&", nil},
		{arch.AMD64, "9108", fbCFA, cfa, "0:+16(%sp)&", nil},
		// a string on the stack: two pieces of memory
		{arch.AMD64, "9c9308910893 08", fbCFA, cfa, "8:+8(%sp)& 8:+16(%sp)&", nil},
		// CFA plus an offset, two ways
		{arch.AMD64, "9c2310", fbCFA, cfa, "0:+24(%sp)&", nil},
		{arch.AMD64, "9c11102 2", fbCFA, cfa, "0:+24(%sp)&", nil},
		// a plain register and a register-relative address, whole
		{arch.AMD64, "52", fbCFA, cfa, "0:%cx", nil},
		{arch.AMD64, "7710", fbCFA, cfa, "0:+16(%sp)&", nil},
		// arm64: a string in x0 and x1, an interface in x2 and x3
		{arch.ARM64, "50930851930 8", FrameBase{}, cfa64, "8:%x0 8:%x1", nil},
		{arch.ARM64, "52930853930 8", FrameBase{}, cfa64, "8:%x2 8:%x3", nil},
		{arch.ARM64, "9c", FrameBase{}, cfa64, "0:+0(%sp)&", nil},
		// floating-point registers: named, not readable
		{arch.AMD64, "61", fbCFA, cfa, "0:!xmm0", nil},
		{arch.AMD64, "509308 6293 08", fbCFA, cfa, "8:%ax 8:!xmm1", nil},
		{arch.ARM64, "904193 04", FrameBase{}, cfa64, "4:!v1", nil},
		// computed parts, parts after the last piece, no CFA
		{arch.AMD64, "55 9f 9308", fbCFA, cfa, "", ErrUnsupported},
		{arch.AMD64, "5093 0855", fbCFA, cfa, "", ErrUnsupported},
		{arch.AMD64, "9c", fbCFA, FrameBase{}, "", ErrUnsupported},
		{arch.AMD64, "", fbCFA, cfa, "", ErrOptimizedOut},
		{arch.AMD64, "93", fbCFA, cfa, "", ErrMalformed},
	} {
		expr, err := hex.DecodeString(strings.ReplaceAll(c.expr, " ", ""))
		if err != nil {
			t.Fatalf("%q: %v", c.expr, err)
		}
		ps, err := Pieces(expr, c.isa, c.fb, c.cfa, 8)
		switch {
		case c.wantErr != nil && !errors.Is(err, c.wantErr):
			t.Errorf("%s %s: got %v (%s), want %v", c.isa, c.expr, err, renderPieces(ps), c.wantErr)
		case c.wantErr == nil && err != nil:
			t.Errorf("%s %s: %v", c.isa, c.expr, err)
		case c.wantErr == nil && renderPieces(ps) != c.want:
			t.Errorf("%s %s: got %q, want %q", c.isa, c.expr, renderPieces(ps), c.want)
		}
	}
}

func FuzzPieces(f *testing.F) {
	for _, c := range []string{"5093085393 08", "93085493085893 08", "9c", "9108", "9c2310", "9c11102 2", "55 9f 9308"} {
		b, _ := hex.DecodeString(strings.ReplaceAll(c, " ", ""))
		f.Add(b, false)
		f.Add(b, true)
	}
	f.Fuzz(func(t *testing.T, expr []byte, arm bool) {
		isa, cfa := arch.AMD64, FrameBase{Kind: FrameBaseCFA, Reg: 7, Offset: 8}
		if arm {
			isa, cfa = arch.ARM64, FrameBase{Kind: FrameBaseCFA, Reg: 31}
		}
		ps, err := Pieces(expr, isa, cfa, cfa, 8)
		if (err == nil) == (len(ps) == 0) {
			t.Fatalf("Pieces(%x) = %v, %v: want pieces or an error", expr, ps, err)
		}
		for _, p := range ps {
			if p.Loc != nil && (p.Loc.Fetch == nil || p.Unreadable != "") {
				t.Fatalf("Pieces(%x): a piece without a fetch", expr)
			}
		}
	})
}
