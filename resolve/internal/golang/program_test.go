package golang

import (
	"debug/elf"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/spec"
)

// function opens the Go function name of p's program; with several of
// that name (an ABI0 body and its wrapper), the one whose symbol ends
// with suffix.
func function(t *testing.T, p *Program, f *dwarfinfo.File, name string, suffix ...string) *Function {
	t.Helper()
	refs, err := f.FindFuncs(dwarfinfo.ExactName(name), false)
	if err != nil || len(refs) == 0 {
		t.Fatalf("no %s: %v", name, err)
	}
	for _, ref := range refs {
		cu, err := f.Unit(ref.Unit)
		if err != nil {
			t.Fatal(err)
		}
		sp := cu.Scopes[ref.Offset]
		entry, ok := sp.LowestPC()
		if !ok {
			continue
		}
		sym := ""
		for _, s := range testenv.ELFSymbols(t, f.Path) {
			if s.Value == entry && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
				sym = s.Name
			}
		}
		if len(suffix) > 0 && !strings.HasSuffix(sym, suffix[0]) {
			continue
		}
		fn, err := p.Function(cu, sp, sym)
		if err != nil {
			t.Fatal(err)
		}
		return fn
	}
	t.Fatalf("no %s with a symbol ending %q", name, suffix)
	return nil
}

func render(args []probe.FetchArg) string {
	var parts []string
	for _, a := range args {
		parts = append(parts, a.String())
	}
	return strings.Join(parts, " ")
}

func request(t *testing.T, arg string) (string, Request) {
	a, err := spec.ParseArg(arg)
	if err != nil {
		t.Fatal(err)
	}
	name := a.Var
	if a.HasName || len(a.Fields) > 0 {
		name = a.Name
	}
	return a.Var, Request{Name: name, Fields: a.Fields, Type: a.Type, HasType: a.HasType, Hex: true}
}

// TestProgram asks a Go program what the resolver asks: the entry after
// the stack check, values there, results at the returns, the goroutine.
func TestProgram(t *testing.T) {
	for _, goarch := range goarches {
		f := openValues(t, goarch)
		p, err := NewProgram(f)
		if err != nil {
			t.Fatal(err)
		}
		if p.Version != runtime.Version() || p.stackABI {
			t.Errorf("%s: built by %q (stack ABI %v), want %s", goarch, p.Version, p.stackABI, runtime.Version())
		}
		isa, _ := arch.ForMachine(f.Machine)
		g := "r14"
		if isa == arch.ARM64 {
			g = "x28"
		}

		huge := function(t, p, f, "main.huge")
		if huge.Check == nil || huge.Body != huge.Entry+uint64(huge.Check.End) || huge.Body == huge.Entry {
			t.Errorf("%s main.huge: entry %#x body %#x check %+v", goarch, huge.Entry, huge.Body, huge.Check)
		}
		// The argument is where the DWARF says at the body, as at the entry.
		name, r := request(t, "n")
		if got, err := huge.Var(name, huge.Body, r); err != nil || !strings.HasPrefix(render(got), "n=%") {
			t.Errorf("%s main.huge n at the body: %s, %v", goarch, render(got), err)
		}
		small := function(t, p, f, "main.small")
		if small.Check != nil || small.Body != small.Entry {
			t.Errorf("%s main.small (no check): %+v", goarch, small)
		}

		strs := function(t, p, f, "main.strs")
		name, r = request(t, "s:string")
		got, err := strs.Var(name, strs.Body, r)
		want := map[arch.Arch]string{arch.AMD64: "s=+0(%ax):string s_len=%bx:s64", arch.ARM64: "s=+0(%x0):string s_len=%x1:s64"}[isa]
		if err != nil || render(got) != want {
			t.Errorf("%s main.strs s:string = %s, %v; want %s", goarch, render(got), err, want)
		}
		if goid, err := strs.Goid(); err != nil || !strings.HasPrefix(goid.String(), "goid=+") || !strings.HasSuffix(goid.String(), "(%"+g+"):u64") {
			t.Errorf("%s $goid = %s, %v", goarch, goid.String(), err)
		}
		pair, err := strs.Pairing([]probe.FetchArg{{Name: "goid"}})
		if err != nil || len(pair) != 2 || pair[0].Name != "go_sp" || !strings.HasPrefix(pair[1].String(), "go_hi=+8(%"+g+")") {
			t.Errorf("%s pairing: %s, %v", goarch, render(pair), err)
		}

		named := function(t, p, f, "main.named")
		if ps, err := named.Params(); err != nil || strings.Join(ps, ",") != "n" {
			t.Errorf("%s main.named params %v, %v", goarch, ps, err)
		}
		if rs, err := named.Results(); err != nil || strings.Join(rs, ",") != "count,err" {
			t.Errorf("%s main.named results %v, %v", goarch, rs, err)
		}
		_, r = request(t, "$retval")
		r.Name = ""
		ret, err := named.Retval(r)
		wantRet := map[arch.Arch]string{arch.AMD64: "count=%ax:s64 err_tab=%bx:x64 err_data=%cx:x64", arch.ARM64: "count=%x0:s64 err_tab=%x1:x64 err_data=%x2:x64"}[isa]
		if err != nil || render(ret) != wantRet {
			t.Errorf("%s main.named $retval = %s, %v; want %s", goarch, render(ret), err, wantRet)
		}
		r.Name = "ret"
		if ret, err := named.Retval(r); err != nil || !strings.HasPrefix(render(ret), "ret_count=") {
			t.Errorf("%s main.named ret=$retval = %s, %v", goarch, render(ret), err)
		}
		if _, err := named.Var("count", named.Body, Request{Name: "count"}); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "only at the returns") {
			t.Errorf("%s a result at the entry: %v", goarch, err)
		}
		sr := function(t, p, f, "main.strresult")
		if ret, err := sr.Retval(Request{Type: "string", HasType: true, Hex: true}); err != nil || !strings.Contains(render(ret), "r0_len=") {
			t.Errorf("%s main.strresult $retval:string = %s, %v", goarch, render(ret), err)
		}
		if _, err := sr.Var("nosuch", sr.Body, Request{Name: "nosuch"}); !errors.Is(err, ErrNoField) {
			t.Errorf("%s a missing variable: %v", goarch, err)
		}

		// Assembly and ABI0 bodies do not keep g in its register.
		for _, name := range []string{"runtime.memmove", "internal/bytealg.IndexByteString", "reflect.callMethod"} {
			fn := function(t, p, f, name, map[bool]string{true: ".abi0"}[name == "reflect.callMethod"])
			if fn.KeepsG() {
				t.Errorf("%s %s (%s, %s) keeps g?", goarch, name, fn.DeclFile, fn.Symbol)
				continue
			}
			if _, err := fn.Goid(); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "$goid reads the running goroutine through %"+g) {
				t.Errorf("%s $goid in %s: %v", goarch, name, err)
			}
			if pair, err := fn.Pairing(nil); pair != nil || err != nil {
				t.Errorf("%s pairing in %s: %v, %v", goarch, name, pair, err)
			}
		}
	}
	// A C image is no Go program.
	fx := fixtures(t)
	cf, err := dwarfinfo.Open(fx[0])
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	if _, err := NewProgram(cf); !errors.Is(err, ErrNotGo) {
		t.Errorf("a C image: %v", err)
	}
}

