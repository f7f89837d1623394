package testenv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TracefsRoot is where the tests use tracefs.
const TracefsRoot = "/sys/kernel/tracing"

// Tracefs returns this machine's tracefs root, mounting tracefs there when
// nothing is mounted (a fresh machine starts without it; gprobe itself
// mounts it the same way, emit/tracefs.Open), and requires a writable
// uprobe_events, which every real-probe test of this machine needs (its
// kernel has no kprobes: those tests run in the qemu guests).
//
// testenv does not import emit/tracefs, so that the packages below it can
// use testenv in their own tests.
func Tracefs(tb testing.TB) string {
	tb.Helper()
	Heavy(tb, "tests with real probes in tracefs")
	readme := filepath.Join(TracefsRoot, "README")
	if _, err := os.Stat(readme); err != nil {
		if err := syscall.Mount("nodev", TracefsRoot, "tracefs", 0, ""); err != nil {
			Missing(tb, "tracefs is not mounted on %s and mounting it failed: %v (run as root)", TracefsRoot, err)
		}
	}
	ue := filepath.Join(TracefsRoot, "uprobe_events")
	f, err := os.OpenFile(ue, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		Missing(tb, "writable %s: %v (run as root)", ue, err)
	}
	f.Close()
	return TracefsRoot
}
