// Package testenv is what gprobe's tests share: the rule for a missing
// prerequisite (skip on a developer's machine, fail in CI), the real
// components the tests use (perf probe with an answer cache, trace-cmd,
// tracefs, C compilers, the gprobe binary) and the golden-file update flag.
//
// CI sets GPROBE_REQUIRE_PERF=1 (scripts/test.sh): then nothing the suite
// needs may be missing, and a missing piece fails the test that needed it
// instead of skipping it.
//
// Only tests import this package.
package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Update is the one flag that rewrites golden files: go test ./PKG -update.
var Update = flag.Bool("update", false, "rewrite golden files instead of comparing with them")

// Strict reports whether every prerequisite is required (GPROBE_REQUIRE_PERF=1, as in CI).
func Strict() bool { return os.Getenv("GPROBE_REQUIRE_PERF") == "1" }

// Missing ends tb for a missing prerequisite: a skip, or a failure when
// Strict. what says what is missing and how to get it.
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if Strict() {
		tb.Fatalf("missing (GPROBE_REQUIRE_PERF=1): "+format, args...)
	}
	tb.Skipf("missing: "+format+" (scripts/provision.sh installs it; GPROBE_REQUIRE_PERF=1 makes this fatal)", args...)
}

// Heavy skips tb under go test -short, the inner loop (docs/testing.md):
// tests that ask perf probe, boot a qemu guest, start debuginfod, build the
// gprobe binary, read a real kernel's vmlinux, write real probes or record
// real traces, or otherwise run for more than about a second. The
// prerequisites that only such tests need (RequirePerf, RequireVmlinux,
// Tracefs, Gprobe, StaticTestBinary, StartDebuginfod, qemu.Require) call it
// themselves; what means "heavy" is decided here and only here. what names
// the work, for the skip message.
func Heavy(tb testing.TB, what string) {
	tb.Helper()
	if testing.Short() {
		tb.Skipf("-short: skipping %s (scripts/test.sh runs it)", what)
	}
}

// Tool returns the path of the program name, or ends tb with Missing.
func Tool(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(tb, "%s is not installed", name)
	}
	return p
}

// Tools checks several programs at once.
func Tools(tb testing.TB, names ...string) {
	tb.Helper()
	var missing []string
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		Missing(tb, "%s not installed", strings.Join(missing, ", "))
	}
}

// CacheDir is where provisioning keeps kernels and the tests keep what
// they can reuse between runs: $GPROBE_CACHE, else /var/cache/gprobe.
func CacheDir() string {
	if d := os.Getenv("GPROBE_CACHE"); d != "" {
		return d
	}
	return "/var/cache/gprobe"
}

// Scratch returns a cache subdirectory for reusable test artefacts, or ""
// when the cache cannot be written (then callers work uncached).
func Scratch(name string) string {
	d := filepath.Join(CacheDir(), "test", name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return ""
	}
	return d
}

// Repo returns the repository root (the directory holding go.mod).
func Repo(tb testing.TB) string {
	tb.Helper()
	d, err := repoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func repoRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		p := filepath.Dir(d)
		if p == d {
			return "", errors.New("testenv: no go.mod above the working directory")
		}
		d = p
	}
}

// hashStrings is a hex SHA-256 of parts separated by NUL bytes.
func hashStrings(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
