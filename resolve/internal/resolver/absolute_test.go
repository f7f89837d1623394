package resolver

import (
	"debug/elf"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// symbolOffset is the file offset and size of the function name in bin.
func symbolOffset(t *testing.T, bin, name string) (uint64, uint64) {
	t.Helper()
	sym, off := testenv.FuncSymbol(t, bin, name)
	return off, sym.Size
}

func userResolver(t *testing.T, bin string) *Resolver {
	t.Helper()
	f, err := dwarfinfo.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := testNew(f, true, testOpts{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// An absolute address of a user binary is a file offset, as uprobe_events
// takes it: named abs_OFF, checked to be an instruction start in the
// binary's code.
func TestAbsoluteUser(t *testing.T) {
	bin := testenv.BuildC(t, "gcc", "../../../cmd/gprobe/testdata/uprobe/magic.c", "magic", "-O2", "-g")
	if m := elfMachine(t, bin); m != elf.EM_X86_64 {
		t.Skipf("magic.c's instruction layout is x86-64's, this is %v", m)
	}
	off, size := symbolOffset(t, bin, "magic")
	if size != 6 {
		t.Fatalf("magic is %d bytes, want mov $imm32,%%eax (5) and ret (1)", size)
	}
	r := userResolver(t, bin)
	for _, c := range []struct {
		def, want string
		err       error
		msg       string
	}{
		{def: fmt.Sprintf("0x%x", off), want: fmt.Sprintf("p:probe_magic/abs_%x %s:0x%x", off, bin, off)},
		{def: fmt.Sprintf("0x%x%%return", off), want: fmt.Sprintf("r:probe_magic/abs_%x__return %s:0x%x", off, bin, off)},
		{def: fmt.Sprintf("g:e=0x%x %%ax x=+8(%%sp):u32", off), want: fmt.Sprintf("p:g/e %s:0x%x %%ax x=+8(%%sp):u32", bin, off)},
		// +OFF moves the address (perf drops it).
		{def: fmt.Sprintf("0x%x+5", off), want: fmt.Sprintf("p:probe_magic/abs_%x %s:0x%x", off+5, bin, off+5)},
		{def: fmt.Sprintf("0x%x", off+1), err: core.ErrNotBoundary, msg: "magic+1 is not an instruction boundary: it is inside the 5-byte instruction at magic+0 (mov $0x12345678,%eax); a uprobe there would never fire"},
		{def: "0x1", err: core.ErrInvalid, msg: "0x1 is not in the code of " + bin},
		{def: "0xffffffffff", err: core.ErrInvalid, msg: "is not in the code of"},
		{def: fmt.Sprintf("0x%x n", off), err: core.ErrNotFound, msg: "is an absolute address: it has no variables in scope (n)"},
		// A line needs DWARF, which has no function named 0x...: perf's
		// "not found".
		{def: fmt.Sprintf("0x%x:3", off), err: core.ErrNotFound},
	} {
		got, err := definitions(t, r, c.def)
		switch {
		case c.err != nil && !errors.Is(err, c.err):
			t.Errorf("%s: err %v, want %v", c.def, err, c.err)
		case c.err != nil && !strings.Contains(fmt.Sprint(err), c.msg):
			t.Errorf("%s: message %q, want it to contain %q", c.def, err, c.msg)
		case c.err == nil && (err != nil || strings.Join(got, "\n") != c.want):
			t.Errorf("%s: %q, %v; want %q", c.def, got, err, c.want)
		}
	}
}

// A kernel address is checked against the image's .text and decoded.
func TestAbsoluteKernel(t *testing.T) {
	var warned []string
	r := resolver(t, testOpts{})
	r.im.Opts.Warn = func(s string) { warned = append(warned, s) }
	f, err := elf.Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text := f.Section(".text")
	sym, _ := testenv.FuncSymbol(t, fixture, "vfs_read")
	a := sym.Value // a 5-byte call to __fentry__ starts vfs_read
	if got, err := definitions(t, r, fmt.Sprintf("0x%x", a+5)); err != nil || len(got) != 1 || got[0] != fmt.Sprintf("p:probe/abs_%x 0x%x", a+5, a+5) {
		t.Errorf("vfs_read+5: %q, %v", got, err)
	}
	if _, err := definitions(t, r, fmt.Sprintf("0x%x", a+1)); !errors.Is(err, core.ErrNotBoundary) || !strings.Contains(err.Error(), "the kernel would reject it with EILSEQ") {
		t.Errorf("vfs_read+1: %v, want the boundary refusal", err)
	}
	for _, out := range []uint64{text.Addr, text.Addr + text.Size + 1, 0x10} {
		warned = nil
		_, err := definitions(t, r, fmt.Sprintf("0x%x", out))
		if !errors.Is(err, core.ErrNotFound) || len(warned) != 1 || warned[0] != fmt.Sprintf("0x%x is out of .text, skip it.", out) {
			t.Errorf("0x%x (out of .text): %v, warnings %q", out, err, warned)
		}
	}
}

func elfMachine(t *testing.T, path string) elf.Machine {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.Machine
}

// A global of a user binary is fetched at its file offset relative to
// .text's mapping (@+OFF), members folded in; perf's @NAME+OFF the kernel
// refuses for uprobes (cmd/gprobe's TestUprobeGlobals reads the values
// for real).
func TestUprobeGlobalsAtFileOffsets(t *testing.T) {
	for _, flag := range []string{"-pie", "-no-pie"} {
		bin := testenv.BuildC(t, "gcc", "../../../cmd/gprobe/testdata/uprobe/globals.c", "globals"+flag, "-O2", "-g", flag)
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		text := f.Section(".text")
		syms, _ := f.Symbols()
		f.Close()
		off := func(name string, plus uint64) string {
			for _, s := range syms {
				if s.Name == name {
					return fmt.Sprintf("@+0x%x", s.Value-(text.Addr-text.Offset)+plus)
				}
			}
			t.Fatalf("%s: no symbol %s", bin, name)
			return ""
		}
		_, tick := testenv.FuncSymbol(t, bin, "tick")
		got, err := definitions(t, userResolver(t, bin), "tick gcount gstat gpt.y gptr->x gname:string")
		want := fmt.Sprintf("p:probe_globals/tick %s:0x%x gcount=%s:s32 gstat=%s:s16 y=%s:s32 x=+0(%s):s32 gname_string=%s:string",
			bin, tick, off("gcount", 0), off("gstat", 0), off("gpt", 4), off("gptr", 0), off("gname", 0))
		if err != nil || len(got) != 1 || got[0] != want {
			t.Errorf("%s: %q, %v\nwant %q", flag, got, err, want)
		}
	}
}
