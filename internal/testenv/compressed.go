package testenv

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/atomicfile"
)

// CompressionForms are the ways objcopy compresses debug sections:
// SHF_COMPRESSED with zlib or zstd, and GNU's legacy .zdebug_ sections.
var CompressionForms = []string{"zlib", "zstd", "zlib-gnu"}

// Compressed returns a copy of the ELF image at path whose debug sections
// objcopy compressed (--compress-debug-sections=form, one of
// CompressionForms). Copies are made once and kept under
// CacheDir()/test/compressed, keyed by the image's content, the form and
// objcopy's version. A missing objcopy (binutils-aarch64-linux-gnu's for
// arm64 images) ends tb with Missing.
func Compressed(tb testing.TB, path, form string) string {
	tb.Helper()
	tool := "objcopy"
	if f, err := elf.Open(path); err == nil {
		if f.Machine == elf.EM_AARCH64 {
			tool = "aarch64-linux-gnu-objcopy"
		}
		f.Close()
	}
	objcopy := Tool(tb, tool)
	ver, err := exec.Command(objcopy, "--version").Output()
	if err != nil {
		tb.Fatalf("objcopy --version: %v", err)
	}
	id := pathIdentity(path)
	if id == "" {
		tb.Fatalf("%s: cannot read it", path)
	}
	key := hashStrings("compressed-v1", string(ver), id, form)
	root := Scratch("compressed")
	if root == "" {
		root = tb.TempDir()
	}
	dir := filepath.Join(root, key[:32])
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(path), ".elf")+"-"+form+filepath.Ext(path))
	if _, err := os.Stat(out); err == nil {
		return out
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	f, err := atomicfile.Create(out, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Abort()
	if b, err := exec.Command(objcopy, "--compress-debug-sections="+form, path, f.Name()).CombinedOutput(); err != nil {
		tb.Fatalf("objcopy --compress-debug-sections=%s %s: %v\n%s", form, path, err, b)
	}
	// Concurrent tests may make the same copy: either one put in place wins.
	if err := f.Commit(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// UseIndexCache points gprobe's index cache ($XDG_CACHE_HOME/gprobe) at
// CacheDir()/test/xdg, so that test runs share warm indexes and nothing is
// written to the user's home. Call it from TestMain, before any test runs.
func UseIndexCache() {
	d := Scratch("xdg")
	if d == "" {
		d, _ = os.MkdirTemp("", "gprobe-test-xdg-")
	}
	os.Setenv("XDG_CACHE_HOME", d)
}
