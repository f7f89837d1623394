package btfinfo

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/gprobe/gprobe/disasm/arch"
)

// synthSpec builds a raw BTF blob from types and loads it through Load.
func synthSpec(t testing.TB, types ...Type) *Spec {
	t.Helper()
	b, err := btf.NewBuilder(types, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "raw.btf")
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	tInt   = &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	tUint  = &btf.Int{Name: "unsigned int", Size: 4}
	tLong  = &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}
	tU8    = &btf.Int{Name: "unsigned char", Size: 1}
	tChar  = &btf.Int{Name: "char", Size: 1, Encoding: btf.Signed}
	tI128  = &btf.Int{Name: "__int128", Size: 16, Encoding: btf.Signed}
	tBool  = &btf.Int{Name: "_Bool", Size: 1, Encoding: btf.Bool}
	tDbl   = &btf.Float{Name: "double", Size: 8}
	tEnum  = &btf.Enum{Name: "e", Size: 4, Values: []btf.EnumValue{{Name: "A", Value: 0}}}
	tVoidP = &btf.Pointer{Target: &btf.Void{}}
)

func synthTypes() (*btf.Struct, []Type) {
	inner := &btf.Struct{Name: "inner", Size: 16, Members: []btf.Member{
		{Name: "a", Type: tLong, Offset: 0},
		{Name: "name", Type: &btf.Pointer{Target: &btf.Const{Type: tChar}}, Offset: 64},
	}}
	anonUnion := &btf.Union{Size: 8, Members: []btf.Member{
		{Name: "u_long", Type: tLong},
		{Name: "u_int", Type: tInt},
		{Type: &btf.Struct{Size: 8, Members: []btf.Member{ // anonymous struct in anonymous union
			{Name: "lo", Type: tUint, Offset: 0},
			{Name: "hi", Type: tUint, Offset: 32},
		}}},
	}}
	outer := &btf.Struct{Name: "outer", Size: 64}
	outer.Members = []btf.Member{
		{Name: "x", Type: tInt, Offset: 0},
		{Name: "flag1", Type: tUint, Offset: 32, BitfieldSize: 1},
		{Name: "flag3", Type: tUint, Offset: 33, BitfieldSize: 3},
		{Name: "wide", Type: tUint, Offset: 60, BitfieldSize: 8}, // straddles bits 60..67
		{Name: "in", Type: inner, Offset: 128},
		{Type: anonUnion, Offset: 256},
		{Name: "next", Type: &btf.Pointer{Target: &btf.Typedef{Name: "outer_t", Type: outer}}, Offset: 320},
		{Name: "arr", Type: &btf.Array{Index: tInt, Type: inner, Nelems: 2}, Offset: 384 - 0},
	}
	// arr overlaps for the test's sake: only offsets matter.
	big := &btf.Struct{Name: "big", Size: 24, Members: []btf.Member{{Name: "a", Type: tLong}, {Name: "b", Type: tLong, Offset: 64}, {Name: "c", Type: tLong, Offset: 128}}}
	pair := &btf.Struct{Name: "pair", Size: 16, Members: []btf.Member{{Name: "a", Type: tLong}, {Name: "b", Type: tLong, Offset: 64}}}
	po := &btf.Pointer{Target: outer}
	fn := func(name string, ret Type, params ...btf.FuncParam) *btf.Func {
		return &btf.Func{Name: name, Type: &btf.FuncProto{Return: ret, Params: params}, Linkage: btf.GlobalFunc}
	}
	p := func(n string, t Type) btf.FuncParam { return btf.FuncParam{Name: n, Type: t} }
	types := []Type{
		outer,
		fn("f_simple", tInt, p("o", po), p("n", tLong)),
		fn("f_dup", tInt, p("a", tInt)),
		fn("f_dup", tInt, p("a", tInt)),
		fn("f_conflict", tInt, p("a", tInt)),
		fn("f_conflict", tInt, p("a", tLong)),
		fn("f_sret", big, p("a", tInt), p("b", tInt)),
		fn("f_pair", tInt, p("a", tInt), p("p", pair), p("c", tInt)),
		fn("f_big", tInt, p("b", big), p("c", tInt)),
		fn("f_i128", tInt, p("a", tInt), p("w", tI128), p("c", tInt)),
		fn("f_float", tInt, p("d", tDbl), p("c", tInt)),
		fn("f_many", tInt, p("a1", tInt), p("a2", tInt), p("a3", tInt), p("a4", tInt), p("a5", tInt),
			p("a6", tInt), p("a7", tInt), p("a8", tInt), p("a9", tInt)),
		fn("f_late_pair", tInt, p("a1", tInt), p("a2", tInt), p("a3", tInt), p("a4", tInt), p("a5", tInt),
			p("pp", pair), p("a7", tInt)),
		fn("f_vararg", tInt, p("fmt", tVoidP), btf.FuncParam{Type: &btf.Void{}}),
		fn("f_void", &btf.Void{}, p("b", tBool), p("u", tU8), p("e", tEnum)),
		&btf.Struct{Name: "dupstruct", Size: 4, Members: []btf.Member{{Name: "a", Type: tInt}}},
		&btf.Struct{Name: "dupstruct", Size: 8, Members: []btf.Member{{Name: "a", Type: tLong}}},
		&btf.Struct{Name: "samestruct", Size: 4, Members: []btf.Member{{Name: "a", Type: tInt}}},
		&btf.Struct{Name: "samestruct", Size: 4, Members: []btf.Member{{Name: "a", Type: tInt}}},
	}
	return outer, types
}

