package golang

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/internal/dwarfexpr"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/spec"
)

// The tests of this file read real Go programs: testdata/goprogs/values
// built for x86-64 and arm64 by the Go toolchain that runs the tests.

var goarches = []string{"amd64", "arm64"}

func openValues(t *testing.T, goarch string) *dwarfinfo.File {
	t.Helper()
	bin := testenv.BuildGo(t, testenv.GoProgram(t, "values"), goarch)
	f, err := dwarfinfo.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestIsGo(t *testing.T) {
	for _, goarch := range goarches {
		if f := openValues(t, goarch); !IsGo(f) {
			t.Errorf("%s: a Go program is not Go", f.Path)
		}
	}
	for _, p := range fixtures(t) {
		f, err := dwarfinfo.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if IsGo(f) {
			t.Errorf("%s: a C image is Go", p)
		}
		f.Close()
	}
	if IsGo(nil) {
		t.Error("nil is Go")
	}
}

// fixtures are the C images of testdata/vmlinux-fixtures.
func fixtures(t *testing.T) []string {
	m, _ := filepath.Glob("../../../testdata/vmlinux-fixtures/*.elf")
	if len(m) == 0 {
		t.Fatal("no C fixtures")
	}
	return m
}

// TestReadRuntime compares runtime.g's offsets with the standard
// library's reading of the same DWARF.
func TestReadRuntime(t *testing.T) {
	for _, goarch := range goarches {
		f := openValues(t, goarch)
		rt, err := ReadRuntime(f)
		if err != nil {
			t.Fatal(err)
		}
		want := stdlibRuntimeG(t, f.Path)
		if *rt != want {
			t.Errorf("%s: ReadRuntime = %+v, the standard library reads %+v", goarch, *rt, want)
		}
		t.Logf("%s: %+v", goarch, *rt)
	}
}

func stdlibRuntimeG(t *testing.T, path string) Runtime {
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	d, err := ef.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			t.Fatalf("no runtime.g: %v", err)
		}
		if e.Tag != dwarf.TagStructType || e.Val(dwarf.AttrName) != "runtime.g" {
			continue
		}
		ty, err := d.Type(e.Offset)
		if err != nil {
			t.Fatal(err)
		}
		var rt Runtime
		for _, fl := range ty.(*dwarf.StructType).Field {
			switch fl.Name {
			case "goid":
				rt.Goid, rt.GoidSize = fl.ByteOffset, fl.Type.Size()
			case "stack":
				st := fl.Type
				for {
					td, ok := st.(*dwarf.TypedefType)
					if !ok {
						break
					}
					st = td.Type
				}
				for _, sf := range st.(*dwarf.StructType).Field {
					if sf.Name == "hi" {
						rt.StackHi = fl.ByteOffset + sf.ByteOffset
					}
				}
			}
		}
		return rt
	}
}

// cfaAtEntry is the canonical frame address at a Go function's entry:
// above the return address on x86-64, the stack pointer on arm64.
func cfaAtEntry(isa arch.Arch) dwarfexpr.FrameBase {
	if isa == arch.AMD64 {
		return dwarfexpr.FrameBase{Kind: dwarfexpr.FrameBaseCFA, Reg: 7, Offset: 8}
	}
	return dwarfexpr.FrameBase{Kind: dwarfexpr.FrameBaseCFA, Reg: 31}
}

// renderPlace is a Place as "OFF+SIZE=WHERE" parts; size 0 (the whole
// value) becomes size, and contiguous memory is one part.
func renderPlace(pl Place, size int64) string {
	var parts []string
	var merged Place
	for _, l := range pl {
		if l.Size == 0 {
			l.Size = size - l.Off
		}
		if n := len(merged); n > 0 {
			last := &merged[n-1]
			if l.Base != nil && last.Base != nil && l.Base.String() == last.Base.String() &&
				last.Off+last.Size == l.Off && last.Mem+last.Size == l.Mem {
				last.Size += l.Size
				continue
			}
		}
		merged = append(merged, l)
	}
	for _, l := range merged {
		where := "%" + l.Reg
		switch {
		case l.None:
			where = "-"
		case l.Base != nil:
			where = probe.Mem{Off: l.Mem, Inner: l.Base}.String()
		}
		n := l.Size
		if n == 0 {
			n = size - l.Off
		}
		parts = append(parts, fmt.Sprintf("%d+%d=%s", l.Off, n, where))
	}
	return strings.Join(parts, " ")
}

