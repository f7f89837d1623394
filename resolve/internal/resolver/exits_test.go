package resolver

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/disasm"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/internal/btfinfo"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/internal/exits"
	"github.com/gprobe/gprobe/resolve/spec"
)

func openResolver(t *testing.T, path string, user bool, opts testOpts) *Resolver {
	t.Helper()
	f, err := dwarfinfo.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := testNew(f, user, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func exitsOf(t *testing.T, r *Resolver, fn string) []exits.FuncExits {
	t.Helper()
	p, err := spec.ParseProbe(fn)
	if err != nil {
		t.Fatal(err)
	}
	fe, err := r.Exits(&p.Point)
	if err != nil {
		t.Fatalf("Exits(%s): %v", fn, err)
	}
	return fe
}

// The listing: every instance, its parts found through DWARF (the .cold
// part of fd_install), source lines, and the refused exits marked.
func TestExitsListing(t *testing.T) {
	r := resolver(t, testOpts{})
	var got strings.Builder
	for _, fn := range []string{"fd_install", "fput", "account_io"} {
		for _, f := range exitsOf(t, r, fn) {
			got.WriteString(f.String())
		}
	}
	want := `<fd_install@0xffffffff81001350 fs/open.c:46> 2 exits
  fd_install+40       tailcall       jmpq account_io         fs/open.c:53
  fd_install.cold+20  tailcall       jmpq warn_slowpath_fmt  fs/open.c:49
<fput@0xffffffff810020e0 fs/read_write.c:153> 2 exits, 1 that --ret-insn cannot probe (!)
! fput+44  indirect-jump  jmp *%rax  fs/read_write.c:156
  fput+52  return         retq       fs/read_write.c:157
<account_io@0xffffffff810012e0 fs/open.c:20> 1 exit
  account_io+13  return         retq  fs/open.c:25
<account_io@0xffffffff81001d60 fs/read_write.c:28> 1 exit
  account_io+33  return         retq  fs/read_write.c:35
`
	if got.String() != want {
		t.Errorf("listing:\n%s\nwant\n%s", got.String(), want)
	}
}

func TestReturnInsnDefinitions(t *testing.T) {
	const arm64 = "../../../testdata/vmlinux-fixtures/arm64-dwarf5-O2.elf"
	for _, c := range []struct {
		path  string
		multi bool
		def   string
		want  string
	}{
		{fixture, true, "vfs_read%return $retval", `p:probe/vfs_read__retinsn vfs_read+178 %ax
p:probe/vfs_read__retinsn vfs_read+343 %ax
p:probe/vfs_read__retinsn vfs_read+359 %ax`},
		{fixture, false, "vfs_read%return r=$retval:s64", `p:probe/vfs_read__retinsn vfs_read+178 r=%ax:s64
p:probe/vfs_read__retinsn_1 vfs_read+343 r=%ax:s64
p:probe/vfs_read__retinsn_2 vfs_read+359 r=%ax:s64`},
		// No $retval at a tail call: the callee has not returned yet.
		{fixture, true, "fd_install%return $retval c=$comm", `p:probe/fd_install__tailcall fd_install+40 c=$comm
p:probe/fd_install__tailcall fd_install.cold+20 c=$comm`},
		{fixture, true, "myev=sys_read%return $retval", `p:probe/myev__tailcall sys_read+13`},
		// Returns first, then tail calls: one event's lines stay together.
		{fixture, true, "exit_notify*%return $retval", `p:probe/exit_notify__retinsn exit_notify.constprop.0.isra.0+148 %ax
p:probe/exit_notify__tailcall exit_notify.constprop.0.isra.0+136`},
		{fixture, true, "grp:acct=account_io%return +8($retval):u32", `p:grp/acct__retinsn account_io+13 +8(%ax):u32
p:grp/acct__retinsn account_io+33 +8(%ax):u32`},
		// A glob: each function its own events; sys_exit never returns.
		{fixture, true, "sys_[cefr]*%return", `p:probe/sys_clone__retinsn sys_clone+127
p:probe/sys_fork__retinsn sys_fork+66
p:probe/sys_read__tailcall sys_read+13
p:probe/sys_execve__retinsn sys_execve+44`},
		{arm64, true, "vfs_read%return $retval", `p:probe/vfs_read__retinsn vfs_read+164 %x0
p:probe/vfs_read__retinsn vfs_read+288 %x0`},
		{arm64, true, "sys_read%return", `p:probe/sys_read__tailcall sys_read+0`},
	} {
		r := openResolver(t, c.path, false, testOpts{ReturnInsn: true, Features: probedef.Features{MultiProbe: c.multi}})
		got, err := definitions(t, r, c.def)
		if err != nil {
			t.Errorf("%s: %v", c.def, err)
			continue
		}
		if g := strings.Join(got, "\n"); g != c.want {
			t.Errorf("%s (multi-probe %v):\n%s\nwant\n%s", c.def, c.multi, g, c.want)
		}
	}
}

func TestReturnInsnRefusals(t *testing.T) {
	r := resolver(t, testOpts{ReturnInsn: true})
	for _, c := range []struct {
		def      string
		sentinel error
		text     string
	}{
		{"fput%return $retval", exits.ErrExits, "fput leaves by 1 exit(s) a probe cannot catch exactly, so return-instruction probes would miss returns:\n  fput+44  indirect-jump  jmp *%rax\n"},
		{"fput%return", core.ErrUnsupported, "--ret-insn -L fput lists every exit."},
		{"vfs_read", core.ErrInvalid, "write FUNC%return, not vfs_read."},
		{"vfs_read:3", core.ErrInvalid, "not vfs_read:3"},
		{"do_exit%return", core.ErrNotFound, "do_exit has no exit to probe"},
		{"nosuch%return", core.ErrNotFound, "Failed to find function nosuch in kernel"},
	} {
		_, err := definitions(t, r, c.def)
		if !errors.Is(err, c.sentinel) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v; want %v with %q", c.def, err, c.sentinel, c.text)
		}
	}
	var ee *exits.ExitsError
	if _, err := definitions(t, r, "fput%return"); !errors.As(err, &ee) || len(ee.Exits) != 1 || ee.Exits[0].Kind != disasm.IndirectJump {
		t.Errorf("fput: %v", err)
	}
	// BTF alone has no code.
	btf, err := btfinfo.Load(fixture)
	if err != nil {
		t.Fatal(err)
	}
	nb, err := testNew(nil, false, testOpts{ReturnInsn: true, BTF: btf})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := spec.ParseProbe("vfs_read%return")
	if _, err := nb.Probes(p); !errors.Is(err, core.ErrNeedsDWARF) {
		t.Errorf("BTF only: %v", err)
	}
}

// On Debian's 6.1 and 6.12 kernels (return thunks, retpolines, static
// calls), every jump to __x86_return_thunk objtool listed in .return_sites
// is a return of its function, every jump to an __x86_indirect_thunk_*
// listed in .retpoline_sites is a tail call, and exactly the tail calls
// through static call trampolines are refused, for the functions of the
// read and open paths.
func TestExitsOnDebianKernels(t *testing.T) {
	for _, k := range []*testenv.Kernel{testenv.Linux61, testenv.Linux612} {
		t.Run(k.Release, func(t *testing.T) {
			vmlinux, _ := testenv.RequireVmlinux(t, k)
			ef, err := elf.Open(vmlinux)
			if err != nil {
				t.Fatal(err)
			}
			defer ef.Close()
			sites := func(name string) []uint64 {
				s := ef.Section(name)
				if s == nil {
					t.Fatalf("no %s", name)
				}
				b, err := s.Data()
				if err != nil {
					t.Fatal(err)
				}
				var out []uint64
				for i := 0; i+4 <= len(b); i += 4 {
					out = append(out, s.Addr+uint64(i)+uint64(int64(int32(binary.LittleEndian.Uint32(b[i:])))))
				}
				return out
			}
			returns, retpolines := sites(".return_sites"), sites(".retpoline_sites")
			syms, err := ef.Symbols()
			if err != nil {
				t.Fatal(err)
			}
			text := ef.Section(".text")
			r := openResolver(t, vmlinux, false, testOpts{MaxProbes: 1000})
			total := map[disasm.ExitKind]int{}
			static := 0
			for _, glob := range []string{"vfs_*", "ksys_*", "do_sys_open*", "getname*", "fd_install", "do_filp_open", "path_openat", "filp_close", "security_file_*"} {
				for _, f := range exitsOf(t, r, glob) {
					var thunkReturns, thunkTails []uint64
					for _, e := range f.Exits {
						total[e.Kind]++
						switch {
						case e.Kind == disasm.Return && e.TargetName == "__x86_return_thunk":
							thunkReturns = append(thunkReturns, e.Addr)
						case e.Kind == disasm.TailCall && strings.HasPrefix(e.TargetName, "__x86_indirect_thunk_"):
							thunkTails = append(thunkTails, e.Addr)
						case e.Kind == disasm.Return:
							t.Errorf("%s: %s returns without the thunk: %s", f.Symbol, e.Place(), e.Insn())
						}
						// A tail call through a static call trampoline is a
						// static call site, where kprobes are refused.
						if sct := strings.HasPrefix(e.TargetName, "__SCT__"); sct != (e.Refused != "") {
							t.Errorf("%s: %s (%s) refused %q", f.Symbol, e.Place(), e.Insn(), e.Refused)
						} else if sct {
							static++
						}
					}
					// The sites in the function's own symbol (objtool's lists
					// cover its .cold part too, which is another symbol).
					lo, hi := symbolRange(t, syms, f.Symbol, f.Addr)
					in := func(all []uint64) []uint64 {
						var out []uint64
						for _, a := range all {
							if lo <= a && a < hi {
								out = append(out, a)
							}
						}
						slices.Sort(out)
						return out
					}
					if w, g := in(returns), in(thunkReturns); !slices.Equal(w, g) {
						t.Errorf("%s: return thunk jumps %x, .return_sites %x", f.Symbol, g, w)
					}
					var jumps []uint64 // .retpoline_sites lists calls and jumps (cs-prefixed or not)
					for _, a := range in(retpolines) {
						b := make([]byte, 2)
						if _, err := text.ReadAt(b, int64(a-text.Addr)); err == nil && (b[0] == 0xe9 || b[0] == 0x2e && b[1] == 0xe9) {
							jumps = append(jumps, a)
						}
					}
					if g := in(thunkTails); !slices.Equal(jumps, g) {
						t.Errorf("%s: indirect tail calls %x, .retpoline_sites jumps %x", f.Symbol, g, jumps)
					}
				}
			}
			t.Logf("exits by kind: %v; %d at static call sites", total, static)
			if total[disasm.Return] < 30 || total[disasm.TailCall] == 0 {
				t.Errorf("too few exits checked: %v", total)
			}
		})
	}
}

// symbolRange is the [start, end) of the symbol name at addr.
func symbolRange(t *testing.T, syms []elf.Symbol, name string, addr uint64) (uint64, uint64) {
	t.Helper()
	for _, s := range syms {
		if s.Name == name && s.Value == addr {
			return s.Value, s.Value + s.Size
		}
	}
	t.Fatalf("no symbol %s at %#x", name, addr)
	return 0, 0
}
