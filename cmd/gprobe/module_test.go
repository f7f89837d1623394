package main

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/perfbug"
	"github.com/gprobe/gprobe/internal/testenv"
)

// Differential tests for kernel modules (-m) on Debian's 6.1 cloud
// modules, cached by scripts/provision.sh: the -dbg package's debug .ko
// files (DWARF 5) and the bootable image's stripped ones (symbols only).

// moduleCache returns the cached debug-module directory, the image's
// module tree and the kernel source; absent, the test is skipped unless
// GPROBE_REQUIRE_VMLINUX=1.
func moduleCache(t *testing.T) (dbg, tree, src string) {
	t.Helper()
	k := testenv.Linux61
	dbg = filepath.Join(k.Dir(), "modules", "debug")
	tree = filepath.Join(k.Dir(), "modules", "lib", "modules", k.Release)
	src = filepath.Join(k.Dir(), "src")
	for _, p := range []string{filepath.Join(dbg, "drivers/block/loop.ko"), filepath.Join(tree, "modules.dep"), filepath.Join(src, "drivers/block/loop.c")} {
		if _, err := os.Stat(p); err != nil {
			testenv.MissingKernel(t, "Debian modules (%v)", err)
		}
	}
	return dbg, tree, src
}

// explainAltBug accounts for a disagreement that is perf 6.1's misplaced
// alternative lookup in modules (see perfbug.ModuleAlt): gprobe,
// made to repeat that one mistake, must then answer exactly as perf did,
// and differently from its own answer.
func explainAltBug(args []string, p, g result) (string, bool) {
	var out, errb bytes.Buffer
	a := newApp(&out, &errb)
	a.ctx = perfbug.With(context.Background(), perfbug.ModuleAlt)
	code := a.run(append([]string{"gprobe"}, args...))
	g2 := result{Stdout: out.String(), Stderr: errb.String(), Code: code}
	if same(p, g2) && !same(g, g2) {
		return fmt.Sprintf("perf wrong (alternative symbol address off by the section's file offset): %q: perf %q, gprobe %q",
			args[len(args)-1], strings.TrimSpace(p.Stdout+p.Stderr), strings.TrimSpace(g.Stdout+g.Stderr)), true
	}
	return "", false
}

// moduleFuncs lists the functions perf -F shows for a module that are
// function symbols (perf -F lists data objects too), at most max of them,
// evenly spread.
func moduleFuncs(t *testing.T, perf *testenv.Perf, path string, max int) []string {
	t.Helper()
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	syms, err := ef.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	isFunc := map[string]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF {
			isFunc[s.Name] = true
		}
	}
	var fns []string
	for _, fn := range perfFuncs(t, perf, "-m", path) {
		if isFunc[fn] {
			fns = append(fns, fn)
		}
	}
	if len(fns) <= max {
		return fns
	}
	var out []string
	for i := 0; i < max; i++ {
		out = append(out, fns[i*len(fns)/max])
	}
	return out
}

// moduleSpecs are the specs generated for one module function: entry,
// return, an offset, the first and last probe-able lines and a lazy
// pattern, and with listing its -L. (Fewer than for the fixtures: perf
// takes 0.3 s per run on a module.)
func moduleSpecs(fn, listing string, withListing bool) [][]string {
	specs := [][]string{{"-D", fn}, {"-D", fn + "%return"}, {"-D", fn + "+5"}}
	for _, n := range numberedLines(listing, 3) {
		specs = append(specs, []string{"-D", fmt.Sprintf("%s:%d", fn, n)})
	}
	if withListing {
		specs = append(specs, []string{"-L", fn}, []string{"-D", fn + ";*return*"})
	}
	return specs
}

