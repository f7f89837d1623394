package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/perfcache"
)

// Stripped binaries and their separate debug information, laid out where
// distributions, gdb and perf look for it, against perf probe 6.1.
//
// The oracle is perf's answer on the unstripped binary at the same path: a
// stripped binary with the right debug file must answer as the binary it
// was stripped from. gprobe's answers must be that; perf's differ where it
// does not find the file or misreads it, each a mistake checked here
// (docs/differences.md):
//   - perf looks for the file .gnu_debuglink names only in its working
//     directory (and ./.debug): run from the binary's directory it finds
//     it, from elsewhere it answers as for the stripped binary alone;
//   - perf loads the symbols of a return probe or -F from a debug file in a
//     distribution's place, whose sections have no file offsets, and so
//     writes uprobes outside the code (add_item%return at 0x2a0 instead of
//     0x12a0), or fails to load them: with --symfs it reads symbols only
//     from under that directory;
//   - perf takes a distribution's file on its name alone: one of another
//     build (the -O0 build of the same source) gives that build's answers,
//     where gprobe refuses it for its build-id and answers as perf does
//     for the binary alone;
//   - with --symfs, perf reads only the symbols of the copy of the binary
//     there, not its DWARF.
//
// separateBuild is one C program in the forms the layouts need.
type separateBuild struct {
	full, debug, stripped, strippedAll, other string
	id                                        string
}

