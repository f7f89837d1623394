package btfinfo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/gprobe/gprobe/disasm/arch"
)

func kernelSpec(t *testing.T) *Spec {
	t.Helper()
	if _, err := os.Stat(KernelBTFPath); err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	s, err := LoadKernel()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func memberOff(t *testing.T, s *Spec, structName, member string) int64 {
	t.Helper()
	st, err := s.StructByName(structName)
	if err != nil {
		t.Fatal(err)
	}
	_, off, err := Member(st, member)
	if err != nil {
		t.Fatal(err)
	}
	if off%8 != 0 {
		t.Fatalf("%s.%s at bit %d", structName, member, off)
	}
	return off / 8
}

func TestKernelVfsRead(t *testing.T) {
	s := kernelSpec(t)
	f, err := s.FuncArch("vfs_read", arch.AMD64)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range f.Params {
		got = append(got, p.Name+"="+p.Reg)
	}
	if want := "file=di buf=si count=dx pos=cx"; strings.Join(got, " ") != want {
		t.Errorf("vfs_read params %q, want %q", strings.Join(got, " "), want)
	}
	if ts := TypeString(f.Params[0].Type, 0); ts != "struct file *" {
		t.Errorf("file type %q", ts)
	}
	if err := s.ParamRegs(arch.ARM64, f); err != nil || f.Params[3].Reg != "x3" {
		t.Errorf("arm64: %v %+v", err, f.Params)
	}
	if k, _ := KprobeType(f.Params[2].Type, false); k != "u64" {
		t.Errorf("size_t kprobe type %q", k)
	}
	if k, _ := KprobeType(f.Params[0].Type, true); k != "x64" {
		t.Errorf("pointer kprobe type %q", k)
	}
	// vfs_read.isra.0-style names fall back to the base name.
	if g, err := s.Func("vfs_read.isra.0"); err != nil || g.Name != "vfs_read" {
		t.Errorf("vfs_read.isra.0: %v", err)
	}

	chain, err := ParseChain("->f_path.dentry->d_name.name")
	if err != nil {
		t.Fatal(err)
	}
	acc, err := s.Resolve(f.Params[0].Type, chain)
	if err != nil {
		t.Fatal(err)
	}
	want0 := memberOff(t, s, "file", "f_path") + memberOff(t, s, "path", "dentry")
	want1 := memberOff(t, s, "dentry", "d_name") + memberOff(t, s, "qstr", "name")
	if len(acc.Derefs) != 2 || acc.Derefs[0] != want0 || acc.Derefs[1] != want1 {
		t.Errorf("derefs %v, want [%d %d]", acc.Derefs, want0, want1)
	}
	if ts := TypeString(acc.Final, 0); ts != "const unsigned char *" {
		t.Errorf("final type %q", ts)
	}
	t.Logf("file->f_path.dentry->d_name.name = %s:string", acc.Fetch("%di"))

	// Errors.
	_, err = s.Resolve(f.Params[0].Type, []Step{{Name: "f_poss", Arrow: true}})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "member f_poss not found in struct file") {
		t.Errorf("f_poss: %v", err)
	}
	_, err = s.Resolve(f.Params[0].Type, []Step{{Name: "f_path"}})
	if !errors.Is(err, ErrNotStruct) || !strings.Contains(err.Error(), "must be referred by '->'") {
		t.Errorf(".f_path on a pointer: %v", err)
	}
	_, err = s.Resolve(f.Params[0].Type, []Step{{Name: "f_path", Arrow: true}, {Name: "dentry", Arrow: true}})
	if !errors.Is(err, ErrNotPointer) || !strings.Contains(err.Error(), "must be referred by '.'") {
		t.Errorf("->dentry on a struct: %v", err)
	}
	_, err = s.Resolve(f.Params[2].Type, []Step{{Name: "x", Arrow: true}})
	if !errors.Is(err, ErrNotPointer) {
		t.Errorf("count->x: %v", err)
	}
	_, err = s.Func("no_such_function_xyz")
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("missing func: %v", err)
	}
}