// funcParams is a function's parameters and results as its DWARF lists
// them, with their DIEs.
func funcParams(cu *dwarfinfo.CU, off uint64) (args, results []*dwarf.Entry, err error) {
	kids, err := cu.Children(off)
	if err != nil {
		return nil, nil, err
	}
	for _, k := range kids {
		if k.Tag != dwarf.TagFormalParameter {
			continue
		}
		if v, _ := k.Val(dwarf.AttrVarParam).(bool); v {
			results = append(results, k)
		} else {
			args = append(args, k)
		}
	}
	return args, results, nil
}

// TestAssignAgreesWithDWARF places the arguments of every function of
// both programs (the runtime's and the program's: thousands) by the
// register ABI and compares with where the compiler's DWARF says they are
// at the function's entry: the same registers, the same stack slots.
func TestAssignAgreesWithDWARF(t *testing.T) {
	for _, goarch := range goarches {
		f := openValues(t, goarch)
		isa, err := arch.ForMachine(f.Machine)
		if err != nil {
			t.Fatal(err)
		}
		refs, err := f.FindFuncs(func([]byte) bool { return true }, false)
		if err != nil {
			t.Fatal(err)
		}
		byUnit := map[int][]uint64{}
		for _, r := range refs {
			byUnit[r.Unit] = append(byUnit[r.Unit], r.Offset)
		}
		units := make([]int, 0, len(byUnit))
		for u := range byUnit {
			units = append(units, u)
		}
		sort.Ints(units)
		funcs, compared, stack, float, bad, abi0, contradictions := 0, 0, 0, 0, 0, 0, 0
		syms := map[uint64]string{}
		for _, s := range testenv.ELFSymbols(t, f.Path) {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
				syms[s.Value] = s.Name
			}
		}
		for _, u := range units {
			cu, err := f.Unit(u)
			if err != nil {
				t.Fatal(err)
			}
			if !IsGoUnit(cu) {
				continue
			}
			ts := NewTypes(cu)
			for _, off := range byUnit[u] {
				sp := cu.Scopes[off]
				entry, ok := sp.LowestPC()
				if !ok {
					continue
				}
				args, results, err := funcParams(cu, off)
				if err != nil {
					t.Fatal(err)
				}
				var types, rtypes []*Type
				for _, a := range args {
					ty, err := ts.TypeOf(a)
					if err != nil {
						t.Fatalf("%s: %s: %v", sp.Name, ts.Name(a), err)
					}
					types = append(types, ty)
				}
				for _, r := range results {
					ty, err := ts.TypeOf(r)
					if err != nil {
						t.Fatalf("%s: %s: %v", sp.Name, ts.Name(r), err)
					}
					rtypes = append(rtypes, ty)
				}
				sig := Signature{ABI: FuncABI(syms[entry], cu.Lines.File(sp.DeclFile)), Dict: DictOf(sp.Name), Args: types, Results: rtypes}
				fr, err := Assign(isa, ts, sig)
				if err != nil {
					t.Fatalf("%s: %v", sp.Name, err)
				}
				if sig.ABI == ABI0 {
					abi0++
				}
				funcs++
				// The compiler's DWARF sometimes gives two arguments one
				// register at the entry (runtime.(*pallocData).
				// findScavengeCandidate: minimum and max both in the third
				// register, while the code reads minimum there): such a
				// claim is not evidence either way.
				dwarfPlaces := make([]string, len(args))
				claims := map[string]int{}
				for i, a := range args {
					fld := a.AttrField(dwarf.AttrLocation)
					if fld == nil {
						continue
					}
					expr, ok, err := cu.Location(fld, entry)
					if err != nil {
						t.Fatal(err)
					}
					if !ok || len(expr) == 0 {
						continue // dead at the entry
					}
					cfa := cfaAtEntry(isa)
					ps, err := dwarfexpr.Pieces(expr, isa, cfa, cfa, 8)
					if err != nil {
						t.Errorf("%s %s %s: %v", goarch, sp.Name, ts.Name(a), err)
						continue
					}
					pl, err := ts.PlaceOfPieces(types[i], ps)
					if err != nil {
						t.Fatal(err)
					}
					dwarfPlaces[i] = renderPlace(pl, types[i].Size)
					for _, l := range pl {
						if l.Reg != "" {
							claims[l.Reg]++
						}
					}
				}
				for i, a := range args {
					want := dwarfPlaces[i]
					if want == "" {
						continue
					}
					contradicts := false
					for _, part := range strings.Fields(want) {
						if r, ok := strings.CutPrefix(part[strings.Index(part, "=")+1:], "%"); ok && claims[r] > 1 {
							contradicts = true
						}
					}
					if contradicts {
						contradictions++
						continue
					}
					got := renderPlace(PlaceOfParts(isa, fr.Args[i]), types[i].Size)
					if !samePlace(got, want) {
						bad++
						if bad < 20 {
							t.Errorf("%s %s %s (%s): the ABI places it at %s, the DWARF at %s", goarch, sp.Name, ts.Name(a), types[i].Name, got, want)
						}
						continue
					}
					compared++
					if fr.Args[i][0].Stack {
						stack++
					}
					if fr.Args[i][0].Float {
						float++
					}
				}
			}
		}
		t.Logf("%s: %d functions (%d ABI0), %d arguments agree (%d on the stack, %d in floating-point registers), %d disagree, %d where the DWARF contradicts itself",
			goarch, funcs, abi0, compared, stack, float, bad, contradictions)
		if compared < 2000 || stack == 0 || float == 0 || abi0 == 0 {
			t.Errorf("%s: only %d arguments compared, %d on the stack", goarch, compared, stack)
		}
	}
}

