package testenv

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// GoProgram is the directory of one of the Go programs the tests build,
// testdata/goprogs/NAME at the repository root: each is a main package
// with its own go.mod, kept out of the module's ./... .
func GoProgram(tb testing.TB, name string) string {
	tb.Helper()
	return filepath.Join(Repo(tb), "testdata", "goprogs", name)
}

// BuildGo builds the Go program in dir (a main package with its own
// go.mod, see GoProgram) for goarch ("" for the host's) with CGO_ENABLED=0,
// so the binary is static and runs in the qemu guests too, and returns its
// path. flags go to go build (-gcflags=all=-N -l ...). Builds are kept under
// CacheDir()/test/go, keyed by the toolchain, goarch, the flags and every
// file of dir, so a second run (and perf's answers cached for the binary)
// reuse them. Building is a second or two with a warm Go build cache: not
// for -short.
func BuildGo(tb testing.TB, dir, goarch string, flags ...string) string {
	tb.Helper()
	Heavy(tb, "building a Go test program")
	goTool := Tool(tb, "go")
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	// The binary's DWARF names its sources by absolute path (gprobe -L
	// reads them there), so the directory is part of the key, with every
	// file under it.
	abs, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	parts := []string{"go-v2", runtime.Version(), goarch, strings.Join(flags, "\x00"), abs}
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(abs, p)
		parts = append(parts, rel, fileIdentity(p))
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	key := hashStrings(parts...)
	root := Scratch("go")
	if root == "" {
		root = tb.TempDir()
	}
	name := filepath.Base(dir)
	if goarch != runtime.GOARCH {
		name += "." + goarch
	}
	bin := filepath.Join(root, key[:32], name)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		tb.Fatal(err)
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	args := append(append([]string{"build"}, flags...), "-o", tmp, ".")
	cmd := exec.Command(goTool, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOARCH="+goarch, "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		tb.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		tb.Fatal(err)
	}
	return bin
}