// TestPerfDiffModules compares -D, -L and -F on Debian debug modules of
// three sizes: every probe-able line, entry, return and offset of their
// functions (a sample for the larger ones), clones, init/exit functions.
func TestPerfDiffModules(t *testing.T) {
	perf := testenv.RequirePerf(t)
	dbg, _, src := moduleCache(t)
	for i, m := range []struct {
		path string
		max  int
	}{{"drivers/block/loop.ko", 20}, {"fs/isofs/isofs.ko", 10}, {"net/netfilter/nf_conntrack.ko", 10}} {
		path := filepath.Join(dbg, m.path)
		t.Run(filepath.Base(path), func(t *testing.T) {
			stats := &diffStats{}
			c := &checker{t: t, perf: perf, image: path, stats: stats, explain: explainAltBug}
			base := []string{"-m", path, "-s", src}
			var specs [][]string
			fns := moduleFuncs(t, perf, path, m.max)
			for i, fn := range fns {
				listing := runGprobe(append(base, "-L", fn)...).Stdout
				specs = append(specs, moduleSpecs(fn, listing, i%3 == 0)...)
			}
			fn := fns[0]
			specs = append(specs, [][]string{
				{"-F"}, {"-F", "*"}, {"-F", "*_init*|*_exit*"}, {"-D", "nosuch_function"}, {"-D", fn + "+100000"},
				{"-D", fn + " %di"}, {"-D", fn + "%return $retval"}, {"-D", fn + " x=+0(%di):u32 $comm"},
				{"-D", "init_module"}, {"-D", "cleanup_module%return"}, {"-D", "*_init"}, {"-D", "*_exit"},
			}...)
			c.checkAll(base, specs)
			stats.report(t)
			c.checkVariants(variants(t, path, i))
		})
	}
}

// TestPerfDiffStrippedModule compares symbol-table answers on the
// bootable image's module (no DWARF): what a target machine has, and what
// perf falls back to.
func TestPerfDiffStrippedModule(t *testing.T) {
	perf := testenv.RequirePerf(t)
	_, tree, _ := moduleCache(t)
	path := filepath.Join(tree, "kernel/drivers/block/loop.ko")
	stats := &diffStats{}
	c := &checker{t: t, perf: perf, image: path, stats: stats}
	base := []string{"-m", path}
	var specs [][]string
	for _, fn := range moduleFuncs(t, perf, path, 30) {
		specs = append(specs, []string{"-D", fn}, []string{"-D", fn + "%return"}, []string{"-D", fn + "+5"})
	}
	specs = append(specs, [][]string{
		{"-F"}, {"-F", "lo_*"}, {"-D", "loop_configure:3"}, {"-L", "loop_configure"}, {"-D", "nosuch"},
		{"-D", "max_loop"}, {"-D", "lo_rw_aio*"}, {"-D", "loop_configure+100000"}, {"-D", "loop_configure %di"},
	}...)
	c.checkAll(base, specs)
	stats.report(t)
}

// TestModuleByName: -m NAME finds the module through modules.dep and its
// debug file, and answers as -m PATH does (perf needs the module loaded).
func TestModuleByName(t *testing.T) {
	dbg, tree, _ := moduleCache(t)
	t.Setenv("GPROBE_MODULES", tree+string(os.PathListSeparator)+dbg)
	for _, spec := range []string{"loop_configure:5", "loop_configure%return", "loop_exit", "lo_rw_aio"} {
		byName := runGprobe("-m", "loop", "-D", spec)
		byPath := runGprobe("-m", filepath.Join(dbg, "drivers/block/loop.ko"), "-D", spec)
		if byName.Code != 0 || byName != byPath {
			t.Errorf("-m loop -D %s: %s\nwant (as -m PATH): %s", spec, byName, byPath)
		}
	}
	// Without the debug tree, the stripped module answers from symbols,
	// and a line needs the debug information.
	t.Setenv("GPROBE_MODULES", tree)
	if g := runGprobe("-m", "loop", "-D", "loop_configure"); g.Code != 0 || g.Stdout != "p:probe/loop_configure loop:loop_configure+0\n" {
		t.Errorf("-m loop (stripped) -D loop_configure: %s", g)
	}
	if g := runGprobe("-m", "loop", "-D", "loop_configure:3"); g.Code == 0 || !strings.Contains(g.Stderr, "has no debug information") {
		t.Errorf("-m loop (stripped) -D loop_configure:3: %s", g)
	}
	// Compressed modules answer as the plain file does.
	plain := filepath.Join(dbg, "drivers/block/loop.ko")
	want := runGprobe("-m", plain, "-D", "loop_configure:5", "-D", "lo_rw_aio")
	tmp := t.TempDir()
	for _, z := range []struct{ ext, tool string }{{".xz", "xz"}, {".zst", "zstd"}, {".gz", "gzip"}} {
		if _, err := exec.LookPath(z.tool); err != nil {
			t.Logf("%s not installed", z.tool)
			continue
		}
		ko := filepath.Join(tmp, "loop.ko"+z.ext)
		out, err := os.Create(ko)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(z.tool, "-c", plain)
		cmd.Stdout = out
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v", z.tool, err)
		}
		out.Close()
		if g := runGprobe("-m", ko, "-D", "loop_configure:5", "-D", "lo_rw_aio"); g != want || g.Code != 0 {
			t.Errorf("-m %s: %s\nwant %s", ko, g, want)
		}
	}
	g := runGprobe("-m", "no_such_module", "-D", "f")
	if g.Code == 0 || !strings.Contains(g.Stderr, "Module no_such_module is not found in "+tree) {
		t.Errorf("-m no_such_module: %s", g)
	}
}