// samePlace compares two rendered places, a part the DWARF has no
// location for ("-") matching anything.
func samePlace(abi, dw string) bool {
	a, d := strings.Fields(abi), strings.Fields(dw)
	if len(a) != len(d) {
		return false
	}
	for i := range a {
		if strings.HasSuffix(d[i], "=-") {
			if strings.SplitN(a[i], "=", 2)[0] != strings.SplitN(d[i], "=", 2)[0] {
				return false
			}
			continue
		}
		if a[i] != d[i] {
			return false
		}
	}
	return true
}

// TestFetchRealValues fetches the values of testdata/goprogs/values's
// functions at their entries (DWARF locations) and returns (the ABI's
// result placement), on both architectures.
func TestFetchRealValues(t *testing.T) {
	cases := []struct {
		fn, arg    string
		ret        bool // a result, placed by the ABI
		amd, arm64 string
	}{
		{"main.strs", "s", false, "s_str=%ax:x64 s_len=%bx:s64", "s_str=%x0:x64 s_len=%x1:s64"},
		{"main.strs", "s:string", false, "s=+0(%ax):string s_len=%bx:s64", "s=+0(%x0):string s_len=%x1:s64"},
		{"main.strs", "s.len", false, "len=%bx:s64", "len=%x1:s64"},
		{"main.strs", "s[1]", false, "s=+1(%ax):x8", "s=+1(%x0):x8"},
		{"main.strs", "n", false, "n=%cx:s64", "n=%x2:s64"},
		{"main.slices", "c", false, "c_array=%ax:x64 c_len=%bx:s64 c_cap=%cx:s64", "c_array=%x0:x64 c_len=%x1:s64 c_cap=%x2:s64"},
		{"main.slices", "c[2]", false, "c=+16(%ax):s64", "c=+16(%x0):s64"},
		{"main.slices", "c.cap", false, "cap=%cx:s64", "cap=%x2:s64"},
		{"main.ifaces", "e", false, "e_tab=%ax:x64 e_data=%bx:x64", "e_tab=%x0:x64 e_data=%x1:x64"},
		{"main.ifaces", "a", false, "a_type=%cx:x64 a_data=%di:x64", "a_type=%x2:x64 a_data=%x3:x64"},
		{"main.ptrs", "t->N", false, "N=+16(%ax):s64", "N=+16(%x0):s64"},
		{"main.ptrs", "t.N", false, "N=+16(%ax):s64", "N=+16(%x0):s64"},
		{"main.ptrs", "t.Name:string", false, "Name=+0(+0(%ax)):string Name_len=+8(%ax):s64", "Name=+0(+0(%x0)):string Name_len=+8(%x0):s64"},
		{"main.ptrs", "t.Next.N", false, "N=+16(+48(%ax)):s64", "N=+16(+48(%x0)):s64"},
		{"main.ptrs", "t.Tags[1]:string", false, "Tags=+0(+16(+24(%ax))):string Tags_len=+24(+24(%ax)):s64", "Tags=+0(+16(+24(%x0))):string Tags_len=+24(+24(%x0)):s64"},
		{"main.maps", "m.len", false, "len=+0(%ax):x64", "len=+0(%x0):x64"},
		{"main.maps", "m", false, "m=%ax:x64", "m=%x0:x64"},
		{"main.manyargs", "k", false, "k=+16(%sp):s64", "k=%x10:s64"},
		{"main.results", "~r0", true, "r0=%ax:s64", "r0=%x0:s64"},
		{"main.results", "~r1", true, "r1_tab=%bx:x64 r1_data=%cx:x64", "r1_tab=%x1:x64 r1_data=%x2:x64"},
		{"main.named", "err", true, "err_tab=%bx:x64 err_data=%cx:x64", "err_tab=%x1:x64 err_data=%x2:x64"},
		{"main.strresult", "~r0:string", true, "r0=+0(%ax):string r0_len=%bx:s64", "r0=+0(%x0):string r0_len=%x1:s64"},
		{"main.(*T).Method", "t.Name.len", false, "len=+8(%ax):s64", "len=+8(%x0):s64"},
		{"main.T.Value", "t.N", false, "N=%cx:s64", "N=%x2:s64"},
	}
	for _, goarch := range goarches {
		f := openValues(t, goarch)
		isa, _ := arch.ForMachine(f.Machine)
		for _, c := range cases {
			got, err := fetchIn(f, isa, c.fn, c.arg, c.ret)
			want := c.amd
			if isa == arch.ARM64 {
				want = c.arm64
			}
			if err != nil || got != want {
				t.Errorf("%s %s %q: got %q, %v; want %q", goarch, c.fn, c.arg, got, err, want)
			}
		}
		for _, c := range []struct{ fn, arg, want string }{
			{"main.floats", "x", "floating-point register, which a probe cannot read"},
			{"main.ptrs", "t.Nope", "has no field Nope"},
			{"main.ptrs", "t", "t=%"},
			{"main.ptrs", "*t", ""},
			{"main.strs", "s:u32", "cast one of its fields"},
			{"main.ptrs", "t.Tags", "Tags_array="},
			{"main.slices", "c[1].x", "has no field x"},
		} {
			got, err := fetchIn(f, isa, c.fn, c.arg, false)
			msg := got
			if err != nil {
				msg = err.Error()
			}
			if c.want != "" && !strings.Contains(msg, c.want) {
				t.Errorf("%s %s %q: got %q, want it to hold %q", goarch, c.fn, c.arg, msg, c.want)
			}
		}
	}
}

