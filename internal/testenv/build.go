package testenv

import (
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/gprobe/gprobe/internal/atomicfile"
)

// BuildC compiles the C source src (a path relative to the test's
// directory, kept as written so the DWARF names it the same way every
// time) with compiler cc and flags into a binary called name, and returns
// the binary's path. Builds are kept under CacheDir()/test/cc, keyed by the
// compiler's version, the flags, the working directory, the source and the
// name, so
// a second run (and the perf answers cached for the binary) reuse them.
// A missing compiler ends tb with Missing.
func BuildC(tb testing.TB, cc, src, name string, flags ...string) string {
	tb.Helper()
	return BuildCSources(tb, cc, []string{src}, name, flags...)
}

// BuildCSources is BuildC for a program of several source files.
func BuildCSources(tb testing.TB, cc string, srcs []string, name string, flags ...string) string {
	tb.Helper()
	ccPath := Tool(tb, cc)
	ver, err := exec.Command(ccPath, "--version").Output()
	if err != nil {
		tb.Fatalf("%s --version: %v", cc, err)
	}
	wd, _ := os.Getwd()
	parts := []string{"cc-v1", ccPath, string(ver), wd}
	for _, src := range srcs {
		code, err := os.ReadFile(src)
		if err != nil {
			tb.Fatal(err)
		}
		parts = append(parts, src, string(code))
	}
	key := hashStrings(append(parts, strings.Join(flags, "\x00"), name)...)
	root := Scratch("cc")
	if root == "" {
		root = tb.TempDir()
	}
	dir := filepath.Join(root, key[:32])
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	tmp, err := os.MkdirTemp(root, ".build-*")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	args := append(append(append([]string{}, flags...), "-o", filepath.Join(tmp, name)), srcs...)
	if out, err := exec.Command(ccPath, args...).CombinedOutput(); err != nil {
		tb.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
	}
	// Another test process may have built the same binary meanwhile:
	// either rename wins and both binaries are identical.
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(bin); serr != nil {
			tb.Fatalf("keeping the build of %s: %v", srcs, err)
		}
	}
	return bin
}

var (
	gprobeMu    sync.Mutex
	gprobeBuilt = map[string]string{}
)

// Gprobe returns a static gprobe binary built from the module's current
// sources (see BuildGprobe), or fails tb.
func Gprobe(tb testing.TB) string {
	tb.Helper()
	Heavy(tb, "tests of the built gprobe binary")
	p, err := BuildGprobe()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// BuildGprobe builds gprobe with scripts/build.sh from the sources of the
// module holding the working directory, statically (CGO_ENABLED=0, so the
// same file runs on the host and in the qemu guests), once per source
// tree: every package's tests, and every later run with the same
// sources, use the same file under CacheDir()/test/gprobe (its --version
// names the revision of the tree it was built from, one with the same
// sources).
func BuildGprobe() (string, error) { return BuildGprobeFor(runtime.GOARCH) }

// BuildGprobeFor is BuildGprobe for the architecture goarch ("arm64" for
// the arm64 guests), cross-compiled.
func BuildGprobeFor(goarch string) (string, error) {
	repo, err := repoRoot()
	if err != nil {
		return "", err
	}
	key, err := sourceKey(repo, false)
	if err != nil {
		return "", fmt.Errorf("hashing gprobe's sources: %w", err)
	}
	if goarch != runtime.GOARCH {
		key = hashStrings(key, "GOARCH="+goarch)
	}
	gprobeMu.Lock()
	defer gprobeMu.Unlock()
	if p, ok := gprobeBuilt[key]; ok {
		return p, nil
	}
	root := Scratch("gprobe")
	if root == "" {
		if root, err = os.MkdirTemp("", "gprobe-build-"); err != nil {
			return "", err
		}
	}
	bin := filepath.Join(root, key[:32], "gprobe")
	if _, err := os.Stat(bin); err != nil {
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			return "", err
		}
		tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
		// scripts/build.sh: what is released is what is tested.
		cmd := exec.Command("sh", filepath.Join(repo, "scripts", "build.sh"), tmp)
		cmd.Env = append(os.Environ(), "GOARCH="+goarch)
		if out, err := cmd.CombinedOutput(); err != nil {
			os.Remove(tmp)
			return "", fmt.Errorf("building gprobe: %v\n%s", err, out)
		}
		if err := CheckStatic(tmp); err != nil {
			return "", err
		}
		if err := os.Rename(tmp, bin); err != nil {
			return "", err
		}
	}
	gprobeBuilt[key] = bin
	return bin, nil
}

// StaticTestBinary returns the test binary of package pkg (an import path
// of this module) built with CGO_ENABLED=0, for running a package's tests
// inside a qemu guest, which has no C library. It is built once per source
// tree, like BuildGprobe.
func StaticTestBinary(tb testing.TB, pkg string) string {
	tb.Helper()
	Heavy(tb, "tests run inside a qemu guest")
	repo := Repo(tb)
	key, err := sourceKey(repo, true)
	if err != nil {
		tb.Fatal(err)
	}
	root := Scratch("testbin")
	if root == "" {
		root = tb.TempDir()
	}
	bin := filepath.Join(root, key[:32], strings.ReplaceAll(pkg, "/", "_")+".test")
	buildStatic(tb, bin, repo, runtime.GOARCH, "test", "-c", pkg)
	return bin
}