func regsOf(f *Func) string {
	var s []string
	for _, p := range f.Params {
		r := p.Reg
		if r == "" {
			r = "-"
		}
		if len(p.Regs) > 1 {
			r = strings.Join(p.Regs, "+")
		}
		if p.ByRef {
			r += "&"
		}
		s = append(s, r)
	}
	return strings.Join(s, " ")
}

func TestSynthFuncs(t *testing.T) {
	_, types := synthTypes()
	s := synthSpec(t, types...)
	for _, tc := range []struct{ fn, x86, arm string }{
		{"f_simple", "di si", "x0 x1"},
		{"f_dup", "di", "x0"},
		{"f_sret", "si dx", "x0 x1"},
		{"f_pair", "di si+dx cx", "x0 x1+x2 x3"},
		{"f_big", "- di", "x0& x1"},
		{"f_i128", "di si+dx cx", "x0 x2+x3 x4"},
		{"f_float", "- di", "- x0"},
		{"f_many", "di si dx cx r8 r9 - - -", "x0 x1 x2 x3 x4 x5 x6 x7 -"},
		{"f_late_pair", "di si dx cx r8 - r9", "x0 x1 x2 x3 x4 x5+x6 x7"},
		{"f_simple.isra.0", "di si", "x0 x1"},
		{"f_simple.constprop.3", "di si", "x0 x1"},
	} {
		for _, isa := range []arch.Arch{arch.AMD64, arch.ARM64} {
			f, err := s.FuncArch(tc.fn, isa)
			if err != nil {
				t.Errorf("%s: %v", tc.fn, err)
				continue
			}
			want := tc.x86
			if isa == arch.ARM64 {
				want = tc.arm
			}
			if got := regsOf(f); got != want {
				t.Errorf("%s %s: regs %q, want %q", isa, tc.fn, got, want)
			}
		}
	}
	f, err := s.FuncArch("f_sret", arch.AMD64)
	if err != nil || f.SretReg != "di" {
		t.Errorf("f_sret sret: %v %q", err, f.SretReg)
	}
	f, err = s.FuncArch("f_vararg", arch.ARM64)
	if err != nil || !f.Variadic || len(f.Params) != 1 {
		t.Errorf("f_vararg: %v %+v", err, f)
	}
	if _, err := s.Func("f_conflict"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "different prototypes") {
		t.Errorf("f_conflict: %v", err)
	}
	if _, err := s.Func("nope.isra.0"); !errors.Is(err, ErrNotFound) {
		t.Errorf("nope: %v", err)
	}
	if _, err := s.FuncArch("f_simple", arch.Arch(0)); !errors.Is(err, ErrUnsupported) {
		t.Errorf("mips: %v", err)
	}
	if _, err := s.StructByName("dupstruct"); !errors.Is(err, ErrNotFound) {
		t.Errorf("dupstruct: %v", err)
	}
	if _, err := s.StructByName("samestruct"); err != nil {
		t.Errorf("samestruct: %v", err)
	}

	f, _ = s.Func("f_void")
	for i, want := range []string{"u8", "x8", "s32"} {
		if got, _ := KprobeType(f.Params[i].Type, i == 1); got != want {
			t.Errorf("KprobeType(%s) %q, want %q", TypeString(f.Params[i].Type, 0), got, want)
		}
	}
	for typ, want := range map[Type]string{tInt: "s32", tLong: "s64", tChar: "s8", tUint: "u32", tVoidP: "u64", tI128: "", tDbl: ""} {
		if got, _ := KprobeType(typ, false); got != want {
			t.Errorf("KprobeType(%s) %q, want %q", TypeString(typ, 0), got, want)
		}
	}
}

