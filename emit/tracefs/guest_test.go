package tracefs_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gprobe/gprobe/internal/qemu"
	"github.com/gprobe/gprobe/internal/testenv"
)

// TestOnDebian61Kernel boots Debian's 6.1 cloud kernel (the kprobe-capable
// kernel of the qemu tests) with this test binary in the initramfs, and runs
// the real-kernel tests there: every kprobe, uprobe and eprobe error case of
// probedef's table must be refused by that kernel with the message and caret
// the validator predicts, and a uprobe's life cycle must work.
func TestOnDebian61Kernel(t *testing.T) { runInGuest(t, qemu.Linux61, "6.1") }

// TestOnDebian612Kernel is TestOnDebian61Kernel on Debian's 6.12 kernel,
// whose README offers fprobes, tracepoint probes, BTF arguments and entry
// values at return: the validator reads each line with that kernel's
// features, its BTF (/sys/kernel/btf/vmlinux) and its events, and must
// agree with its error_log on every case of the table it can take (the
// fprobe, tprobe and eprobe cases among them); lines of older kernels'
// sections that are valid there must be taken by the kernel too. fprobes,
// tracepoint probes and eprobes are written, listed, enabled and deleted.
func TestOnDebian612Kernel(t *testing.T) { runInGuest(t, qemu.Linux612, "6.12") }

func runInGuest(t *testing.T, k *qemu.Kernel, name string) {
	if os.Getenv("GPROBE_IN_GUEST") == "1" {
		t.Skip("already in the guest")
	}
	qemu.Require(t, k)
	bin, err := os.ReadFile(testenv.StaticTestBinary(t, "github.com/gprobe/gprobe/emit/tracefs"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := os.ReadFile("../probedef/testdata/syntax_errors.txt")
	if err != nil {
		t.Fatal(err)
	}
	res, err := qemu.Run(context.Background(), qemu.Options{
		Kernel:  k,
		Timeout: 5 * time.Minute,
		Files:   map[string][]byte{"/tracefs.test": bin, "/cases.txt": cases},
		Script: "cd / && GPROBE_IN_GUEST=1 GPROBE_REQUIRE_PERF=1 GPROBE_SYNTAX_CASES=/cases.txt /tracefs.test -test.v " +
			"-test.run 'TestKernelAgreesWithValidator|TestFeaturesOfThisKernel|TestUprobeLifecycle|TestNoKprobes|TestDynamicEventsLifecycle'" +
			"; st=$?; dmesg | grep -E 'cut here|WARNING:|BUG:|Oops' && st=1; exit $st",
	})
	if err != nil {
		t.Fatal(err)
	}
	log := string(res.Output)
	if res.Status != 0 || !strings.Contains(log, "--- PASS: TestKernelAgreesWithValidator") ||
		(k == qemu.Linux612 && !strings.Contains(log, "--- PASS: TestDynamicEventsLifecycle")) {
		t.Fatalf("the tests failed on the %s kernel (status %d):\n%s", name, res.Status, log)
	}
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "validator agree") {
			t.Log(strings.TrimSpace(l))
		}
	}
}