// TestPerfDiffModuleFixture compiles a module-shaped object
// (testdata/module/fixture.c: .text, .text.unlikely, .init.text,
// .exit.text, aliases, an inline) for x86-64 and arm64 and compares -m
// answers. Unlike Debian's modules, these objects' sections are not where
// libdwfl lays them out in the file, which is where perf's post-processing
// goes wrong; each such disagreement must be perf's mistake, reproduced.
func TestPerfDiffModuleFixture(t *testing.T) {
	perf := testenv.RequirePerf(t)
	type build struct {
		cc, name string
		flags    []string
	}
	builds := []build{
		{"gcc", "x86_64-O2-dwarf5", []string{"-O2", "-gdwarf-5", "-fno-asynchronous-unwind-tables"}},
		{"gcc", "x86_64-O2-dwarf4-sections", []string{"-O2", "-gdwarf-4", "-ffunction-sections"}},
		{"aarch64-linux-gnu-gcc", "arm64-O2-dwarf5", []string{"-O2", "-gdwarf-5", "-fno-asynchronous-unwind-tables"}},
	}
	for i, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			obj := testenv.BuildC(t, b.cc, "testdata/module/fixture.c", b.name+".ko", append([]string{"-c"}, b.flags...)...)
			stats := &diffStats{}
			c := &checker{t: t, perf: perf, image: obj, stats: stats, explain: explainAltBug}
			base := []string{"-m", obj, "-s", "testdata/module"}
			var specs [][]string
			for _, fn := range []string{"walk", "add_item", "report_error", "fixture_init", "fixture_exit", "weigh", "init_module", "cleanup_module"} {
				listing := runGprobe(append(base, "-L", fn)...).Stdout
				specs = append(specs, moduleSpecs(fn, listing, true)...)
			}
			specs = append(specs, [][]string{{"-F"}, {"-F", "*"}, {"-D", "fixture.c:30"}, {"-D", "fixture.c;*counter*"}, {"-L", "fixture.c:20-40"}}...)
			c.checkAll(base, specs)
			stats.report(t)
			// The third build gets the image without the index; the
			// others compressed copies, with and without it.
			c.checkVariants(variants(t, obj, i+3))
		})
	}
}

// TestModuleBadTargets: what is not a module gets perf's message, or a
// one-line error naming the file, and a non-zero exit.
func TestModuleBadTargets(t *testing.T) {
	perf := testenv.RequirePerf(t)
	stats := &diffStats{}
	c := &checker{t: t, perf: perf, image: "/etc/passwd", stats: stats}
	c.check("-m", "/etc/passwd", "-D", "foo")
	stats.report(t)
	// perf words these differently by what the spec needs; gprobe names
	// the file and what is wrong with it.
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-m", "/etc/passwd", "-D", "foo:3"}, "Failed to load symbols from /etc/passwd"},
		{[]string{"-m", "/etc/passwd", "-L", "foo"}, "Failed to load symbols from /etc/passwd"},
		{[]string{"-m", "/nonexistent/x.ko", "-D", "foo"}, "Failed to get the absolute path of /nonexistent/x.ko: No such file or directory"},
	} {
		if g := runGprobe(tc.args...); g.Code == 0 || firstLine(g.Stderr) != tc.msg {
			t.Errorf("%q: %s\nwant first line %q", tc.args, g, tc.msg)
		}
	}
}
