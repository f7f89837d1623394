package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// Kernel is one of the real Debian kernels the tests use. scripts/provision.sh
// caches, under CacheDir()/RELEASE, its bootable vmlinuz, the matching -dbg
// vmlinux (DWARF 5), a source subset and the virtio modules the qemu guests
// load.
type Kernel struct {
	// Release is the kernel's uname -r.
	Release string
	// Version is the kernel version its tracefs features follow ("6.1").
	Version string
}

var (
	// Linux61 is Debian bookworm's linux-image-6.1.0-56-cloud-amd64: kprobes, kretprobes.
	Linux61 = &Kernel{Release: "6.1.0-56-cloud-amd64", Version: "6.1"}
	// Linux612 is linux-image-6.12.117+deb12-cloud-amd64-unsigned: fprobe,
	// tracepoint and event probes, BTF arguments, hist triggers.
	Linux612 = &Kernel{Release: "6.12.117+deb12-cloud-amd64", Version: "6.12"}
)

// Dir is where scripts/provision.sh puts the kernel's artifacts.
func (k *Kernel) Dir() string { return filepath.Join(CacheDir(), k.Release) }

// Image is the bootable vmlinuz.
func (k *Kernel) Image() string { return filepath.Join(k.Dir(), "vmlinuz") }

// Vmlinux is the -dbg vmlinux matching Image. For Linux61, $GPROBE_VMLINUX
// overrides it.
func (k *Kernel) Vmlinux() string {
	if v := os.Getenv("GPROBE_VMLINUX"); v != "" && k == Linux61 {
		return v
	}
	return filepath.Join(k.Dir(), "vmlinux")
}

// Source is the kernel source subset (-s). For Linux61, $GPROBE_KSRC
// overrides it.
func (k *Kernel) Source() string {
	if v := os.Getenv("GPROBE_KSRC"); v != "" && k == Linux61 {
		return v
	}
	return filepath.Join(k.Dir(), "src")
}

// RequireVmlinux returns the kernel's -dbg vmlinux and source subset, or
// skips tb when they are not cached (fails with GPROBE_REQUIRE_VMLINUX=1,
// as in CI).
func RequireVmlinux(tb testing.TB, k *Kernel) (vmlinux, src string) {
	tb.Helper()
	vmlinux, src = k.Vmlinux(), k.Source()
	if _, err := os.Stat(vmlinux); err != nil {
		MissingKernel(tb, "Debian %s vmlinux (%v)", k.Version, err)
	}
	return vmlinux, src
}

// MissingKernel ends tb for a missing kernel artifact (a vmlinux, debug
// modules, a kernel image): a skip, or a failure under
// GPROBE_REQUIRE_VMLINUX=1, as in CI.
func MissingKernel(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if os.Getenv("GPROBE_REQUIRE_VMLINUX") == "1" {
		tb.Fatalf("missing (GPROBE_REQUIRE_VMLINUX=1): "+format+"; run scripts/provision.sh", args...)
	}
	tb.Skipf("missing: "+format+"; run scripts/provision.sh", args...)
}
