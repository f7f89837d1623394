package resolve

import (
	"errors"
	"os"
	"testing"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/sdt"
	"github.com/gprobe/gprobe/resolve/spec"
	"github.com/gprobe/gprobe/resolve/target"
)

// TestChecked: what is given is kept, the rest resolved; a probe the
// kernel's grammar refuses is a *RefusedError, a point not found the
// resolution's error.
func TestChecked(t *testing.T) {
	r, err := Open(Options{Target: target.Options{Vmlinux: "../testdata/vmlinux-fixtures/x86_64-dwarf5-O2.elf", NoCache: true}, MaxProbes: 128})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	parse := func(defs ...string) []*spec.Probe {
		ps, err := spec.ParseProbes(defs, spec.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	given := []probe.Probe{{Group: "g", Event: "e"}}
	probes := map[int][]probe.Probe{0: given}
	if err := Checked(r, parse("nosuch", "vfs_read count"), probes, probedef.Features{}, false); err != nil {
		t.Fatal(err)
	}
	if len(probes[0]) != 1 || probes[0][0].Event != "e" || len(probes[1]) != 1 {
		t.Errorf("probes %v", probes)
	}
	var re *RefusedError
	err = Checked(r, parse("vfs_read count:b70@0/64"), map[int][]probe.Probe{}, probedef.Features{}, false)
	if !errors.As(err, &re) {
		t.Errorf("a 70-bit bitfield: %v, want a *RefusedError", err)
	}
	if err := Checked(r, parse("nosuch"), map[int][]probe.Probe{}, probedef.Features{}, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("nosuch: %v", err)
	}
}

// TestResolveChecked: fprobes resolved with their points and arguments; a
// refused one is a *RefusedError.
func TestResolveChecked(t *testing.T) {
	r, err := Open(Options{Target: target.Options{Vmlinux: "../testdata/vmlinux-fixtures/x86_64-dwarf5-O2.elf", NoCache: true}, MaxProbes: 128,
		Features: probedef.KnownFeatures})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dd, err := Dynamic{}.Parse([]string{"vfs_read count", "vfs_write%return $retval"})
	if err != nil {
		t.Fatal(err)
	}
	dps, err := dd.ResolveChecked(r, probedef.KnownFeatures, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(dps) != 2 || dps[0].Point != "vfs_read" || len(dps[0].Args) != 1 || dps[0].Probe.Kind != probe.Fprobe || !dps[1].Probe.Return {
		t.Errorf("%+v", dps)
	}
	dd, err = Dynamic{}.Parse([]string{"vfs_read count:b70@0/64"})
	if err != nil {
		t.Fatal(err)
	}
	var re *RefusedError
	if _, err := dd.ResolveChecked(r, probedef.KnownFeatures, true); !errors.As(err, &re) {
		t.Errorf("a 70-bit bitfield: %v, want a *RefusedError", err)
	}
}

// TestMissing: only the specs without probes are resolved, and returned
// in order; a point not found stops it with the resolution's error.
func TestMissing(t *testing.T) {
	r, err := Open(Options{Target: target.Options{Vmlinux: "../testdata/vmlinux-fixtures/x86_64-dwarf5-O2.elf", NoCache: true}, MaxProbes: 128})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	specs, err := spec.ParseProbes([]string{"nosuch", "vfs_read", "vfs_write"}, spec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	probes := map[int][]probe.Probe{0: {{Group: "g", Event: "given"}}}
	got, err := Missing(r, specs, probes)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(probes[1]) != 1 || len(probes[2]) != 1 || got[0].Event != probes[1][0].Event || got[1].Event != probes[2][0].Event ||
		probes[0][0].Event != "given" || got[0].Event == got[1].Event {
		t.Errorf("Missing = %v, probes %v", got, probes)
	}
	if _, err := Missing(r, specs, map[int][]probe.Probe{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("nosuch: %v", err)
	}
}

// TestSDTChecked: an arm64 binary's markers are checked for arm64 (its
// registers), an x86-64 one's for x86-64; a probe the kernel's grammar
// refuses is a *RefusedError; the points that are not SDT are left.
func TestSDTChecked(t *testing.T) {
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil {
		testenv.Missing(t, "<sys/sdt.h> (Debian's systemtap-sdt-dev, scripts/provision.sh)")
	}
	srcs := []string{"sdt/testdata/sdtprog.c", "sdt/testdata/sdtsem.c"}
	bins := map[string]string{
		"x86-64": testenv.BuildCSources(t, "gcc", srcs, "sdtprog", "-g", "-O2"),
		"arm64":  testenv.BuildCSources(t, "aarch64-linux-gnu-gcc", srcs, "sdtprog", "-g", "-O2", "-idirafter", "/usr/include/x86_64-linux-gnu"),
	}
	specs, err := spec.ParseProbes([]string{"main", "%sdt_gprobe_test:twice"}, spec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, bin := range bins {
		got, err := SDTChecked(&sdt.Resolver{}, specs, bin, probedef.AllFeatures, true)
		if err != nil || len(got) != 1 || len(got[1]) != 2 {
			t.Errorf("%s: %v, %v; want twice's 2 probes at 1", name, got, err)
		}
		// Only u8 arguments: twice's int is refused.
		var re *RefusedError
		if _, err := SDTChecked(&sdt.Resolver{}, specs, bin, probedef.Features{Types: []string{"u8"}}, true); !errors.As(err, &re) {
			t.Errorf("%s: %v, want a *RefusedError", name, err)
		}
	}
}
