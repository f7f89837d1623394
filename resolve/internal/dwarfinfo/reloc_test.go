package dwarfinfo

import (
	"bytes"
	"debug/elf"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

// A relocatable file's debug sections refer to code through relocations
// against section and function symbols. After relocation, every function
// DIE's entry address must be the address of the function's symbol in the
// section layout, and every function's entry must have a line row: if a
// relocation were missed or applied against the wrong base, the two
// independent sources (symbol table plus layout, relocated DWARF) would
// disagree.
func checkFunctionsAgainstSymbols(t *testing.T, f *File, minFuncs int) {
	t.Helper()
	if !f.IsRelocatable() {
		t.Fatalf("%s: not relocatable", f.Path)
	}
	syms := map[string][]uint64{}
	if err := f.Symbols(func(s Symbol) {
		if s.Type == elf.STT_FUNC && s.Sect != elf.SHN_UNDEF {
			syms[s.Name()] = append(syms[s.Name()], s.Value)
		}
	}); err != nil {
		t.Fatal(err)
	}
	refs, err := f.FindFuncs(func([]byte) bool { return true }, false)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	var cu *CU
	for _, ref := range refs {
		if cu == nil || cu.Index != ref.Unit {
			if cu, err = f.Unit(ref.Unit); err != nil {
				t.Fatal(err)
			}
		}
		sp := cu.Scopes[ref.Offset]
		if sp == nil || !sp.HasEntryPC || len(sp.Ranges) == 0 {
			continue // inline-only or declaration
		}
		addrs, ok := syms[sp.Name]
		if !ok {
			continue // a clone (.isra, .constprop) carries another name
		}
		found := false
		for _, a := range addrs {
			found = found || a == sp.EntryPC
		}
		if !found {
			t.Errorf("%s: %s: DWARF entry %#x, symbol at %#x", f.Path, sp.Name, sp.EntryPC, addrs)
			continue
		}
		if _, _, ok := cu.Lines.LineInfo(sp.EntryPC); !ok {
			t.Errorf("%s: %s: no line row at its entry %#x", f.Path, sp.Name, sp.EntryPC)
		}
		checked++
	}
	if checked < minFuncs {
		t.Errorf("%s: only %d functions checked, want at least %d", f.Path, checked, minFuncs)
	}
}

// relocSource has functions in several sections (as a module's .text,
// .init.text and .exit.text), so that section-relative addresses collide
// unless the layout separates them.
const relocSource = `
static int counter;
__attribute__((section(".init.text"), noinline)) int init_fn(int x) { counter += x; return counter * 3; }
__attribute__((section(".exit.text"), noinline)) void exit_fn(void) { counter = 0; }
__attribute__((noinline)) int text_fn(int a, int b) { int r = a; for (int i = 0; i < b; i++) r = r * 7 + i; return r + counter; }
__attribute__((noinline, cold)) int cold_fn(int a) { return a * 5 - counter; }
int other_fn(int a) { return text_fn(a, 3) + cold_fn(a) + init_fn(a); }
`

func compileObjects(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "m.c")
	if err := os.WriteFile(src, []byte(relocSource), 0o644); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, cc := range []struct{ tool, name string }{{"gcc", "x86_64"}, {"aarch64-linux-gnu-gcc", "arm64"}} {
		testenv.Tool(t, cc.tool)
		for _, dw := range []string{"-gdwarf-4", "-gdwarf-5"} {
			for _, opt := range []string{"-O0", "-O2"} {
				obj := filepath.Join(dir, cc.name+dw+opt+".o")
				cmd := exec.Command(cc.tool, "-c", dw, opt, "-ffunction-sections", "-o", obj, src)
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", cmd, err, b)
				}
				out = append(out, obj)
			}
		}
	}
	if len(out) == 0 {
		t.Skip("no C compiler")
	}
	return out
}

func TestRelocatedObjects(t *testing.T) {
	for _, obj := range compileObjects(t) {
		t.Run(filepath.Base(obj), func(t *testing.T) {
			f := open(t, obj)
			checkFunctionsAgainstSymbols(t, f, 5)
			// The functions' sections must not overlap in the layout.
			seen := map[uint64]string{}
			_ = f.Symbols(func(s Symbol) {
				if s.Type == elf.STT_FUNC {
					if prev, dup := seen[s.Value]; dup {
						t.Errorf("%s and %s share address %#x", prev, s.Name(), s.Value)
					}
					seen[s.Value] = s.Name()
				}
			})
		})
	}
}

// debugModules are the Debian debug modules scripts/provision.sh caches.
func debugModules(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join(testenv.Linux61.Dir(), "modules/debug")
	var out []string
	for _, m := range []string{"drivers/block/loop.ko", "fs/isofs/isofs.ko", "net/netfilter/nf_conntrack.ko"} {
		if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
			out = append(out, filepath.Join(dir, m))
		}
	}
	if len(out) == 0 {
		testenv.MissingKernel(t, "Debian debug modules in %s", dir)
	}
	return out
}