func TestKernelTaskStruct(t *testing.T) {
	s := kernelSpec(t)
	ts, err := s.StructByName("task_struct")
	if err != nil {
		t.Fatal(err)
	}
	acc, err := s.ResolveStruct(ts, []Step{{Name: "sched_reset_on_fork"}})
	if err != nil {
		t.Fatal(err)
	}
	m, bit, _ := Member(ts, "sched_reset_on_fork")
	if !acc.IsBitfield() || acc.BitSize != int(m.BitfieldSize) ||
		acc.Derefs[0]*8+int64(acc.BitOffset) != bit ||
		acc.Derefs[0]%int64(acc.ContainerBits/8) != 0 || acc.BitOffset+acc.BitSize > acc.ContainerBits {
		t.Errorf("sched_reset_on_fork: %+v (member bit %d)", acc, bit)
	}
	t.Logf("task_struct.sched_reset_on_fork: +%d %s", acc.Derefs[0], acc.BitfieldType())

	// Members inside anonymous unions/structs, e.g. task_struct->comm and
	// an array index on it.
	acc, err = s.Resolve(&btf.Pointer{Target: ts}, []Step{{Name: "comm", Arrow: true}, {IsIndex: true, Index: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if want := memberOff(t, s, "task_struct", "comm") + 3; acc.Derefs[0] != want {
		t.Errorf("comm[3] %v, want %d", acc.Derefs, want)
	}
	// Every named task_struct member (through anonymous members) resolves.
	n := 0
	var walk func(Type, int64)
	walk = func(c Type, base int64) {
		for _, m := range members(btf.UnderlyingType(c)) {
			if m.Name == "" {
				walk(m.Type, base+int64(m.Offset))
				continue
			}
			acc, err := s.ResolveStruct(ts, []Step{{Name: m.Name}})
			if err != nil {
				t.Errorf("%s: %v", m.Name, err)
				continue
			}
			n++
			if got := acc.Derefs[0]*8 + int64(acc.BitOffset); got != base+int64(m.Offset) {
				t.Errorf("%s: %d, want bit %d", m.Name, got, base+int64(m.Offset))
			}
		}
	}
	walk(ts, 0)
	t.Logf("%d task_struct members resolved", n)
}

// TestKernelDuplicates: the kernel has duplicate type names (two "struct
// console" in some builds); StructByName must not fail just because of that
// when layouts agree, and FuncNames must list every function.
func TestKernelAllFuncs(t *testing.T) {
	s := kernelSpec(t)
	names, err := s.FuncNames()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, n := range names {
		count[n]++
	}
	var dups, resolved, failed int
	for n, c := range count {
		if c > 1 {
			dups++
			if _, err := s.Func(n); err != nil {
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("%s: %v", n, err)
				}
				failed++
			}
			continue
		}
		resolved++
	}
	// Duplicate struct names (two "struct console" in some kernels).
	for _, n := range []string{"console", "file", "task_struct"} {
		ts, _ := s.typesByName(n)
		_, err := s.StructByName(n)
		t.Logf("struct %s: %d BTF types with that name; StructByName: %v", n, len(ts), err)
	}
	t.Logf("%d BTF functions, %d distinct names, %d duplicated names (%d with differing prototypes)", len(names), len(count), dups, failed)
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "junk")
	os.WriteFile(p, []byte("hello world, not BTF"), 0o644)
	if _, err := Load(p); !errors.Is(err, ErrNoBTF) {
		t.Errorf("junk: %v", err)
	}
	// An ELF without .BTF: the test binary itself.
	exe, err := os.Executable()
	if err == nil {
		if _, err := Load(exe); !errors.Is(err, ErrNoBTF) {
			t.Errorf("%s: %v", exe, err)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file: no error")
	}
}
