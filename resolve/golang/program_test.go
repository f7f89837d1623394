package golang

import (
	"debug/elf"
	"errors"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/disasm"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/dwarfinfo"
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
		arch, _ := disasm.ArchForMachine(f.Machine)
		g := "r14"
		if arch == disasm.ARM64 {
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
		want := map[disasm.Arch]string{disasm.AMD64: "s=+0(%ax):string s_len=%bx:s64", disasm.ARM64: "s=+0(%x0):string s_len=%x1:s64"}[arch]
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
		wantRet := map[disasm.Arch]string{disasm.AMD64: "count=%ax:s64 err_tab=%bx:x64 err_data=%cx:x64", disasm.ARM64: "count=%x0:s64 err_tab=%x1:x64 err_data=%x2:x64"}[arch]
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
