package golang

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/resolve/spec"
)

func TestDictOf(t *testing.T) {
	for name, want := range map[string]Dict{
		"main.work":                              NoDict,
		"main.generic[go.shape.int]":             DictFirst,
		"main.Map[go.shape.int,go.shape.string]": DictFirst,
		"main.(*Box[go.shape.string]).Get":       DictAfterReceiver,
		"main.Box[go.shape.[]uint8].Len":         DictAfterReceiver,
		"main.apply[go.shape.int].func1":         NoDict,
		"main.(*Box[go.shape.int]).Get.func2.1":  NoDict,
		"main.apply[go.shape.int].gowrap1":       NoDict,
		"type:.eq.main.pair[go.shape.int]":       NoDict,
		"main.broken[go.shape.int":               NoDict,
		"main.instantiated[int]":                 NoDict,
	} {
		if got := DictOf(name); got != want {
			t.Errorf("DictOf(%q) = %d, want %d", name, got, want)
		}
	}
}

// synthetic builds Types from types given by offset, without DWARF.
func synthetic(types map[uint64]*Type) *Types {
	ts := &Types{cache: map[uint64]*Type{}}
	for off, t := range types {
		t.Off = off
		ts.cache[off] = t
	}
	return ts
}

// goTypes are the usual Go types at fixed offsets.
func goTypes() (*Types, map[string]*Type) {
	byName := map[string]*Type{
		"int":     {Name: "int", Kind: Int, Size: 8},
		"uint8":   {Name: "uint8", Kind: Uint8, Size: 1},
		"bool":    {Name: "bool", Kind: Bool, Size: 1},
		"float64": {Name: "float64", Kind: Float64, Size: 8},
		"*uint8":  {Name: "*uint8", Kind: Pointer, Size: 8, Elem: 2},
		"*int":    {Name: "*int", Kind: Pointer, Size: 8, Elem: 1},
		"string":  {Name: "string", Kind: String, Size: 16, Fields: []Field{{"str", 0, 5}, {"len", 8, 1}}},
		"[]int":   {Name: "[]int", Kind: Slice, Size: 24, Elem: 1, Fields: []Field{{"array", 0, 6}, {"len", 8, 1}, {"cap", 16, 1}}},
		"error":   {Name: "error", Kind: Interface, Size: 16, Fields: []Field{{"tab", 0, 6}, {"data", 8, 6}}},
		"padded":  {Name: "main.padded", Kind: Struct, Size: 24, Fields: []Field{{"p", 0, 6}, {"b", 8, 2}, {"n", 16, 1}}},
		"[2]int":  {Name: "[2]int", Kind: Array, Size: 16, Elem: 1, Len: 2},
		"[1]int":  {Name: "[1]int", Kind: Array, Size: 8, Elem: 1, Len: 1},
	}
	offs := map[string]uint64{"int": 1, "uint8": 2, "bool": 3, "float64": 4, "*uint8": 5, "*int": 6, "string": 7, "[]int": 8, "error": 9, "padded": 10, "[2]int": 11, "[1]int": 12}
	m := map[uint64]*Type{}
	for n, t := range byName {
		m[offs[n]] = t
	}
	return synthetic(m), byName
}

func renderParts(ps []Part) string {
	var out []string
	for _, p := range ps {
		switch {
		case p.Stack:
			out = append(out, "stack+"+strconv.FormatInt(p.StackOff, 10))
		default:
			out = append(out, p.Reg)
		}
	}
	return strings.Join(out, ",")
}

// TestAssign places the ABI's own examples (abi-internal.md) and the
// edges: a value that does not fit goes whole to the stack, registers
// restart for results, stack results follow the arguments aligned.
func TestAssign(t *testing.T) {
	ts, ty := goTypes()
	sig := Signature{
		// func f(a1 uint8, a2 [2]uintptr, a3 uint8) (r1 struct { x uintptr; y [2]uintptr }, r2 string)
		// in the ABI document's example: a2 on the stack, r1 on the stack.
		Args:    []*Type{ty["uint8"], ty["[2]int"], ty["uint8"]},
		Results: []*Type{{Name: "r1", Kind: Struct, Size: 24, Fields: []Field{{"x", 0, 1}, {"y", 8, 11}}}, ty["string"]},
	}
	fr, err := Assign(arch.AMD64, ts, sig)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range fr.Args {
		got = append(got, renderParts(a))
	}
	for _, r := range fr.Results {
		got = append(got, renderParts(r))
	}
	// a1 in RAX, a2 on the stack at 0, a3 in RBX; r1 on the stack after
	// the arguments (16, aligned to 8), r2 in RAX, RBX.
	if want := "ax stack+0 bx stack+16 ax,bx"; strings.Join(got, " ") != want {
		t.Errorf("the ABI's example: got %q, want %q", strings.Join(got, " "), want)
	}

	// Nine integer registers on x86-64: a tenth word goes to the stack, a
	// string that would need the ninth and a tenth register goes whole.
	many := make([]*Type, 8)
	for i := range many {
		many[i] = ty["int"]
	}
	fr, err = Assign(arch.AMD64, ts, Signature{Args: append(many, ty["string"], ty["int"])})
	if err != nil {
		t.Fatal(err)
	}
	if s, i := renderParts(fr.Args[8]), renderParts(fr.Args[9]); s != "stack+0" || i != "r11" {
		t.Errorf("a string past the registers: %s, then an int: %s", s, i)
	}
	// arm64 has sixteen; floats do not take integer registers.
	fr, err = Assign(arch.ARM64, ts, Signature{Args: append(many, ty["float64"], ty["string"], ty["padded"], ty["[1]int"])})
	if err != nil {
		t.Fatal(err)
	}
	if got := renderParts(fr.Args[8]) + " " + renderParts(fr.Args[9]) + " " + renderParts(fr.Args[10]) + " " + renderParts(fr.Args[11]); got != "v0 x8,x9 x10,x11,x12 x13" {
		t.Errorf("arm64: %s", got)
	}
	// ABI0: everything on the stack, in order, aligned.
	fr, err = Assign(arch.AMD64, ts, Signature{ABI: ABI0, Args: []*Type{ty["bool"], ty["int"]}, Results: []*Type{ty["bool"]}})
	if err != nil {
		t.Fatal(err)
	}
	if got := renderParts(fr.Args[0]) + " " + renderParts(fr.Args[1]) + " " + renderParts(fr.Results[0]); got != "stack+0 stack+8 stack+16" {
		t.Errorf("ABI0: %s", got)
	}
	// Dictionaries.
	fr, err = Assign(arch.AMD64, ts, Signature{Dict: DictAfterReceiver, Args: []*Type{ty["*int"], ty["int"]}})
	if err != nil {
		t.Fatal(err)
	}
	if got := renderParts(fr.Args[0]) + " " + renderParts(fr.Args[1]); got != "ax cx" {
		t.Errorf("a method's dictionary: %s", got)
	}
}