func TestSynthResolve(t *testing.T) {
	_, types := synthTypes()
	s := synthSpec(t, types...)
	f, err := s.FuncArch("f_simple", arch.AMD64)
	if err != nil {
		t.Fatal(err)
	}
	o := f.Params[0].Type
	for _, tc := range []struct {
		chain, fetch, bits, final string
		err                       error
	}{
		{chain: "->x", fetch: "+0(%di)", final: "int"},
		{chain: "->flag1", fetch: "+4(%di)", bits: "b1@0/32"},
		{chain: "->flag3", fetch: "+4(%di)", bits: "b3@1/32"},
		{chain: "->wide", fetch: "+7(%di)", bits: "b8@4/32"},
		{chain: "->in.a", fetch: "+16(%di)", final: "long"},
		{chain: "->in.name", fetch: "+24(%di)", final: "const char *"},
		{chain: "->u_int", fetch: "+32(%di)", final: "int"},
		{chain: "->hi", fetch: "+36(%di)", final: "unsigned int"},
		{chain: "->next->next->in.name", fetch: "+24(+40(+40(%di)))", final: "const char *"},
		{chain: "->arr[1].name", fetch: "+72(%di)", final: "const char *"},
		{chain: "[2].in", fetch: "+144(%di)", final: "struct inner"},
		{chain: "->arr", fetch: "+48(%di)", final: "struct inner[2]"},
		{chain: "", fetch: "%di", final: "struct outer *"},
		{chain: "->nope", err: ErrNotFound},
		{chain: ".x", err: ErrNotStruct},
		{chain: "->in->a", err: ErrNotPointer},
		{chain: "->x.y", err: ErrNotStruct},
		{chain: "->x->y", err: ErrNotPointer},
		{chain: "->flag1.y", err: ErrNotStruct},
		{chain: "->x[1]", err: ErrNotPointer},
	} {
		chain, err := ParseChain(tc.chain)
		if err != nil {
			t.Fatalf("%q: %v", tc.chain, err)
		}
		acc, err := s.Resolve(o, chain)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%q: error %v, want %v", tc.chain, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.chain, err)
			continue
		}
		if got := acc.Fetch("%di"); got != tc.fetch {
			t.Errorf("%q: fetch %s, want %s", tc.chain, got, tc.fetch)
		}
		if got := acc.BitfieldType(); got != tc.bits {
			t.Errorf("%q: bitfield %q, want %q", tc.chain, got, tc.bits)
		}
		if tc.final != "" && TypeString(acc.Final, 0) != tc.final {
			t.Errorf("%q: final %q, want %q", tc.chain, TypeString(acc.Final, 0), tc.final)
		}
	}
	// A struct passed by value cannot be accessed with '.'.
	g, _ := s.Func("f_pair")
	if _, err := s.Resolve(g.Params[1].Type, []Step{{Name: "a"}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("by-value struct: %v", err)
	}
	// ResolveStruct: ".x" on the object at an address.
	outer, _ := s.StructByName("outer")
	acc, err := s.ResolveStruct(outer, []Step{{Name: "in"}, {Name: "name"}})
	if err != nil || acc.Fetch("B") != "+24(B)" {
		t.Errorf("ResolveStruct: %v %v", err, acc)
	}
	for _, bad := range []string{"->", "[x]", "[1", "x", "->1a"} {
		if _, err := ParseChain(bad); err == nil {
			t.Errorf("ParseChain(%q): no error", bad)
		}
	}
}

// fixtureBTF returns the raw .BTF section of a fixture (a fuzz seed).
func fixtureBTF(t testing.TB) []byte {
	ef, err := elf.Open(filepath.Join(fixtureDir, "x86_64-dwarf5-O2.elf"))
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	data, err := ef.Section(".BTF").Data()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestLoadRawFixtureBTF(t *testing.T) {
	raw := fixtureBTF(t)
	p := filepath.Join(t.TempDir(), "raw")
	os.WriteFile(p, raw, 0o644)
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.FuncArch("vfs_read", arch.AMD64); err != nil {
		t.Fatal(err)
	}
}

func FuzzLoad(f *testing.F) {
	// Small seeds keep the coverage-guided fuzzer fast (a full fixture's
	// 20 KB .BTF made the instrumented worker crawl); the full blob is
	// checked by TestLoadRawFixtureBTF.
	_, types := synthTypes()
	b, err := btf.NewBuilder(types, nil)
	if err != nil {
		f.Fatal(err)
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add(raw[:len(raw)/2])
	f.Add([]byte{0x9f, 0xeb, 1, 0, 24, 0, 0, 0})
	f.Add([]byte("\x7fELF"))
	f.Add([]byte{})
	mut := bytes.Clone(raw)
	mut[30] ^= 0xff
	f.Add(mut)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "in")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(p)
		if err != nil {
			return
		}
		names, _ := s.FuncNames()
		for i, n := range names {
			if i > 50 {
				break
			}
			fn, err := s.FuncArch(n, arch.AMD64)
			if err != nil {
				continue
			}
			for _, p := range fn.Params {
				KprobeType(p.Type, true)
				s.Resolve(p.Type, []Step{{Name: "f_path", Arrow: true}, {Name: "dentry"}})
			}
		}
		s.StructByName("file")
	})
}

func TestIsRawBTF(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw")
	os.WriteFile(raw, fixtureBTF(t), 0o644)
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("hello"), 0o644)
	for path, want := range map[string]bool{
		raw: true, junk: false, filepath.Join(fixtureDir, "x86_64-dwarf5-O2.elf"): false,
		filepath.Join(dir, "missing"): false, dir: false,
	} {
		if got := IsRawBTF(path); got != want {
			t.Errorf("IsRawBTF(%s) = %v, want %v", path, got, want)
		}
	}
}
