package tracefs_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/internal/testenv/qemu"
)

// TestOnDebian61Kernel boots Debian's 6.1 cloud kernel (the kprobe-capable
// kernel of the qemu tests) with this test binary in the initramfs, and runs
// the real-kernel tests there: every kprobe and uprobe error case of
// probedef's table must be refused by that kernel with the message and caret
// the validator predicts, and a uprobe's life cycle must work.
func TestOnDebian61Kernel(t *testing.T) {
	if os.Getenv("GPROBE_IN_GUEST") == "1" {
		t.Skip("already in the guest")
	}
	qemu.Require(t, qemu.Linux61)
	bin, err := os.ReadFile(testenv.StaticTestBinary(t, "github.com/gprobe/gprobe/emit/tracefs"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := os.ReadFile("../probedef/testdata/syntax_errors.txt")
	if err != nil {
		t.Fatal(err)
	}
	res, err := qemu.Run(context.Background(), qemu.Options{
		Kernel:  qemu.Linux61,
		Timeout: 5 * time.Minute,
		Files:   map[string][]byte{"/tracefs.test": bin, "/cases.txt": cases},
		Script: "cd / && GPROBE_IN_GUEST=1 GPROBE_REQUIRE_PERF=1 GPROBE_SYNTAX_CASES=/cases.txt /tracefs.test -test.v " +
			"-test.run 'TestKernelAgreesWithValidator|TestFeaturesOfThisKernel|TestUprobeLifecycle|TestNoKprobes'",
	})
	if err != nil {
		t.Fatal(err)
	}
	log := string(res.Output)
	if res.Status != 0 || !strings.Contains(log, "--- PASS: TestKernelAgreesWithValidator") {
		t.Fatalf("the tests failed on the 6.1 kernel (status %d):\n%s", res.Status, log)
	}
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "validator agree") {
			t.Log(strings.TrimSpace(l))
		}
	}
}
