package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Kernel is one of the real kernels the tests use. scripts/provision.sh
// caches, under CacheDir()/RELEASE, its bootable vmlinuz, the matching -dbg
// vmlinux (DWARF 5), a source subset and the virtio modules the qemu guests
// load.
type Kernel struct {
	// Release is the kernel's uname -r.
	Release string
	// Version is the kernel version its tracefs features follow ("6.1").
	Version string
	// Arch is the kernel's architecture as Go names it: "amd64" (the
	// zero value) or "arm64".
	Arch string
	// Built is set for the kernel scripts/build-kernel.sh builds from
	// source (Extra Boot Config, boot-time tracing, user_events): its
	// directory also holds the bootconfig tool.
	Built bool
	// NoDebugInfo is set for a kernel built without debug information:
	// its vmlinux has symbols only, and it has no BTF
	// (/sys/kernel/btf/vmlinux).
	NoDebugInfo bool
}

var (
	// Linux61 is Debian bookworm's linux-image-6.1.0-56-cloud-amd64: kprobes, kretprobes.
	Linux61 = &Kernel{Release: "6.1.0-56-cloud-amd64", Version: "6.1", Arch: "amd64"}
	// Linux612 is linux-image-6.12.117+deb12-cloud-amd64-unsigned: fprobe,
	// tracepoint and event probes, BTF arguments, hist triggers.
	Linux612 = &Kernel{Release: "6.12.117+deb12-cloud-amd64", Version: "6.12", Arch: "amd64"}
	// Linux61Arm64 is linux-image-6.1.0-56-cloud-arm64-unsigned: ARMv8
	// kprobes (pointer authentication, BTI), booted under
	// qemu-system-aarch64 -M virt.
	Linux61Arm64 = &Kernel{Release: "6.1.0-56-cloud-arm64", Version: "6.1", Arch: "arm64"}
	// Linux612Arm64 is linux-image-6.12.117+deb12-cloud-arm64-unsigned:
	// fprobes and BTF arguments on arm64.
	Linux612Arm64 = &Kernel{Release: "6.12.117+deb12-cloud-arm64", Version: "6.12", Arch: "arm64"}
	// LinuxBuilt is Linux 6.12 built by scripts/build-kernel.sh from
	// Debian's linux-source-6.12 (tinyconfig plus
	// scripts/kernel/gprobe.config): what Debian's kernels lack, Extra
	// Boot Config, boot-time tracing and user_events, with kprobes,
	// uprobes, fprobes and hist triggers; x86-64, no debug information.
	LinuxBuilt = &Kernel{Release: "6.12.117-gprobe", Version: "6.12", Arch: "amd64", Built: true, NoDebugInfo: true}
)

// Bootconfig is the bootconfig tool built from the kernel's own source
// (tools/bootconfig), for a Built kernel; "" otherwise.
func (k *Kernel) Bootconfig() string {
	if !k.Built {
		return ""
	}
	return filepath.Join(k.Dir(), "bootconfig")
}

// Dir is where scripts/provision.sh puts the kernel's artifacts.
func (k *Kernel) Dir() string { return filepath.Join(CacheDir(), k.Release) }

// Image is the bootable vmlinuz.
func (k *Kernel) Image() string { return filepath.Join(k.Dir(), "vmlinuz") }

// Vmlinux is the -dbg vmlinux matching Image (for a NoDebugInfo kernel,
// its vmlinux: symbols only). For Linux61, $GPROBE_VMLINUX overrides it.
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
	Heavy(tb, "tests on a real kernel's vmlinux")
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

// BTFForms returns the kernel as a machine without its debug package sees
// it, made once from the -dbg vmlinux with objcopy and cached under
// CacheDir()/test/btf: the vmlinux without DWARF (--strip-debug: its symbol
// table and .BTF remain) and its raw .BTF section (what the running kernel
// serves as /sys/kernel/btf/vmlinux). A missing vmlinux ends tb as
// RequireVmlinux does.
func BTFForms(tb testing.TB, k *Kernel) (stripped, raw string) {
	tb.Helper()
	vmlinux, _ := RequireVmlinux(tb, k)
	objcopy := Tool(tb, "objcopy")
	st, err := os.Stat(vmlinux)
	if err != nil {
		tb.Fatal(err)
	}
	root := Scratch("btf")
	if root == "" {
		root = tb.TempDir()
	}
	key := hashStrings("btf-forms-v1", vmlinux, fmt.Sprint(st.Size(), st.ModTime().UnixNano()))
	dir := filepath.Join(root, k.Release+"-"+key[:16])
	stripped, raw = filepath.Join(dir, "vmlinux-nodwarf"), filepath.Join(dir, "btf")
	if _, err := os.Stat(raw); err == nil {
		return stripped, raw
	}
	tmp, err := os.MkdirTemp(root, ".btf-*")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for _, args := range [][]string{
		{"--strip-debug", vmlinux, filepath.Join(tmp, "vmlinux-nodwarf")},
		{"--dump-section", ".BTF=" + filepath.Join(tmp, "btf"), vmlinux, os.DevNull},
	} {
		if out, err := exec.Command(objcopy, args...).CombinedOutput(); err != nil {
			tb.Fatalf("objcopy %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// Another test process may have made them meanwhile: either rename
	// wins, and both made the same files.
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(raw); serr != nil {
			tb.Fatalf("keeping the BTF forms of %s: %v", vmlinux, err)
		}
	}
	return stripped, raw
}

// ErrStaleKernel: the cached built kernel was configured from an older
// scripts/kernel/gprobe.config than the repository's.
var ErrStaleKernel = errors.New("the built kernel is stale")

// CheckBuiltConfig reports (wrapping ErrStaleKernel) an option of the
// repository's scripts/kernel/gprobe.config that the cached built kernel's
// config does not have, so that a test never boots a kernel built from an
// older fragment (scripts/build-kernel.sh, run by scripts/provision.sh,
// rebuilds it). It returns nil for a kernel that is not Built, or when
// its config is not cached (what is missing is Check's to report).
func (k *Kernel) CheckBuiltConfig() error {
	if !k.Built {
		return nil
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	fragment, err := os.ReadFile(filepath.Join(root, "scripts", "kernel", "gprobe.config"))
	if err != nil {
		return err
	}
	config, err := os.ReadFile(filepath.Join(k.Dir(), "config"))
	if err != nil {
		return nil
	}
	if opt := missingOption(string(fragment), string(config)); opt != "" {
		return fmt.Errorf("%w: %s lacks %s of scripts/kernel/gprobe.config (run scripts/provision.sh built)", ErrStaleKernel, filepath.Join(k.Dir(), "config"), opt)
	}
	return nil
}

// missingOption returns the first line of the Kconfig fragment (CONFIG_X=V;
// V "n" for an option turned off) that config, a .config, does not
// satisfy, or "".
func missingOption(fragment, config string) string {
	set := map[string]string{}
	for _, line := range strings.Split(config, "\n") {
		if opt, val, ok := strings.Cut(line, "="); ok && strings.HasPrefix(opt, "CONFIG_") {
			set[opt] = val
		}
	}
	for _, line := range strings.Split(fragment, "\n") {
		line = strings.TrimSpace(line)
		opt, want, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		got, on := set[opt]
		if want == "n" && on || want != "n" && got != want {
			return line
		}
	}
	return ""
}