// TestArgs converts whole argument lists as the resolver hands them over.
func TestArgs(t *testing.T) {
	f := openValues(t, "amd64")
	p, err := NewProgram(f)
	if err != nil {
		t.Fatal(err)
	}
	parse := func(args ...string) []spec.Arg {
		var out []spec.Arg
		for _, s := range args {
			a, err := spec.ParseArg(s)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, *a)
		}
		return out
	}
	for _, c := range []struct {
		fn   string
		ret  bool
		args []string
		want string
	}{
		{"main.strs", false, []string{"s:string", "n", "$goid", "%ax", "k=n:u32"},
			"s_string=+0(%ax):string s_string_len=%bx:s64 n=%cx:s64 goid=+152(%r14):u64 %ax k=%cx:u32"},
		{"main.strs", false, []string{"$params"}, "s_str=%ax:x64 s_len=%bx:s64 n=%cx:s64"},
		{"main.named", false, []string{"$params"}, "n=%ax:s64"},
		{"main.named", true, []string{"$retval"}, "count=%ax:s64 err_tab=%bx:x64 err_data=%cx:x64"},
		{"main.named", true, []string{"err.data", "c=count"}, "data=%cx:x64 c=%ax:s64"},
		{"main.results", true, []string{"~r0", "~r1.tab", "x=~r1"}, "r0=%ax:s64 tab=%bx:x64 x_tab=%bx:x64 x_data=%cx:x64"},
		{"main.strresult", true, []string{"$retval:string"}, "r0=+0(%ax):string r0_len=%bx:s64"},
		{"main.strresult", true, []string{"w=$retval:string"}, "w=+0(%ax):string w_len=%bx:s64"},
		{"main.ptrs", false, []string{"t.Name:string", "t.Next.N"}, "Name=+0(+0(%ax)):string Name_len=+8(%ax):s64 N=+16(+48(%ax)):s64"},
	} {
		fn := function(t, p, f, c.fn)
		addr := fn.Body
		got, err := fn.Args(addr, parse(c.args...), ArgsOptions{Return: c.ret, Hex: true})
		if err != nil || render(got) != c.want {
			t.Errorf("%s %q: got %q, %v\nwant %q", c.fn, c.args, render(got), err, c.want)
		}
	}
	for _, c := range []struct {
		fn, arg, want string
	}{
		{"main.named", "$retval", "only available at a return"},
		{"main.named", "~r0", "only at the returns"},
		{"main.named", "count", "only at the returns"},
		{"runtime.memmove", "$goid", "is assembly"},
	} {
		fn := function(t, p, f, c.fn)
		if _, err := fn.Args(fn.Body, parse(c.arg), ArgsOptions{Hex: true}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q at the entry: %v, want %q", c.fn, c.arg, err, c.want)
		}
	}
}
