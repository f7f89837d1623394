package target_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/perfcache"
	"github.com/gprobe/gprobe/resolve/target"
)

// forms are a C program's builds for the debug-file search: the full
// binary, its --only-keep-debug file, the binary --strip-debug'ed with a
// .gnu_debuglink, and the debug file of another build (-O0).
type forms struct {
	full, debug, stripped, other string
	// linked is stripped with a .gnu_debuglink naming "prog-dbg.debug",
	// a name the distributions' places do not use.
	linked string
}

func buildForms(t *testing.T, name string, flags ...string) forms {
	t.Helper()
	objcopy := testenv.Tool(t, "objcopy")
	src := "../../cmd/gprobe/testdata/uprobe/prog.c"
	f := forms{
		full:  testenv.BuildC(t, "gcc", src, name, append([]string{"-O2", "-g"}, flags...)...),
		other: testenv.BuildC(t, "gcc", src, name+"-O0", append([]string{"-O0", "-g"}, flags...)...),
	}
	dir := t.TempDir()
	f.debug, f.stripped, f.linked = filepath.Join(dir, "prog.debug"), filepath.Join(dir, "prog"), filepath.Join(dir, "linked")
	for _, args := range [][]string{
		{"--only-keep-debug", f.full, f.debug},
		{"--strip-debug", "--add-gnu-debuglink=" + f.debug, f.full, f.stripped},
		{"--only-keep-debug", f.full, filepath.Join(dir, "prog-dbg.debug")},
		{"--strip-debug", "--add-gnu-debuglink=" + filepath.Join(dir, "prog-dbg.debug"), f.full, f.linked},
	} {
		if out, err := exec.Command(objcopy, args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return f
}

// place copies src to dst (made with its directories), mode 0644.
func place(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, b)
	if err := os.Chmod(dst, 0o644); err != nil {
		t.Fatal(err)
	}
}

// debugOf opens o and says whether the target found DWARF, with what the
// search reported.
func debugOf(t *testing.T, o target.Options) (bool, string) {
	t.Helper()
	var trace []string
	o.Trace = func(s string) { trace = append(trace, s) }
	o.NoCache = true
	tg, err := target.Open(o)
	if err != nil {
		t.Fatalf("target.Open: %v", err)
	}
	defer tg.Close()
	return tg.HasDWARF(), strings.Join(trace, "\n")
}

// The places of a debug file, and the checks before one is used: the
// answers with a file found are those of the unstripped binary.
func TestSeparateDebugSearch(t *testing.T) {
	f := buildForms(t, "prog-search")
	want := answers(t, target.Options{Exec: f.full, NoCache: true}, "work n s", "add_item:4 it", "walk%return $retval")
	// Answers name the binary probed: compare them with the path replaced.
	check := func(t *testing.T, o target.Options, bin string) {
		t.Helper()
		o.NoCache = true
		if got := strings.ReplaceAll(answers(t, o, "work n s", "add_item:4 it", "walk%return $retval"), bin, f.full); got != strings.ReplaceAll(want, "probe_prog_search", "probe_prog") {
			t.Errorf("answers:\n%s\nwant the unstripped binary's:\n%s", got, want)
		}
	}
	for _, c := range []struct {
		name  string
		bin   string // the stripped binary probed
		debug string // where the debug file goes, DIR standing for the binary's directory, DEBUG for the debug root
	}{
		{"debuglink in the binary's directory", f.linked, "DIR/prog-dbg.debug"},
		{"debuglink in DIR/.debug", f.linked, "DIR/.debug/prog-dbg.debug"},
		{"debuglink under the debug root", f.linked, "DEBUG/DIR/prog-dbg.debug"},
		{"distribution PATH.debug", f.stripped, "DEBUG/DIR/prog.debug"},
		{"distribution PATH", f.stripped, "DEBUG/DIR/prog"},
		{"OpenEmbedded", f.stripped, "DIR/.debug/prog"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, debugRoot := t.TempDir(), t.TempDir()
			atHost(t, t.TempDir(), debugRoot)
			bin := filepath.Join(dir, "prog")
			place(t, c.bin, bin)
			dst := strings.NewReplacer("DEBUG/", debugRoot+"/", "DIR", strings.TrimPrefix(dir, "/")).Replace(c.debug)
			if strings.HasPrefix(c.debug, "DIR") {
				dst = "/" + dst
			}
			place(t, f.debug, dst)
			if ok, trace := debugOf(t, target.Options{Exec: bin}); !ok {
				t.Fatalf("%s not found (%s)", dst, trace)
			}
			check(t, target.Options{Exec: bin}, bin)
		})
	}
	t.Run("build-id directory", func(t *testing.T) {
		dir, debugRoot := t.TempDir(), t.TempDir()
		atHost(t, t.TempDir(), debugRoot)
		bin := filepath.Join(dir, "prog")
		place(t, f.stripped, bin)
		id := buildID(t, f.full)
		place(t, f.debug, filepath.Join(debugRoot, ".build-id", id[:2], id[2:]+".debug"))
		check(t, target.Options{Exec: bin}, bin)
	})
	t.Run("another build refused", func(t *testing.T) {
		dir := t.TempDir()
		atHost(t, t.TempDir(), t.TempDir())
		bin := filepath.Join(dir, "prog")
		place(t, f.stripped, bin)
		place(t, f.other, filepath.Join(dir, "prog.debug"))
		if ok, trace := debugOf(t, target.Options{Exec: bin}); ok || !strings.Contains(trace, "prog.debug: not used as the debug information of "+bin+": has another build-id") {
			t.Errorf("a debug file of another build: DWARF %v, trace %q", ok, trace)
		}
	})
	t.Run("writable by others refused", func(t *testing.T) {
		dir := t.TempDir()
		atHost(t, t.TempDir(), t.TempDir())
		bin := filepath.Join(dir, "prog")
		place(t, f.stripped, bin)
		dbg := filepath.Join(dir, "prog.debug")
		place(t, f.debug, dbg)
		if err := os.Chmod(dbg, 0o666); err != nil {
			t.Fatal(err)
		}
		if ok, trace := debugOf(t, target.Options{Exec: bin}); ok || !strings.Contains(trace, "another user could change it") {
			t.Errorf("a world-writable debug file: DWARF %v, trace %q", ok, trace)
		}
		if os.Geteuid() != 0 {
			return
		}
		// Another user's file next to root's binary.
		if err := os.Chmod(dbg, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dbg, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if ok, trace := debugOf(t, target.Options{Exec: bin}); ok || !strings.Contains(trace, "owned by uid 65534") {
			t.Errorf("another user's debug file: DWARF %v, trace %q", ok, trace)
		}
	})
	t.Run("symfs", func(t *testing.T) {
		atHost(t, t.TempDir(), "/usr/lib/debug")
		root := t.TempDir()
		// The binary is in the symfs tree only, behind an absolute link
		// that must resolve within the tree.
		place(t, f.stripped, filepath.Join(root, "opt/app/prog"))
		if err := os.MkdirAll(filepath.Join(root, "usr/bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/opt/app/prog", filepath.Join(root, "usr/bin/prog")); err != nil {
			t.Fatal(err)
		}
		id := buildID(t, f.full)
		place(t, f.debug, filepath.Join(root, "usr/lib/debug/.build-id", id[:2], id[2:]+".debug"))
		o := target.Options{Exec: "/usr/bin/prog", Symfs: root, NoCache: true}
		tg, err := target.Open(o)
		if err != nil {
			t.Fatal(err)
		}
		path, dwarf := tg.Path, tg.HasDWARF()
		tg.Close()
		if path != "/opt/app/prog" || !dwarf {
			t.Fatalf("--symfs: path %q, DWARF %v; want /opt/app/prog with DWARF", path, dwarf)
		}
		check(t, o, "/opt/app/prog")
	})
}

// A binary without a build-id is checked by the CRC-32 its .gnu_debuglink
// records.
func TestSeparateDebugCRC(t *testing.T) {
	f := buildForms(t, "prog-nobuildid", "-Wl,--build-id=none")
	if buildID(t, f.full) != "" {
		t.Fatal("built with a build-id")
	}
	atHost(t, t.TempDir(), t.TempDir())
	dir := t.TempDir()
	bin := filepath.Join(dir, "prog")
	place(t, f.stripped, bin)
	dbg := filepath.Join(dir, "prog.debug")
	place(t, f.debug, dbg)
	if ok, trace := debugOf(t, target.Options{Exec: bin}); !ok {
		t.Fatalf("the debug file with the right CRC was not used: %s", trace)
	}
	// One byte more: another CRC.
	b, _ := os.ReadFile(dbg)
	writeFile(t, dbg+".new", append(b, 0))
	if err := os.Rename(dbg+".new", dbg); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dbg, 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, trace := debugOf(t, target.Options{Exec: bin}); ok || !strings.Contains(trace, "its CRC-32 is not the one .gnu_debuglink records") {
		t.Errorf("a changed debug file: DWARF %v, trace %q", ok, trace)
	}
	// A distribution's place cannot be checked without a build-id.
	debugRoot := t.TempDir()
	atHost(t, t.TempDir(), debugRoot)
	place(t, f.debug, debugRoot+bin+".debug")
	if ok, trace := debugOf(t, target.Options{Exec: bin}); ok || !strings.Contains(trace, "the image has no build-id and no .gnu_debuglink to check it by") {
		t.Errorf("an unverifiable distribution file: DWARF %v, trace %q", ok, trace)
	}
}

func buildID(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(testenv.Tool(t, "readelf"), "-n", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if _, id, ok := strings.Cut(l, "Build ID: "); ok {
			return strings.TrimSpace(id)
		}
	}
	return ""
}

// perf's build-id cache: the debug file kept beside perf's copy of the
// binary is used after the places on disk, the copy's symbols for a binary
// without any; an entry another user could have written is not.
func TestSeparateDebugPerfCache(t *testing.T) {
	f := buildForms(t, "prog-perfcache")
	atHost(t, t.TempDir(), t.TempDir())
	c := &perfcache.Cache{Root: filepath.Join(testenv.Home(t), ".debug")}
	bid, real, err := c.Add(f.stripped)
	if err != nil {
		t.Fatal(err)
	}
	place(t, f.debug, filepath.Join(c.Dir(real, bid), "debug"))
	bin := filepath.Join(t.TempDir(), "prog")
	place(t, f.stripped, bin)
	if ok, trace := debugOf(t, target.Options{Exec: bin, PerfCache: c}); !ok || !strings.Contains(trace, "perf's build-id cache copy used for "+bin) {
		t.Errorf("the cache's debug file: DWARF %v, trace %q", ok, trace)
	}
	if ok, _ := debugOf(t, target.Options{Exec: bin}); ok {
		t.Error("DWARF found without the cache")
	}
	if err := os.Chmod(c.Dir(real, bid), 0o777); err != nil {
		t.Fatal(err)
	}
	if ok, trace := debugOf(t, target.Options{Exec: bin, PerfCache: c}); ok || !strings.Contains(trace, "another user could change it") {
		t.Errorf("a world-writable cache entry: DWARF %v, trace %q", ok, trace)
	}
}

// A module's separate debug file (the distributions' -dbg .ko under the
// debug root) is checked as a program's is before it is read: of the
// module's build, and owned by no one who could plant it.
func TestModuleDebugChecks(t *testing.T) {
	cc, ld, objcopy := testenv.Tool(t, "gcc"), testenv.Tool(t, "ld"), testenv.Tool(t, "objcopy")
	dir := t.TempDir()
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	// Two builds of a module-like relocatable object with a build-id.
	mod := func(name, body string) string {
		src := filepath.Join(dir, name+".c")
		writeFile(t, src, []byte("int demo_fn(int x) { "+body+" }\n"))
		run(cc, "-c", "-g", "-O2", "-o", src+".o", src)
		ko := filepath.Join(dir, name+".ko")
		run(ld, "-r", "--build-id", "-o", ko, src+".o")
		return ko
	}
	full, other := mod("demo", "return x + 1;"), mod("other", "return x * 3;")
	debug, otherDebug := filepath.Join(dir, "demo.debug"), filepath.Join(dir, "other.debug")
	run(objcopy, "--only-keep-debug", full, debug)
	run(objcopy, "--only-keep-debug", other, otherDebug)
	stripped := filepath.Join(dir, "stripped.ko")
	run(objcopy, "--strip-debug", full, stripped)

	for _, c := range []struct {
		name  string
		debug string
		mode  os.FileMode
		owner int // -1: the test's user
		want  bool
		trace string
	}{
		{"its own build", debug, 0o644, -1, true, ""},
		{"another build refused", otherDebug, 0o644, -1, false, "has another build-id"},
		{"writable by others refused", debug, 0o666, -1, false, "another user could change it"},
		{"another user's refused", debug, 0o644, 65534, false, "owned by uid 65534"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.owner >= 0 && os.Geteuid() != 0 {
				t.Skip("needs root to plant another user's file")
			}
			debugRoot := t.TempDir()
			atHost(t, t.TempDir(), debugRoot)
			ko := filepath.Join(t.TempDir(), "demo.ko")
			place(t, stripped, ko)
			dst := debugRoot + ko + ".debug"
			place(t, c.debug, dst)
			if err := os.Chmod(dst, c.mode); err != nil {
				t.Fatal(err)
			}
			if c.owner >= 0 {
				if err := os.Chown(dst, c.owner, c.owner); err != nil {
					t.Fatal(err)
				}
			}
			ok, trace := debugOf(t, target.Options{Module: ko})
			if ok != c.want || !strings.Contains(trace, c.trace) {
				t.Errorf("%s: DWARF %v (want %v), trace %q (want %q)", dst, ok, c.want, trace, c.trace)
			}
		})
	}
}