// buildStatic runs go ARGS... -o bin (in dir, "" for the working
// directory) with CGO_ENABLED=0 for goarch, unless bin exists: built
// beside it and renamed, never half-written.
func buildStatic(tb testing.TB, bin, dir, goarch string, args ...string) {
	tb.Helper()
	if _, err := os.Stat(bin); err == nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		tb.Fatal(err)
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	cmd := exec.Command("go", append(append(args[:1:1], "-o", tmp), args[1:]...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOARCH="+goarch)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		tb.Fatalf("go %s for %s: %v\n%s", strings.Join(args, " "), goarch, err, out)
	}
	if err := CheckStatic(tmp); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, bin); err != nil {
		tb.Fatal(err)
	}
}

// BuildGoPackage builds the main package pkg of this module (an import
// path, or a directory relative to the test's) statically for goarch, for
// running in a qemu guest, and returns the binary's path. Like
// StaticTestBinary, it is built once per source tree and architecture.
// (BuildGo builds the programs with a go.mod of their own.)
func BuildGoPackage(tb testing.TB, pkg, goarch string) string {
	tb.Helper()
	Heavy(tb, "programs run inside a qemu guest")
	repo := Repo(tb)
	key, err := sourceKey(repo, false)
	if err != nil {
		tb.Fatal(err)
	}
	wd, _ := os.Getwd()
	key = hashStrings(key, pkg, wd, goarch)
	root := Scratch("gobin")
	if root == "" {
		root = tb.TempDir()
	}
	bin := filepath.Join(root, key[:32], filepath.Base(pkg))
	buildStatic(tb, bin, "", goarch, "build", "-trimpath", pkg)
	return bin
}

// sourceKey hashes what a build depends on: every Go file of the module
// (test files too when tests is set), go.mod, go.sum and the toolchain.
func sourceKey(repo string, tests bool) (string, error) {
	var files []string
	err := filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != repo && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && (tests || !strings.HasSuffix(name, "_test.go")) || name == "go.mod" || name == "go.sum" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	parts := []string{"gprobe-v1", runtime.Version(), os.Getenv("GOFLAGS")}
	for _, f := range files {
		parts = append(parts, strings.TrimPrefix(f, repo), fileIdentity(f))
	}
	return hashStrings(parts...), nil
}

// CheckStatic fails for a dynamically linked executable (the qemu guests
// have no C library).
func CheckStatic(p string) error {
	f, err := elf.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked", p)
		}
	}
	return nil
}

// BuildSymbols returns a shared object (built by gcc, cached like BuildC)
// whose .symtab and .dynsym hold one global function symbol for each of
// names, in that order, each on a one-byte function: a way to ask perf how
// it shows arbitrary symbol names (perf probe -x OBJ -F '*'). A name must
// not hold a double quote, a newline or a NUL.
func BuildSymbols(tb testing.TB, name string, names []string) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString(".text\n")
	for _, n := range names {
		if strings.ContainsAny(n, "\"\n\x00") {
			tb.Fatalf("BuildSymbols: %q cannot be an assembler symbol", n)
		}
		fmt.Fprintf(&b, ".globl \"%s\"\n.type \"%s\",@function\n\"%s\":\n\tret\n.size \"%s\",1\n", n, n, n, n)
	}
	src := b.String()
	dir := Scratch("symbols")
	if dir == "" {
		dir = tb.TempDir()
	}
	// The source's path is part of BuildC's key: name it by its content.
	path := filepath.Join(dir, hashStrings("symbols-v1", src)[:32]+".s")
	if _, err := os.Stat(path); err != nil {
		if err := atomicfile.Write(path, []byte(src)); err != nil {
			tb.Fatal(err)
		}
	}
	return BuildC(tb, "gcc", path, name, "-shared", "-nostdlib")
}

// NamesBuild is one build of the programs of C++ and Rust names
// (cmd/gprobe/testdata/cxx/names.cpp, cmd/gprobe/testdata/rust/names.rs):
// namespaces, classes, overloads, templates, Rust modules, closures,
// traits and generics, for the tests of demangled names.
type NamesBuild struct {
	Name     string // the binary's name, unique among NamesBuilds
	Compiler string // g++, clang++ or rustc
	Flags    []string
}

// Rust reports a Rust build.
func (b NamesBuild) Rust() bool { return b.Compiler == "rustc" }

// NamesBuilds lists the builds the tests use: g++ and clang++ at -O0 and
// -O2 with DWARF 4 and 5, and rustc's debug and release builds, and a
// debug build with v0 symbol names.
func NamesBuilds() []NamesBuild {
	var bs []NamesBuild
	for _, cc := range []string{"g++", "clang++"} {
		for _, o := range []string{"-O0", "-O2"} {
			for _, d := range []string{"-gdwarf-4", "-gdwarf-5"} {
				bs = append(bs, NamesBuild{"names-" + cc + o + d, cc, []string{o, d}})
			}
		}
	}
	return append(bs,
		NamesBuild{"names-rs-debug", "rustc", []string{"-g"}},
		NamesBuild{"names-rs-release", "rustc", []string{"-g", "-O"}},
		NamesBuild{"names-rs-v0", "rustc", []string{"-g", "-C", "symbol-mangling-version=v0"}})
}

// Build compiles b (as BuildC does, once per compiler version, flags and
// source) and returns the binary's path. A missing compiler ends tb with
// Missing.
func (b NamesBuild) Build(tb testing.TB) string {
	tb.Helper()
	src := filepath.Join(Repo(tb), "cmd", "gprobe", "testdata", "cxx", "names.cpp")
	if b.Rust() {
		src = filepath.Join(Repo(tb), "cmd", "gprobe", "testdata", "rust", "names.rs")
	}
	return BuildC(tb, b.Compiler, src, b.Name, b.Flags...)
}
