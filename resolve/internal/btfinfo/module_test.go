package btfinfo

import (
	"debug/dwarf"
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/internal/testenv"
)

// Module split BTF: Debian's 6.1 modules carry a .BTF section whose type
// IDs continue those of the vmlinux they were built with. Loaded on top of
// that vmlinux's BTF, a module function's parameters and the layout of the
// module's own structs must agree with the module's DWARF (the -dbg
// package's .ko), and types the module only refers to must resolve into
// the base.

func debianModuleBTF(t *testing.T) (base *Spec, stripped, debug string) {
	t.Helper()
	k := testenv.Linux61
	vmlinux, _ := testenv.RequireVmlinux(t, k)
	stripped = filepath.Join(k.Dir(), "modules/lib/modules", k.Release, "kernel/drivers/block/loop.ko")
	debug = filepath.Join(k.Dir(), "modules/debug/drivers/block/loop.ko")
	for _, p := range []string{stripped, debug} {
		if _, err := os.Stat(p); err != nil {
			testenv.MissingKernel(t, "%v", err)
		}
	}
	base, err := Load(vmlinux)
	if err != nil {
		t.Fatal(err)
	}
	return base, stripped, debug
}

func TestDebianModuleSplitBTF(t *testing.T) {
	base, stripped, debug := debianModuleBTF(t)
	for _, path := range []string{stripped, debug} {
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(path))))+"/"+filepath.Base(path), func(t *testing.T) {
			s, err := LoadSplit(path, base)
			if err != nil {
				t.Fatal(err)
			}
			if s.Base != base {
				t.Fatal("split spec does not record its base")
			}
			f, err := s.FuncArch("loop_configure", arch.AMD64)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range f.Params {
				got = append(got, p.Name+":"+TypeString(p.Type, 0)+"="+p.Reg)
			}
			want := "lo:struct loop_device *=di mode:fmode_t=si bdev:struct block_device *=dx config:const struct loop_config *=cx"
			if strings.Join(got, " ") != want {
				t.Errorf("loop_configure params\n got %s\nwant %s", strings.Join(got, " "), want)
			}
			// struct block_device lives in the vmlinux base.
			ptr, ok := f.Params[2].Type.(*btf.Pointer)
			if !ok {
				t.Fatalf("bdev is %T", f.Params[2].Type)
			}
			baseBD, err := base.StructByName("block_device")
			if err != nil {
				t.Fatal(err)
			}
			if ptr.Target != baseBD {
				t.Errorf("bdev's struct block_device is not the base's type")
			}
			checkLayoutAgainstDWARF(t, s, debug, "loop_device")
			checkLayoutAgainstDWARF(t, s, debug, "loop_cmd")
		})
	}
}

// checkLayoutAgainstDWARF compares every member offset of a struct the
// module defines, BTF against the debug module's DWARF.
func checkLayoutAgainstDWARF(t *testing.T, s *Spec, debugKO, name string) {
	t.Helper()
	ef, err := elf.Open(debugKO)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	d, err := ef.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagStructType || e.Val(dwarf.AttrName) != name || e.Val(dwarf.AttrDeclaration) != nil {
			continue
		}
		ty, err := d.Type(e.Offset)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ty.(*dwarf.StructType).Field {
			if f.Name != "" {
				want[f.Name] = f.ByteOffset*8 + f.DataBitOffset
				if f.BitSize != 0 {
					want[f.Name] = f.DataBitOffset
				}
			}
		}
		break
	}
	if len(want) < 3 {
		t.Fatalf("struct %s: %d members in DWARF", name, len(want))
	}
	st, err := s.StructByName(name)
	if err != nil {
		t.Fatal(err)
	}
	for m, off := range want {
		_, got, err := Member(st, m)
		if err != nil {
			t.Errorf("%s.%s: %v", name, m, err)
			continue
		}
		if got != off {
			t.Errorf("%s.%s at bit %d in BTF, %d in DWARF", name, m, got, off)
		}
	}
}