// TestFetchSynthetic fetches values of every kind from places of every
// kind, without DWARF.
func TestFetchSynthetic(t *testing.T) {
	ts, ty := goTypes()
	regs := func(rs ...string) Place {
		var pl Place
		for i, r := range rs {
			pl = append(pl, Loc{Off: int64(8 * i), Size: 8, Reg: r})
		}
		return pl
	}
	mem := func(size int64) Place { return Place{{Size: size, Base: probe.Reg("sp"), Mem: 8}} }
	for _, c := range []struct {
		typ  string
		pl   Place
		arg  string
		want string
	}{
		{"string", regs("ax", "bx"), "s", "s_str=%ax:x64 s_len=%bx:s64"},
		{"string", mem(16), "s:string", "s=+0(+8(%sp)):string s_len=+16(%sp):s64"},
		{"string", mem(16), "s[3]", "s=+3(+8(%sp)):x8"},
		{"[]int", regs("ax", "bx", "cx"), "c[2]", "c=+16(%ax):s64"},
		{"[]int", Place{{Off: 0, Size: 8, None: true}, {Off: 8, Size: 8, Reg: "bx"}, {Off: 16, Size: 8, Reg: "cx"}}, "c.len", "len=%bx:s64"},
		{"[]int", Place{{Off: 0, Size: 8, None: true}, {Off: 8, Size: 8, Reg: "bx"}, {Off: 16, Size: 8, Reg: "cx"}}, "c[0]", "optimized out"},
		{"error", regs("di", "si"), "e", "e_tab=%di:x64 e_data=%si:x64"},
		{"padded", Place{{Off: 0, Size: 8, Reg: "ax"}, {Off: 8, Size: 1, Reg: "bx"}, {Off: 16, Size: 8, Reg: "cx"}}, "p.b", "b=%bx:x8"},
		{"padded", mem(24), "p.n", "n=+24(%sp):s64"},
		{"padded", mem(24), "p.p", "p=+8(%sp):x64"},
		{"padded", mem(24), "p", "fetch its fields"},
		{"[2]int", mem(16), "a[1]", "a=+16(%sp):s64"},
		{"[2]int", mem(16), "a[2]", "out of"},
		{"int", regs("ax"), "n:x", "n=%ax:x64"},
		{"int", regs("ax"), "n:u16", "n=%ax:u16"},
		{"float64", mem(8), "f", "cast it (f:x64)"},
		{"float64", mem(8), "f:x64", "f=+8(%sp):x64"},
		{"*int", regs("ax"), "p[1]", "p=+8(%ax):s64"},
		{"bool", regs("ax"), "ok", "ok=%ax:x8"},
	} {
		a, err := spec.ParseArg(c.arg)
		if err != nil {
			t.Fatal(err)
		}
		name := a.Var
		if len(a.Fields) > 0 {
			name = a.Name
		}
		out, err := ts.Fetch(ty[c.typ], c.pl, Request{Name: name, Label: a.Var, Fields: a.Fields, Type: a.Type, HasType: a.HasType, Hex: true})
		var got string
		if err != nil {
			got = err.Error()
		} else {
			var parts []string
			for _, fa := range out {
				parts = append(parts, fa.String())
			}
			got = strings.Join(parts, " ")
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%s %s: got %q, want %q", c.typ, c.arg, got, c.want)
		}
	}
}

func TestRegisterABI(t *testing.T) {
	for _, c := range []struct {
		version string
		isa     arch.Arch
		want    bool
	}{
		{"go1.26.8", arch.AMD64, true}, {"go1.17", arch.AMD64, true}, {"go1.16.15", arch.AMD64, false},
		{"go1.18beta1", arch.ARM64, true}, {"go1.17.13", arch.ARM64, false}, {"", arch.AMD64, true},
		{"devel +abc", arch.ARM64, true},
	} {
		if got := registerABI(c.version, c.isa); got != c.want {
			t.Errorf("registerABI(%q, %v) = %v", c.version, c.isa, got)
		}
	}
}
