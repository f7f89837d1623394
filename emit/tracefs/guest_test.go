package tracefs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOnDebian61Kernel boots Debian's 6.1 cloud kernel (the kprobe-capable
// kernel of the qemu tests) under qemu with this test binary as its init's
// payload, and runs the real-kernel tests there: every kprobe and uprobe
// error case of probedef's table must be refused by that kernel with the
// message and caret the validator predicts, and a uprobe's life cycle must
// work. It needs qemu-system-x86_64, a static busybox and the cached
// vmlinuz (scripts/provision.sh); GPROBE_REQUIRE_VMLINUX=1 makes their
// absence fatal.
func TestOnDebian61Kernel(t *testing.T) {
	if os.Getenv("GPROBE_IN_GUEST") == "1" {
		t.Skip("already in the guest")
	}
	cache := os.Getenv("GPROBE_CACHE")
	if cache == "" {
		cache = "/var/cache/gprobe"
	}
	vmlinuz := filepath.Join(cache, "6.1.0-56-cloud-amd64", "vmlinuz")
	qemu, qerr := exec.LookPath("qemu-system-x86_64")
	_, verr := os.Stat(vmlinuz)
	busybox := "/bin/busybox"
	_, berr := os.Stat(busybox)
	if qerr != nil || verr != nil || berr != nil {
		msg := fmt.Sprintf("needs qemu-system-x86_64, %s and %s (scripts/provision.sh)", busybox, vmlinuz)
		if os.Getenv("GPROBE_REQUIRE_VMLINUX") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"/tracefs.test": self, "/bin/busybox": busybox,
		"/cases.txt": "../probedef/testdata/syntax_errors.txt"}
	initScript := "#!/bin/busybox sh\n" +
		"/bin/busybox mount -t proc proc /proc\n" +
		"/bin/busybox mount -t sysfs sys /sys\n" +
		"cd /\n" +
		"GPROBE_IN_GUEST=1 GPROBE_REQUIRE_PERF=1 GPROBE_SYNTAX_CASES=/cases.txt /tracefs.test -test.v " +
		"-test.run 'TestKernelAgreesWithValidator|TestFeaturesOfThisKernel|TestUprobeLifecycle|TestNoKprobes'\n" +
		"echo GUEST-EXIT $?\n" +
		"/bin/busybox poweroff -f\n"
	var initrd bytes.Buffer
	w := newCpio(&initrd)
	for _, d := range []string{"/bin", "/proc", "/sys", "/tmp"} {
		w.dir(d)
	}
	w.file("/init", []byte(initScript), 0o755)
	w.symlink("/bin/sh", "busybox")
	for name, src := range files {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		w.file(name, b, 0o755)
	}
	w.close()
	dir := t.TempDir()
	rd := filepath.Join(dir, "initrd.cpio")
	if err := os.WriteFile(rd, initrd.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, "-accel", "tcg", "-cpu", "max", "-m", "1024", "-smp", "1",
		"-kernel", vmlinuz, "-initrd", rd, "-append", "console=ttyS0 panic=-1 quiet rdinit=/init",
		"-nographic", "-no-reboot", "-monitor", "none")
	out, err := cmd.CombinedOutput()
	log := strings.ReplaceAll(string(out), "\r", "")
	if err != nil && !strings.Contains(log, "GUEST-EXIT") {
		t.Fatalf("qemu: %v\n%s", err, log)
	}
	if !strings.Contains(log, "GUEST-EXIT 0\n") || !strings.Contains(log, "--- PASS: TestKernelAgreesWithValidator") {
		t.Fatalf("the tests failed on the 6.1 kernel:\n%s", log)
	}
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "validator agree") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

// cpioWriter writes an initramfs in the "newc" cpio format.
type cpioWriter struct {
	b   *bytes.Buffer
	ino int
}

func newCpio(b *bytes.Buffer) *cpioWriter { return &cpioWriter{b: b, ino: 1} }

func (w *cpioWriter) entry(name string, mode uint32, data []byte) {
	name = strings.TrimPrefix(name, "/")
	fmt.Fprintf(w.b, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		w.ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	w.ino++
	w.b.WriteString(name + "\x00")
	w.pad()
	w.b.Write(data)
	w.pad()
}

func (w *cpioWriter) pad() {
	for w.b.Len()%4 != 0 {
		w.b.WriteByte(0)
	}
}

func (w *cpioWriter) dir(name string)                         { w.entry(name, 0o040755, nil) }
func (w *cpioWriter) file(name string, b []byte, perm uint32) { w.entry(name, 0o100000|perm, b) }
func (w *cpioWriter) symlink(name, target string)             { w.entry(name, 0o120777, []byte(target)) }
func (w *cpioWriter) close()                                  { w.entry("TRAILER!!!", 0, nil) }
