package target_test

import (
	"debug/elf"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/resolve/internal/resolver"
	"github.com/gprobe/gprobe/resolve/spec"
	"github.com/gprobe/gprobe/resolve/target"
)

const fixture = "../../testdata/vmlinux-fixtures/x86_64-dwarf5-O2.elf"

// TestRawBTFKernel opens a saved kernel BTF file (here a fixture's .BTF
// section) as a kernel: entry probes and their arguments resolve as from
// the image's own DWARF, its functions are BTF's, and it has neither DWARF
// nor symbols.
func TestRawBTFKernel(t *testing.T) {
	ef, err := elf.Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	data, err := ef.Section(".BTF").Data()
	ef.Close()
	if err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(t.TempDir(), "btf")
	if err := os.WriteFile(raw, data, 0o644); err != nil {
		t.Fatal(err)
	}
	resolveOn := func(path, def string) (*target.Target, []probe.Probe, []string) {
		t.Helper()
		tg, err := target.Open(target.Options{Vmlinux: path})
		if err != nil {
			t.Fatal(err)
		}
		r, err := resolver.New(tg, resolver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := spec.ParseProbe(def)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := r.Probes(p)
		if err != nil {
			t.Fatalf("%s on %s: %v", def, path, err)
		}
		all, _ := spec.ParseFilter("*")
		funcs, err := r.Functions(all)
		if err != nil {
			t.Fatal(err)
		}
		return tg, ps, funcs
	}
	const def = "vfs_read file->f_pos count"
	tg, fromBTF, funcs := resolveOn(raw, def)
	defer tg.Close()
	elfTarget, fromDWARF, _ := resolveOn(fixture, def)
	defer elfTarget.Close()
	if len(fromBTF) != 1 || len(fromDWARF) != 1 || fromBTF[0].String() != fromDWARF[0].String() {
		t.Errorf("%s: from BTF %v, from DWARF %v", def, fromBTF, fromDWARF)
	}
	if tg.HasDWARF() || tg.HasSymbols() || !elfTarget.HasDWARF() || !elfTarget.HasSymbols() {
		t.Errorf("HasDWARF/HasSymbols: BTF %v/%v, ELF %v/%v", tg.HasDWARF(), tg.HasSymbols(), elfTarget.HasDWARF(), elfTarget.HasSymbols())
	}
	if !slices.Contains(funcs, "vfs_read") || !slices.IsSorted(funcs) {
		t.Errorf("BTF functions: %q", funcs)
	}
	if tg.Path != raw {
		t.Errorf("Path = %s, want %s", tg.Path, raw)
	}
}
