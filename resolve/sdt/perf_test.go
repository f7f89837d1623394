package sdt

import (
	"debug/elf"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/perfcache"
	"github.com/gprobe/gprobe/resolve/spec"
)

// The differential tests against perf 6.1: the probe cache files gprobe
// writes are the bytes perf writes, each reads the other's cache, and
// gprobe's definitions are perf's but for the documented differences
// (constants as immediates, arm64 operands; docs/differences.md).

// binaries are the system binaries with markers and the test programs.
func binaries(t *testing.T) []testProgram {
	t.Helper()
	var out []testProgram
	for _, p := range []string{python, libstdcxx, libjvm} {
		need(t, p)
		out = append(out, testProgram{filepath.Base(p), p})
	}
	return append(out, testPrograms(t)...)
}

// tree lists a build-id cache: each path, a link's target, a file's size.
func tree(t *testing.T, root string) string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, root)
		info, _ := d.Info()
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out = append(out, rel+" -> "+l)
		case d.IsDir():
			out = append(out, rel+"/ "+info.Mode().Perm().String())
		default:
			out = append(out, rel+" "+info.Mode().Perm().String()+" "+strconv.FormatInt(info.Size(), 10))
		}
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestProbeCacheMatchesPerf: for every binary, the cache gprobe writes
// when it resolves a marker with -x is the one `perf buildid-cache --add`
// writes, to the byte; perf lists gprobe's cache as its own, and gprobe
// lists perf's as perf does.
func TestProbeCacheMatchesPerf(t *testing.T) {
	perf := testenv.RequirePerf(t)
	hp, hg := testenv.Home(t), testenv.Home(t)
	for _, b := range binaries(t) {
		if r := perf.CommandIn(hp, "buildid-cache", "--add", b.path); r.Code != 0 {
			t.Fatalf("perf buildid-cache --add %s: %s", b.path, r)
		}
		res := &Resolver{Cache: &perfcache.Cache{Root: filepath.Join(hg, ".debug")}, Remember: true, MaxProbes: 1 << 20}
		if _, err := res.Probes(Point{Event: "*"}, b.path); err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
	}
	if p, g := tree(t, filepath.Join(hp, ".debug")), tree(t, filepath.Join(hg, ".debug")); p != g {
		t.Errorf("the caches differ:\nperf:\n%s\ngprobe:\n%s", p, g)
	}
	filepath.WalkDir(filepath.Join(hp, ".debug"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "probes" {
			return err
		}
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(hg, strings.TrimPrefix(p, hp)))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: gprobe wrote\n%s\nperf\n%s", strings.TrimPrefix(p, hp), got, want)
		}
		return nil
	})
	for _, args := range [][]string{{"probe", "--cache", "-l"}, {"list", "sdt"}} {
		p, g := perf.CommandIn(hp, args...), perf.CommandIn(hg, args...)
		if p.String() != g.String() || p.Code != 0 || p.Stdout == "" {
			t.Errorf("perf %s on perf's cache:\n%s\non gprobe's:\n%s", strings.Join(args, " "), p, g)
		}
	}
	c := &perfcache.Cache{Root: filepath.Join(hp, ".debug")}
	lines, err := CacheListing(c, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := perf.CommandIn(hp, "probe", "--cache", "-l").Stdout; strings.Join(lines, "\n")+"\n" != want {
		t.Errorf("gprobe's --cache -l:\n%s\nperf's:\n%s", strings.Join(lines, "\n"), want)
	}
	evs, err := CachedEvents(c, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := perf.CommandIn(hp, "list", "sdt").Stdout; strings.Join(Lines(evs), "\n")+"\n" != want {
		t.Errorf("gprobe's list:\n%s\nperf's:\n%s", strings.Join(Lines(evs), "\n"), want)
	}
}

// TestListingTwoCopies: an event two binaries have is listed with each
// binary's path and build-id, as perf lists it.
func TestListingTwoCopies(t *testing.T) {
	perf := testenv.RequirePerf(t)
	progs := testPrograms(t)
	h := testenv.Home(t)
	for _, b := range progs {
		if r := perf.CommandIn(h, "buildid-cache", "--add", b.path); r.Code != 0 {
			t.Fatal(r)
		}
	}
	evs, err := CachedEvents(&perfcache.Cache{Root: filepath.Join(h, ".debug")}, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := perf.CommandIn(h, "list", "sdt").Stdout
	if got := strings.Join(Lines(evs), "\n") + "\n"; got != want || !strings.Contains(got, "sdt_gprobe_test:tick@") {
		t.Errorf("gprobe:\n%s\nperf:\n%s", got, want)
	}
	for _, glob := range [][2]string{{"sdt_gprobe_test", "t*"}, {"", "mem"}} {
		evs, _ := CachedEvents(&perfcache.Cache{Root: filepath.Join(h, ".debug")}, glob[0], glob[1], nil)
		arg := glob[1]
		if glob[0] != "" {
			arg = glob[0] + ":" + glob[1]
		}
		want := perf.CommandIn(h, "list", arg).Stdout
		if got := strings.Join(Lines(evs), "\n") + "\n"; !strings.Contains(want, got) {
			t.Errorf("list %s: gprobe:\n%s\nperf:\n%s", arg, got, want)
		}
	}
}

// defCase is one question of the definition table: perf probe's arguments
// (-x names a binary of binaries() by its name; "" for none) and the
// cache the question is asked with ("cached": every binary added by perf).
type defCase struct {
	exe, def string
	cached   bool
}

var defCases = []defCase{
	{"python3.11", "sdt_python:function__entry", false},
	{"python3.11", "%sdt_python:function__entry", false},
	{"python3.11", "sdt_python:*", false},
	{"python3.11", "%sdt_python:gc__*", false},
	{"python3.11", "%*", false},
	{"python3.11", "%gc__start", false},
	{"python3.11", "sdt_py*:line", false},
	{"python3.11", "%sdt_python:line foo=%ax", false}, // arguments are ignored
	{"python3.11", "sdt_python:nosuch", false},
	{"python3.11", "%nosuch:*", false},
	{"python3.11", "%", false},
	{"libstdc++.so.6", "sdt_libstdcxx:*", false},
	{"libstdc++.so.6", "%sdt_libstdcxx:throw", false},
	{"libstdc++.so.6", "%catch", false},
	{"libjvm.so", "sdt_hotspot_jni:DetachCurrentThread__return", false},
	{"libjvm.so", "sdt_hotspot:thread__sleep__end", false},
	{"libjvm.so", "sdt_hotspot:*", false},
	{"libjvm.so", "sdt_hs_private:*", false},
	{"libjvm.so", "%*", false}, // more than --max-probes
	{"libjvm.so", "%*__entry", false},
	{"libjvm.so", "%sdt_hotspot_jni:Get*Field__entry", false},
	// Markers of one name whose arguments differ (a constant in one):
	// perf prints lines the kernel refuses as one event.
	{"libjvm.so", "sdt_hotspot_jni:AttachCurrentThread__return", false},
	{"libjvm.so", "sdt_hotspot_jni:NewDirectByteBuffer__return", false},
	{"libjvm.so", "sdt_hotspot_jni:AttachCurrentThread*__return", false},
	{"true", "sdt_x:y", false},
	{"", "%sdt_python:line", true},
	{"", "sdt_python:line", true},
	{"", "%line", true},
	{"", "%gc__*", true},
	{"", "%*", true},
	{"", "sdt_libstdcxx:throw", true},
	{"", "%sdt_python:line@/usr/bin/python3.11", true},
	{"", "%sdt_python:line@571d98", true},
	{"", "%sdt_python:line@/usr/lib/x86_64-linux-gnu/libstdc++.so.6", true},
	{"", "%sdt_gprobe_test:*", true},
	{"", "%sdt_nosuch:x", true},
	{"", "%sdt_python:line", false},
	{"libstdc++.so.6", "%sdt_python:line", true},
	{"x86-64 -O0", "sdt_gprobe_test:*", false},
	{"x86-64 -O2", "sdt_gprobe_test:*", false},
	{"x86-64 -O2", "%twice", false},
	{"x86-64 -O2", "%tick", false},
	{"arm64 -O0", "sdt_gprobe_test:*", false},
	{"arm64 -O2", "sdt_gprobe_test:*", false},
	{"arm64 -O2", "%mem", false},
}

// TestDefinitionsMatchPerf asks perf probe -D and gprobe's resolver each
// question of defCases. Without immediates gprobe's lines are perf's, line
// for line, and both fail on the same questions; with them, the lines
// differ only by the constants perf drops, which gprobe fetches as \IMM.
// On arm64 binaries perf on this x86-64 machine drops every operand (it
// translates with its host's rules); gprobe's places are perf's and its
// arguments are ones the arm64 kernel's grammar accepts.
func TestDefinitionsMatchPerf(t *testing.T) {
	perf := testenv.RequirePerf(t)
	bins := map[string]string{"true": "/usr/bin/true"}
	cachedHome := testenv.Home(t)
	for _, b := range binaries(t) {
		bins[b.name] = b.path
		if r := perf.CommandIn(cachedHome, "buildid-cache", "--add", b.path); r.Code != 0 {
			t.Fatal(r)
		}
	}
	for _, c := range defCases {
		h := cachedHome
		if !c.cached {
			h = testenv.Home(t)
		}
		args := []string{"-D", c.def}
		exe := ""
		if c.exe != "" {
			exe = bins[c.exe]
			args = append([]string{"-x", exe}, args...)
		}
		want := perf.ProbeIn(h, args...)
		sp, err := spec.ParseProbe(c.def)
		if err != nil || !sp.Point.SDT {
			t.Fatalf("%q: %v", c.def, err)
		}
		for _, imm := range []bool{false, true} {
			r := &Resolver{Cache: &perfcache.Cache{Root: filepath.Join(h, ".debug")}, Options: Options{Immediates: imm}}
			ps, err := r.Probes(PointOf(&sp.Point), exe)
			if want.Code != 0 {
				sentinel := ErrNotFound
				if want.Code == 256-7 { // E2BIG
					sentinel = ErrTooMany
				}
				if !errors.Is(err, sentinel) || want.Stdout != "" {
					t.Errorf("%v: gprobe %v; perf %s", args, err, want)
				}
				continue
			}
			if err != nil {
				t.Errorf("%v: %v; perf %s", args, err, want)
				continue
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.String())
			}
			wantLines := strings.Split(strings.TrimSuffix(want.Stdout, "\n"), "\n")
			if len(got) != len(wantLines) {
				t.Errorf("%v (immediates %v): %d lines, perf %d:\n%s\nperf:\n%s", args, imm, len(got), len(wantLines), strings.Join(got, "\n"), want.Stdout)
				continue
			}
			consistent := consistentLines(t, wantLines)
			for i := range got {
				if err := sameButDocumented(ps[i], wantLines[i], consistent[i], imm); err != nil {
					t.Errorf("%v (immediates %v): %v\ngprobe: %s\nperf:   %s", args, imm, err, got[i], wantLines[i])
				}
			}
		}
	}
}

// consistentLines is perf's lines with the arguments of each event made
// consistent across its probes (Consistent), the documented difference.
func consistentLines(t *testing.T, lines []string) []string {
	t.Helper()
	var ps []probe.Probe
	for _, l := range lines {
		p, err := probedef.Parse(l, &probedef.Options{NoStat: true, AnyRegister: true})
		if err != nil {
			t.Fatalf("perf's line %q: %v", l, err)
		}
		p.Target.Place = ""
		ps = append(ps, *p)
	}
	out := make([]string, len(lines))
	for i := 0; i < len(ps); {
		j := i
		for j < len(ps) && ps[j].Group == ps[i].Group && ps[j].Event == ps[i].Event {
			j++
		}
		c, _ := Consistent(ps[i:j])
		for k := range c {
			out[i+k] = c[k].String()
		}
		i = j
	}
	return out
}

// sameButDocumented compares gprobe's probe with perf's line (and that
// line once its event's arguments are made consistent), allowing the
// documented differences.
func sameButDocumented(p probe.Probe, want, consistent string, imm bool) error {
	got := p.String()
	if got == want || got == consistent {
		return nil
	}
	place := func(s string) string { return strings.Join(strings.Fields(s)[:2], " ") }
	if place(got) != place(want) {
		return errors.New("the places differ")
	}
	f, err := elf.Open(p.Target.Path)
	if err != nil {
		return err
	}
	f.Close()
	arm := f.Machine == elf.EM_AARCH64
	a := arch.AMD64
	if arm {
		a = arch.ARM64
	}
	if _, err := probedef.Parse(got, &probedef.Options{Arch: a, NoStat: true}); err != nil {
		return err
	}
	if arm {
		return nil // perf on x86-64 drops every arm64 operand
	}
	if !imm {
		return errors.New("differs without immediates")
	}
	// Dropping gprobe's immediates gives perf's line.
	q := p
	q.Args = nil
	for _, a := range p.Args {
		if _, ok := a.Expr.(probe.Imm); !ok {
			q.Args = append(q.Args, a)
		}
	}
	if s := q.String(); s != want && s != consistent {
		return errors.New("differs by more than immediates")
	}
	return nil
}

// TestArm64Operands: the arm64 program's definitions carry every operand
// perf on arm64 reads, and the ones it drops that the kernel can fetch.
func TestArm64Definitions(t *testing.T) {
	for _, b := range testPrograms(t) {
		if !strings.HasPrefix(b.name, "arm64 -O2") {
			continue
		}
		f, err := Open(b.path)
		if err != nil {
			t.Fatal(err)
		}
		if f.Machine != elf.EM_AARCH64 {
			t.Fatal(f.Machine)
		}
		for _, n := range f.Notes {
			p, dropped, err := n.Probe(b.path, f.Machine, Options{Immediates: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := probedef.Parse(p.String(), &probedef.Options{Arch: arch.ARM64, NoStat: true}); err != nil {
				t.Errorf("%s: %v", p.String(), err)
			}
			switch n.Name {
			case "mem":
				if !strings.Contains(p.String(), "arg1=+8(%x20):s32 arg2=+12(%x20):u8 arg3=+24(%x21):s64 arg4=%x22:s16") {
					t.Errorf("mem: %s", p.String())
				}
			case "global":
				if len(dropped) != 1 || !strings.Contains(dropped[0].Op, ":lo12:") {
					t.Errorf("global: dropped %+v", dropped)
				}
			case "consts":
				if !strings.HasSuffix(p.String(), `arg1=\42:s32 arg2=\-7:s32`) {
					t.Errorf("consts: %s", p.String())
				}
			}
		}
	}
}