func TestRelocatedDebianModules(t *testing.T) {
	for _, path := range debugModules(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			checkFunctionsAgainstSymbols(t, open(t, path), 20)
		})
	}
}

// TestRelocateRangeMatchesWhole reads .debug_info of a module in random
// ranges (relocations straddling range edges included) and compares them
// with the whole relocated section.
func TestRelocateRangeMatchesWhole(t *testing.T) {
	path := debugModules(t)[0]
	f := open(t, path)
	whole, ok, err := f.relocatedSection(".debug_info")
	if err != nil || !ok {
		t.Fatalf("relocatedSection: %v %v", ok, err)
	}
	raw := f.rawSection(".debug_info")
	if bytes.Equal(raw, whole) {
		t.Fatal("relocation changed nothing")
	}
	rng := rand.New(rand.NewSource(1))
	var buf []byte
	for i := 0; i < 2000; i++ {
		a := uint64(rng.Intn(len(whole)))
		b := a + uint64(rng.Intn(64)) + 1
		if b > uint64(len(whole)) {
			b = uint64(len(whole))
		}
		if buf, err = f.readSection(".debug_info", a, b, buf); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf, whole[a:b]) {
			t.Fatalf("[%#x, %#x): range read % x, whole % x", a, b, buf, whole[a:b])
		}
	}
}

// TestRelocationErrors: a relocation type libdwfl does not apply, or one
// against an undefined symbol, is an error naming the place, not garbage.
func TestRelocationErrors(t *testing.T) {
	obj := compileObjects(t)[0]
	data, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	rs := ef.Section(".rela.debug_info")
	if rs == nil || ef.Machine != elf.EM_X86_64 {
		t.Skip("no x86-64 .rela.debug_info")
	}
	for _, tc := range []struct {
		name string
		info func(sym uint64) uint64
	}{
		{"PC32", func(sym uint64) uint64 { return sym<<32 | uint64(elf.R_X86_64_PC32) }},
		{"symbol out of range", func(uint64) uint64 { return 0xffffff<<32 | uint64(elf.R_X86_64_64) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := append([]byte(nil), data...)
			e := b[rs.Offset : rs.Offset+24]
			info := ef.ByteOrder.Uint64(e[8:])
			ef.ByteOrder.PutUint64(e[8:], tc.info(info>>32))
			p := filepath.Join(t.TempDir(), "bad.o")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			f := open(t, p)
			_, err := f.FindFuncs(func([]byte) bool { return true }, false)
			if !errors.Is(err, ErrRelocation) {
				t.Fatalf("got %v, want ErrRelocation", err)
			}
			t.Log(err)
		})
	}
}

// FuzzRelocations overwrites one .rela.debug_info entry of a compiled
// object and decodes every unit: bad offsets, types, symbols and addends
// must give errors, never a panic or garbage read outside the file.
func FuzzRelocations(f *testing.F) {
	dir := f.TempDir()
	src := filepath.Join(dir, "m.c")
	obj := filepath.Join(dir, "m.o")
	if err := os.WriteFile(src, []byte(relocSource), 0o644); err != nil {
		f.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-c", "-g", "-O2", "-o", obj, src).CombinedOutput(); err != nil {
		f.Skipf("gcc: %v %s", err, out)
	}
	base, err := os.ReadFile(obj)
	if err != nil {
		f.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(base))
	if err != nil {
		f.Fatal(err)
	}
	rs := ef.Section(".rela.debug_info")
	if rs == nil {
		f.Skip("no .rela.debug_info")
	}
	n := int(rs.Size / 24)
	f.Add(uint16(0), []byte{0x06, 0, 0, 0, 0, 0, 0, 0, 0x0a, 0, 0, 0, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint16(3), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0x01, 0, 0, 0, 0x01, 0, 0, 0})
	f.Add(uint16(7), []byte{0x10, 0, 0, 0, 0, 0, 0, 0, 0x0b, 0, 0, 0, 0xff, 0xff, 0, 0})
	f.Fuzz(func(t *testing.T, idx uint16, entry []byte) {
		b := append([]byte(nil), base...)
		e := b[rs.Offset+uint64(int(idx)%n)*24:]
		copy(e[:24], entry)
		p := filepath.Join(t.TempDir(), "f.o")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		fl, err := Open(p)
		if err != nil {
			return
		}
		defer fl.Close()
		refs, err := fl.FindFuncs(func([]byte) bool { return true }, false)
		if err != nil {
			return
		}
		for _, r := range refs {
			cu, err := fl.Unit(r.Unit)
			if err != nil {
				continue
			}
			if sp := cu.Scopes[r.Offset]; sp != nil && sp.HasEntryPC {
				cu.Lines.LineInfo(sp.EntryPC)
			}
		}
	})
}