// separateForms builds prog.c and derives its separate debug file and
// stripped copies with objcopy (kept in the test cache, so that perf's
// answers are cached too).
func separateForms(t *testing.T, name string, flags ...string) separateBuild {
	t.Helper()
	objcopy := testenv.Tool(t, "objcopy")
	full := testenv.BuildC(t, "gcc", "testdata/uprobe/prog.c", name, append([]string{"-O2", "-g"}, flags...)...)
	other := testenv.BuildC(t, "gcc", "testdata/uprobe/prog.c", "O0-"+name, append([]string{"-O0", "-g"}, flags...)...)
	dir := filepath.Join(testenv.Scratch("debugsearch"), "forms-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := separateBuild{full: full, other: other, debug: filepath.Join(dir, "prog.debug"),
		stripped: filepath.Join(dir, "stripped"), strippedAll: filepath.Join(dir, "stripped-all")}
	run := func(args ...string) {
		if out, err := exec.Command(objcopy, args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	b.id = buildIDOrNone(full)
	// Checkouts at other paths build other binaries (DWARF names the
	// sources by absolute path) into the shared test cache: the copies
	// are made again unless they are of this very build.
	if st, err := os.Stat(b.strippedAll); err != nil || newer(full, st.ModTime()) || buildIDOrNone(b.strippedAll) != b.id || buildIDOrNone(b.stripped) != b.id {
		run("--only-keep-debug", full, b.debug)
		// The debuglink's CRC is the debug file's, read from where
		// objcopy finds it (the working directory or a path).
		run("--strip-debug", "--add-gnu-debuglink="+b.debug, full, b.stripped)
		run("--strip-all", "--add-gnu-debuglink="+b.debug, full, b.strippedAll)
	}
	return b
}

// buildIDOrNone is the GNU build-id of the ELF file path, "" when it has
// none or cannot be read (buildID fails the test).
func buildIDOrNone(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if s := f.Section(".note.gnu.build-id"); s != nil {
		data, _ := s.Data()
		if len(data) > 16 {
			return hexString(data[16:])
		}
	}
	return ""
}

// newer reports whether path changed after t.
func newer(path string, t time.Time) bool {
	st, err := os.Stat(path)
	return err != nil || st.ModTime().After(t)
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// layout makes a directory tree under the test cache (stable paths, so
// perf's answers are cached): files maps a path within it to the file to
// copy there.
func layout(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	root := filepath.Join(testenv.Scratch("debugsearch"), name)
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	for rel, src := range files {
		dst := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// separateQuestions are asked of every layout (-s is made absolute: perf
// runs in other directories).
var separateQuestions = [][]string{
	{"-D", "work"}, {"-D", "work n s"}, {"-D", "work:3"}, {"-D", "add_item%return $retval"},
	{"-D", "prog.c:20"}, {"-D", "walk it->next"}, {"-V", "work"}, {"-V", "add_item:4"},
	{"-L", "work"}, {"-F", "*item*"},
}

// How the debug file is found: the oracle is the unstripped binary,
// except for debugStale (the binary alone: the file must be refused) and
// debugNone (the layout itself: there is no DWARF anywhere).
type separateKind int

const (
	debugFound separateKind = iota
	debugLink               // also: perf finds it when run from the binary's directory
	debugStale
	debugNone
)

func TestPerfDiffSeparateDebug(t *testing.T) {
	perf := testenv.RequirePerf(t)
	stats := &diffStats{}
	for _, build := range []struct {
		name  string
		flags []string
	}{{"prog-sep", nil}, {"libprog-sep.so", []string{"-shared", "-fPIC"}}} {
		t.Run(build.name, func(t *testing.T) {
			lib := false
			b := separateForms(t, build.name, build.flags...)
			if b.id == "" {
				t.Fatal("the build has no build-id")
			}
			questions := separateQuestions
			if build.flags != nil {
				// Which file perf 6.1 lists a shared library's -F from
				// (its .symtab alone, or with the .dynsym's exported
				// names again) depends on the order it tries the places
				// a debug file may be in: -F is asked of the debuglink
				// layouts only (below).
				lib = true
			}
			separateDebugDiff(t, perf, b, build.name, questions, lib, stats)
		})
	}
	stats.report(t)
}

// separateDebugDiff asks questions of every layout of build b (a program
// or a shared library), named name.
func separateDebugDiff(t *testing.T, perf *testenv.Perf, b separateBuild, name string, questions [][]string, lib bool, stats *diffStats) {
	src, err := filepath.Abs("testdata/uprobe")
	if err != nil {
		t.Fatal(err)
	}
	bin := func(dir string) string { return filepath.Join(dir, "bin", "prog") }
	// perf's build-id cache (HOME/.debug) holding the stripped binary
	// (its "elf", with symbols) and, with debug, its debug file.
	cached := func(debug bool) func(t *testing.T, home string) {
		return func(t *testing.T, home string) {
			c := &perfcache.Cache{Root: filepath.Join(home, ".debug")}
			bid, real, err := c.Add(b.stripped)
			if err != nil {
				t.Fatal(err)
			}
			if debug {
				dbg, err := os.ReadFile(b.debug)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(c.Dir(real, bid), "debug"), dbg, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	cases := []struct {
		name  string
		files map[string]string // within the layout; "bin/prog" is probed
		symfs string            // within the layout
		kind  separateKind
		home  func(t *testing.T, home string)
	}{
		// .gnu_debuglink: the binary's directory, its .debug/.
		{name: "debuglink-dir", files: map[string]string{"bin/prog": b.stripped, "bin/prog.debug": b.debug}, kind: debugLink},
		{name: "debuglink-dotdebug", files: map[string]string{"bin/prog": b.stripped, "bin/.debug/prog.debug": b.debug}, kind: debugLink},
		{name: "debuglink-stripped-all", files: map[string]string{"bin/prog": b.strippedAll, "bin/prog.debug": b.debug}, kind: debugLink},
		// OpenEmbedded's DIR/.debug/BASE (perf's list, no --symfs needed).
		{name: "openembedded", files: map[string]string{"bin/prog": b.stripped, "bin/.debug/prog": b.debug}},
		// The distributions' places, under --symfs.
		{name: "build-id", files: map[string]string{"bin/prog": b.stripped, "root/usr/lib/debug/.build-id/" + b.id[:2] + "/" + b.id[2:] + ".debug": b.debug}, symfs: "root"},
		{name: "fedora", files: map[string]string{"bin/prog": b.stripped, "root/usr/lib/debug/@BIN@.debug": b.debug}, symfs: "root"},
		{name: "ubuntu", files: map[string]string{"bin/prog": b.stripped, "root/usr/lib/debug/@BIN@": b.debug}, symfs: "root"},
		// A distribution's file of another build.
		{name: "stale", files: map[string]string{"bin/prog": b.stripped, "root/usr/lib/debug/@BIN@.debug": b.other}, symfs: "root", kind: debugStale},
		// --symfs holding a copy of the binary: its symbols ...
		{name: "symfs-symbols", files: map[string]string{"bin/prog": strippedAllNoLink(t, b), "root/@BIN@": b.stripped}, symfs: "root", kind: debugNone},
		// ... and its DWARF.
		{name: "symfs-dwarf", files: map[string]string{"bin/prog": b.stripped, "root/@BIN@": b.full}, symfs: "root"},
		// perf's build-id cache: symbols of a binary without any from
		// the copy there (perf's dso__load), its debug file (gprobe).
		{name: "perf-cache-elf", files: map[string]string{"bin/prog": strippedAllNoLink(t, b)}, kind: debugNone, home: cached(false)},
		{name: "perf-cache-debug", files: map[string]string{"bin/prog": b.stripped}, home: cached(true)},
	}
	full := layout(t, name+"/unstripped", map[string]string{"bin/prog": b.full})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.name = name + "/" + c.name
			root := filepath.Join(testenv.Scratch("debugsearch"), c.name)
			files := map[string]string{}
			for rel, f := range c.files {
				files[strings.ReplaceAll(rel, "@BIN@", strings.TrimPrefix(bin(root), "/"))] = f
			}
			root = layout(t, c.name, files)
			alone := layout(t, c.name+"-alone", map[string]string{"bin/prog": c.files["bin/prog"]})
			// perf and gprobe share a build-id cache of the test's own
			// (perf adds every -x binary to it); the oracles get empty ones.
			home := testenv.Home(t)
			if c.home != nil {
				c.home(t, home)
			}
			t.Setenv("HOME", home)
			probe := func(args ...string) result { return perf.ProbeIn(home, args...) }
			oracle := func(args ...string) result { return perf.ProbeIn(testenv.Home(t), args...) }
			for _, q := range questions {
				if lib && q[0] == "-F" && c.kind != debugLink {
					continue
				}
				args := append([]string{"-x", bin(root), "-s", src}, q...)
				if c.symfs != "" {
					args = append([]string{"--symfs", filepath.Join(root, c.symfs)}, args...)
				}
				g, p := runGprobe(args...), probe(args...)
				var want result
				switch c.kind {
				case debugFound, debugLink:
					want = unreplace(oracle(append([]string{"-x", bin(full), "-s", src}, q...)...), full, root)
					if q[0] == "-F" && c.kind == debugLink {
						// A separate debug file's .symtab is the list: the
						// unstripped binary's -F adds its .dynsym (each
						// exported name twice), one that perf finds
						// (run from the binary's directory) does not.
						want = perf.At(filepath.Dir(bin(root))).ProbeIn(home, args...)
					}
				case debugStale:
					// (without --symfs: perf then reads the binary's
					// symbols only from there)
					want = unreplace(oracle(append([]string{"-x", bin(alone), "-s", src}, q...)...), alone, root)
				case debugNone:
					want = p
				}
				if !same(want, g) {
					t.Errorf("gprobe %s:\n%s\nwant (see the kinds of oracle):\n%s\nperf: %s", strings.Join(args, " "), g, want, p)
					continue
				}
				if same(p, g) {
					stats.add(&stats.same, "")
					continue
				}
				why := "a distribution's debug file misread"
				switch c.kind {
				case debugLink:
					// Run from the binary's directory perf finds the file
					// and answers as gprobe does.
					if pd := perf.At(filepath.Dir(bin(root))).ProbeIn(home, args...); !same(pd, g) {
						t.Errorf("perf %s run from the binary's directory:\n%s\ngprobe: %s", strings.Join(args, " "), pd, g)
						continue
					}
					why = "debuglink looked up in the working directory only"
				case debugStale:
					why = "a debug file of another build used"
				}
				if c.symfs != "" && c.kind == debugFound && strings.HasPrefix(c.name, name+"/symfs") {
					why = "the --symfs copy's DWARF not read"
				}
				if c.home != nil {
					why = "the debug file of its build-id cache not read for DWARF"
				}
				stats.add(&stats.midInsn, "perf wrong ("+why+"): "+c.name+": "+strings.Join(q, " "))
			}
		})
	}
}

// strippedAllNoLink is the binary with neither symbols nor debuglink.
func strippedAllNoLink(t *testing.T, b separateBuild) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(b.debug), "stripped-all-nolink")
	if st, err := os.Stat(p); err != nil || newer(b.full, st.ModTime()) || buildIDOrNone(p) != b.id {
		if out, err := exec.Command(testenv.Tool(t, "objcopy"), "--strip-all", b.full, p).CombinedOutput(); err != nil {
			t.Fatalf("objcopy: %v\n%s", err, out)
		}
	}
	return p
}

// replaceArgs replaces old by new in every argument.
func replaceArgs(args []string, old, new string) []string {
	if old == "" {
		return args
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, old, new)
	}
	return out
}

// unreplace replaces from by to in an answer.
func unreplace(r result, from, to string) result {
	r.Stdout = strings.ReplaceAll(r.Stdout, from, to)
	r.Stderr = strings.ReplaceAll(r.Stderr, from, to)
	return r
}

// sameOut compares exit status and stdout only.
func sameOut(a, b result) bool { return a.Code == b.Code && a.Stdout == b.Stdout }

// TestPerfDiffShippedLibraries asks perf and gprobe the same questions of
// libraries as Debian ships them: libc.so.6 with its detached debug file
// from libc6-dbg (/usr/lib/debug/.build-id, found by build-id), whose
// public names are often weak aliases of internal ones (puts of
// _IO_puts, free of __libc_free), and libstdc++.so.6 without DWARF, which
// calls libc's functions through PLT entries that perf's map names
// (strlen@plt: `-D strlen` probes the PLT entry).
func TestPerfDiffShippedLibraries(t *testing.T) {
	perf := testenv.RequirePerf(t)
	libs := map[string][]string{
		"/usr/lib/x86_64-linux-gnu/libc.so.6": {
			"puts", "puts%return", "free", "free%return", "malloc%return", "printf",
			"fopen", "strlen", "str*", "abort", "puts:3", "fclose file",
			// -V and -L answered through the alternative search
			"-V puts", "-V fclose", "-V free:3", "-L puts",
		},
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6": {
			"strlen", "strlen%return", "memcpy", "mem*", "strlen@plt", "abort", "__cxa_*",
		},
	}
	stats := &diffStats{}
	for lib, defs := range libs {
		if _, err := os.Stat(lib); err != nil {
			t.Skipf("%s: %v (scripts/provision.sh installs it)", lib, err)
		}
		home := testenv.Home(t)
		for _, def := range defs {
			args := []string{"-x", lib, "-D", def}
			if q := strings.Fields(def); strings.HasPrefix(def, "-") {
				args = append([]string{"-x", lib}, q...)
			}
			p, g := perf.ProbeIn(home, args...), runGprobe(args...)
			if !same(p, g) {
				t.Errorf("gprobe %s:\n%s\nperf:\n%s", strings.Join(args, " "), g, p)
				continue
			}
			stats.add(&stats.same, "")
		}
	}
	stats.report(t)
}