// fetchIn fetches arg (perf's argument syntax) in function fn of f: a
// parameter at the entry, or with ret a result by the ABI.
func fetchIn(f *dwarfinfo.File, isa arch.Arch, fn, arg string, ret bool) (string, error) {
	refs, err := f.FindFuncs(dwarfinfo.ExactName(fn), true)
	if err != nil || len(refs) == 0 {
		return "", fmt.Errorf("no %s: %v", fn, err)
	}
	cu, err := f.Unit(refs[0].Unit)
	if err != nil {
		return "", err
	}
	a, err := spec.ParseArg(arg)
	if err != nil {
		return "", err
	}
	ts := NewTypes(cu)
	args, results, err := funcParams(cu, refs[0].Offset)
	if err != nil {
		return "", err
	}
	name := a.Var
	if a.HasName && a.Name != "" {
		name = a.Name
	}
	name = strings.TrimPrefix(name, "~")
	var pl Place
	var ty *Type
	if ret {
		var ats, rts []*Type
		for _, e := range args {
			t, err := ts.TypeOf(e)
			if err != nil {
				return "", err
			}
			ats = append(ats, t)
		}
		idx := -1
		for i, e := range results {
			t, err := ts.TypeOf(e)
			if err != nil {
				return "", err
			}
			rts = append(rts, t)
			if ts.Name(e) == a.Var {
				idx = i
			}
		}
		if idx < 0 {
			return "", fmt.Errorf("no result %s", a.Var)
		}
		sp := cu.Scopes[refs[0].Offset]
		fr, err := Assign(isa, ts, Signature{Dict: DictOf(sp.Name), Args: ats, Results: rts})
		if err != nil {
			return "", err
		}
		pl, ty = PlaceOfParts(isa, fr.Results[idx]), rts[idx]
	} else {
		var e *dwarf.Entry
		for _, p := range args {
			if ts.Name(p) == a.Var {
				e = p
			}
		}
		if e == nil {
			return "", fmt.Errorf("no argument %s", a.Var)
		}
		entry, _ := cu.Scopes[refs[0].Offset].LowestPC()
		expr, ok, err := cu.Location(e.AttrField(dwarf.AttrLocation), entry)
		if err != nil || !ok {
			return "", fmt.Errorf("%s has no location at the entry: %v", a.Var, err)
		}
		cfa := cfaAtEntry(isa)
		ps, err := dwarfexpr.Pieces(expr, isa, cfa, cfa, 8)
		if err != nil {
			return "", err
		}
		if ty, err = ts.TypeOf(e); err != nil {
			return "", err
		}
		if pl, err = ts.PlaceOfPieces(ty, ps); err != nil {
			return "", err
		}
		if ty, err = ts.TypeOf(e); err != nil {
			return "", err
		}
	}
	label := name
	if len(a.Fields) > 0 {
		name = a.Name
	}
	out, err := ts.Fetch(ty, pl, Request{Name: name, Label: label, Fields: a.Fields, Type: a.Type, HasType: a.HasType, Hex: true})
	if err != nil {
		return "", err
	}
	var parts []string
	for _, fa := range out {
		parts = append(parts, fa.String())
	}
	return strings.Join(parts, " "), nil
}

