package resolver

import (
	"errors"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/resolve/internal/btfinfo"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/spec"
)

const fixture = "../../../testdata/vmlinux-fixtures/x86_64-dwarf5-O2.elf"

// testOpts are the options tests give: Options', and what the command line
// cannot set (BTF alone for an architecture, a target's features, perf's
// missing boundary check).
type testOpts struct {
	NoInlines      bool
	MaxProbes      int
	Features       probedef.Features
	ReturnInsn     bool
	KernelBTFArgs  bool
	TargetFeatures *probedef.Features
	BTF            *btfinfo.Spec
	Arch           arch.Arch
	AllowMidInsn   bool
	Blacklist      *probedef.Blacklist
	ImageBlacklist bool
	Warn           func(string)
}

// testNew is a resolver for the image f, or for BTF alone (f nil, with
// o.BTF and o.Arch).
func testNew(f *dwarfinfo.File, user bool, o testOpts) (*Resolver, error) {
	r, err := fromImage(f, user, o.BTF, o.Arch, Options{NoInlines: o.NoInlines, MaxProbes: o.MaxProbes, Features: o.Features,
		ReturnInsn: o.ReturnInsn, KernelBTFArgs: o.KernelBTFArgs, Blacklist: o.Blacklist, ImageBlacklist: o.ImageBlacklist, Warn: o.Warn})
	if err != nil {
		return nil, err
	}
	r.im.Opts.TargetFeatures = o.TargetFeatures
	r.im.NoBoundaryCheck = o.AllowMidInsn
	return r, nil
}

func resolver(t *testing.T, opts testOpts) *Resolver {
	t.Helper()
	f, err := dwarfinfo.Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := testNew(f, false, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func definitions(t *testing.T, r *Resolver, def string) ([]string, error) {
	t.Helper()
	p, err := spec.ParseProbe(def)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := r.Probes(p)
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out, err
}

// Without the kernel's multi-probe support perf gives every address of one
// probe its own event name.
func TestEventNamesWithoutMultiProbe(t *testing.T) {
	for _, multi := range []bool{true, false} {
		got, err := definitions(t, resolver(t, testOpts{Features: probedef.Features{MultiProbe: multi}}), "do_sys_open")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"p:probe/do_sys_open sys_openat+5", "p:probe/do_sys_open sys_open+5", "p:probe/do_sys_open do_sys_open+0"}
		if !multi {
			want = []string{"p:probe/do_sys_open sys_openat+5", "p:probe/do_sys_open_1 sys_open+5", "p:probe/do_sys_open_2 do_sys_open+0"}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("multiprobe=%v:\n%s\nwant\n%s", multi, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

func TestMidInstructionRefused(t *testing.T) {
	r := resolver(t, testOpts{})
	_, err := definitions(t, r, "vfs_read+1")
	if !errors.Is(err, core.ErrNotBoundary) {
		t.Fatalf("vfs_read+1: err = %v, want core.ErrNotBoundary", err)
	}
	if !strings.Contains(err.Error(), "inside the 5-byte instruction at vfs_read+0") {
		t.Errorf("message does not name the instruction: %v", err)
	}
	if got, err := definitions(t, r, "vfs_read+5"); err != nil || len(got) != 1 {
		t.Errorf("vfs_read+5 (after the 5-byte call) = %v, %v", got, err)
	}
	r = resolver(t, testOpts{AllowMidInsn: true})
	if got, err := definitions(t, r, "vfs_read+1"); err != nil || len(got) != 1 || got[0] != "p:probe/vfs_read vfs_read+1" {
		t.Errorf("AllowMidInsn: %v, %v", got, err)
	}
}