// TestFetchAgreesWithPerf asks perf probe 6.1 for the arguments it reads
// right in Go code, at each function's entry: every integer and pointer
// argument of the program's functions (in a register or on the stack),
// and every integer and pointer field reached through a pointer
// argument. The fetch must be the same, the type too where perf writes
// one (perf writes none for a pointer, whose Go DWARF type has no size;
// gprobe writes x64).
func TestFetchAgreesWithPerf(t *testing.T) {
	perf := testenv.RequirePerf(t)
	f := openValues(t, "amd64")
	refs, err := f.FindFuncs(func(n []byte) bool { return strings.HasPrefix(string(n), "main.") }, false)
	if err != nil {
		t.Fatal(err)
	}
	type question struct{ fn, arg string }
	var qs []question
	for _, r := range refs {
		cu, err := f.Unit(r.Unit)
		if err != nil {
			t.Fatal(err)
		}
		sp := cu.Scopes[r.Offset]
		if _, ok := sp.LowestPC(); !ok || DictOf(sp.Name) != NoDict {
			continue
		}
		ts := NewTypes(cu)
		args, _, err := funcParams(cu, r.Offset)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range args {
			ty, err := ts.TypeOf(a)
			if err != nil {
				t.Fatal(err)
			}
			name := ts.Name(a)
			if ty.Kind.integer() || ty.Kind == Pointer {
				qs = append(qs, question{sp.Name, name})
			}
			if ty.Kind != Pointer || ty.Elem == 0 {
				continue
			}
			st, err := ts.At(ty.Elem)
			if err != nil {
				t.Fatal(err)
			}
			for _, fl := range st.Fields {
				ft, err := ts.At(fl.Type)
				if err != nil {
					t.Fatal(err)
				}
				if ft.Kind.integer() || ft.Kind == Pointer {
					qs = append(qs, question{sp.Name, name + "->" + fl.Name})
				}
			}
		}
	}
	same, refused := 0, 0
	for _, q := range qs {
		spec := q.fn + " " + q.arg
		pr := perf.Probe("-x", f.Path, "-D", spec)
		if pr.Code != 0 {
			refused++ // perf refuses it (a stack argument: DW_OP_call_frame_cfa)
			t.Logf("perf refuses %q: %s", spec, firstLineOf(pr.Stderr))
			continue
		}
		line := strings.TrimSpace(pr.Stdout)
		fields := strings.Fields(line)
		want := fields[len(fields)-1]
		got, err := fetchIn(f, arch.AMD64, q.fn, q.arg, false)
		if err != nil {
			t.Errorf("%q: perf answers %s, gprobe: %v", spec, want, err)
			continue
		}
		if !strings.Contains(want, ":") && strings.HasSuffix(got, ":x64") {
			got = strings.TrimSuffix(got, ":x64") // perf types no pointer
		}
		if got != want {
			t.Errorf("%q: perf answers %s, gprobe %s", spec, want, got)
			continue
		}
		same++
	}
	t.Logf("%d questions: %d answers agree, perf refuses %d", len(qs), same, refused)
	if same < 20 {
		t.Errorf("only %d answers compared", same)
	}
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
