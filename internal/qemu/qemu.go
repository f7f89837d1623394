// Package qemu boots a real kprobe-capable kernel (Debian's 6.1 or 6.12
// cloud kernel for x86-64 or arm64, or the 6.12 kernel the project builds,
// see [Kernel]) under qemu with a busybox initramfs holding a static gprobe, runs a shell
// script in it and hands back the script's output, exit status and files.
//
// It is a test-support library: the development machines' kernel has no
// kprobes, so tests that must see kprobe events fire (cmd/gprobe, record)
// run their steps inside this guest.
//
//	qemu.Require(t, qemu.Linux61) // skips, or fails under GPROBE_REQUIRE_VMLINUX=1
//	res, err := qemu.Run(ctx, qemu.Options{
//		Kernel:  qemu.Linux61,
//		Script:  "gprobe add --from /defs && cat /sys/kernel/tracing/trace > /tmp/t",
//		Files:   map[string][]byte{"/defs": defs},
//		Collect: []string{"/tmp/t"},
//	})
//	// res.Output, res.Status, res.Files["/tmp/t"]
//
// The guest: busybox's applets on PATH, gprobe at /bin/gprobe, proc, sysfs,
// devtmpfs and tracefs (/sys/kernel/tracing) mounted, /sys/kernel/btf/vmlinux
// present, the kernel log cleared (the boot's is in /gprobe-qemu/boot.dmesg),
// the script run by /bin/sh in /root with stdin from /dev/null. One
// CPU unless Options.CPUs says more, 512 MiB, no network; the root file
// system is the initramfs.
//
// The script's output and exit status come back over a channel of their
// own, framed by markers carrying a per-run nonce, so they survive a guest
// crash: the second serial port (ttyS1) of an x86-64 guest, a virtio
// console (hvc0) on arm64, whose -M virt machine has one UART. Collected
// files come back on a virtio disk: the guest loads the virtio modules
// (scripts/provision.sh caches them beside the kernel), writes a tar
// archive to /dev/vda and the host reads the disk image; the serial line
// would carry only ~130 KB/s. The kernel console (ttyS0, ttyAMA0 on arm64,
// booted "quiet") is kept apart in Result.Console for diagnosis. Nothing is
// cached: every Run builds its initramfs and disk in a temporary directory
// and removes them.
//
// An arm64 kernel boots under qemu-system-aarch64 -M virt -cpu max (TCG
// whatever the host, with pointer authentication's cheaper
// implementation-defined algorithm), with the arm64 busybox and an arm64
// gprobe.
package qemu

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gprobe/gprobe/internal/testenv"
)

// Kernel is a kernel the harness can boot (testenv.Linux61, testenv.Linux612).
type Kernel = testenv.Kernel

// The kernels, as testenv names them.
var (
	Linux61       = testenv.Linux61
	Linux612      = testenv.Linux612
	Linux61Arm64  = testenv.Linux61Arm64
	Linux612Arm64 = testenv.Linux612Arm64
	LinuxBuilt    = testenv.LinuxBuilt
)

// machine is how qemu runs a kernel of one architecture.
type machine struct {
	qemu    string   // the qemu binary
	args    []string // machine and CPU
	console string   // the kernel console's device
	// channel is the guest device carrying the script's output; args
	// connect the kernel console to a file and the channel to stdout.
	channel     string
	channelArgs func(consoleFile string) []string
	diskArgs    func(disk string) []string
	// bootModules: the virtio modules are loaded before anything else
	// (the channel needs them), not only to collect files.
	bootModules bool
	// holdChannel: the channel stays open on fd 3 from stty to the end.
	// A virtio console resets its settings (raw, no echo) at its last
	// close (TTY_DRIVER_RESET_TERMIOS), and would then turn each "\n"
	// into "\r\n"; its last close waits until the host has everything.
	holdChannel bool
	// native: the host runs this architecture, so KVM may serve.
	native bool
}

func machineOf(k *Kernel) machine {
	if k.Arch == "arm64" {
		return machine{
			qemu: "qemu-system-aarch64",
			// pauth-impdef: TCG computes pointer authentication codes with
			// a cheap algorithm instead of QARMA (several times faster).
			args:    []string{"-M", "virt", "-cpu", "max,pauth-impdef=on"},
			console: "ttyAMA0",
			channel: "/dev/hvc0",
			channelArgs: func(console string) []string {
				return []string{"-serial", "file:" + console,
					"-device", "virtio-serial-pci", "-chardev", "stdio,id=gprobe-ch", "-device", "virtconsole,chardev=gprobe-ch"}
			},
			diskArgs: func(disk string) []string {
				return []string{"-drive", "file=" + disk + ",format=raw,if=none,id=gprobe-disk", "-device", "virtio-blk-pci,drive=gprobe-disk"}
			},
			bootModules: true,
			holdChannel: true,
			native:      runtime.GOARCH == "arm64",
		}
	}
	return machine{
		qemu:    "qemu-system-x86_64",
		args:    []string{"-cpu", "max"},
		console: "ttyS0",
		channel: "/dev/ttyS1",
		// ttyS0 the kernel console, ttyS1 the channel.
		channelArgs: func(console string) []string { return []string{"-serial", "file:" + console, "-serial", "stdio"} },
		diskArgs:    func(disk string) []string { return []string{"-drive", "file=" + disk + ",format=raw,if=virtio"} },
		native:      runtime.GOARCH == "amd64",
	}
}

// modulePath is where scripts/provision.sh puts a virtio module of k.
func modulePath(k *Kernel, name string) string {
	return filepath.Join(k.Dir(), "virtio", name+".ko")
}

// DefaultTimeout bounds a Run whose Options.Timeout is zero. A boot under
// TCG takes a few seconds; the margin is for a loaded machine.
const DefaultTimeout = 90 * time.Second

// CollectLimit bounds the total size of the files a Run collects (the
// size of the sparse disk image they travel on).
const CollectLimit = 1 << 30

// virtioModules are the modules, in load order, that give k's guest a
// virtio disk (6.1 builds virtio, its ring and PCI transport as modules;
// 6.12 only the block driver): scripts/provision.sh lists them in
// virtio/order beside the modules.
func virtioModules(k *Kernel) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(k.Dir(), "virtio", "order"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v (run scripts/provision.sh)", ErrUnavailable, err)
	}
	return strings.Fields(string(b)), nil
}

var (
	// ErrUnavailable: qemu, the kernel image, its virtio modules or a
	// static busybox is missing.
	ErrUnavailable = errors.New("qemu guest unavailable")
	// ErrOptions: Options that cannot be turned into a guest.
	ErrOptions = errors.New("bad qemu options")
	// ErrTimeout: the guest did not finish in time; qemu was killed.
	ErrTimeout = errors.New("qemu guest timed out")
	// ErrNoStatus: the guest stopped (panic, crash) before the script ended.
	ErrNoStatus = errors.New("qemu guest stopped before the script finished")
	// ErrCollect: the script ended but its files could not be copied out.
	ErrCollect = errors.New("copying files out of the qemu guest failed")
)

// Options describe one guest run.
type Options struct {
	// Kernel is the kernel to boot; nil means Linux61. Its Arch picks the
	// machine, the busybox and the gprobe built for the guest.
	Kernel *Kernel
	// Script is a /bin/sh (busybox ash) script run in the guest.
	Script string
	// Files are extra files for the initramfs: absolute guest path →
	// contents, installed with mode 0755 (so test programs can run).
	Files map[string][]byte
	// Collect lists guest paths copied back after the script ends, into
	// Result.Files. A path that is not a regular file then is left out.
	// Their total size is limited to CollectLimit.
	Collect []string
	// Timeout bounds the whole run (building gprobe, booting, the script,
	// collecting); 0 means DefaultTimeout.
	Timeout time.Duration
	// Gprobe is a static gprobe binary to install as /bin/gprobe; "" is
	// testenv.BuildGprobeFor's for the kernel's architecture (the working
	// directory must be inside the module, as it is in its tests).
	Gprobe string
	// Append is added to the kernel command line.
	Append string
	// CPUs is the number of guest CPUs; 0 means 1.
	CPUs int
	// Initrd, when set, rewrites the initramfs before the boot (the path
	// of the gzip-compressed archive): bootconfig -a appends an Extra
	// Boot Config to it.
	Initrd func(path string) error
}

// Result is what came back from the guest.
type Result struct {
	// Output is the script's stdout and stderr, interleaved.
	Output []byte
	// Status is the script's exit status, -1 if it never finished.
	Status int
	// Files holds the Collect paths that were regular files, by path.
	Files map[string][]byte
	// Console is the kernel console (ttyS0).
	Console []byte
	// Boot is the wall time from starting qemu to the script starting.
	Boot time.Duration
	// Elapsed is the wall time of the whole qemu run.
	Elapsed time.Duration
}

// Check reports (wrapping ErrUnavailable) what is missing to boot the
// guest: qemu for its architecture, the kernel and its virtio modules, a
// static busybox; for the built kernel, a build from the repository's
// configuration fragment (testenv.ErrStaleKernel).
func Check(k *Kernel) error {
	m := machineOf(k)
	if err := k.CheckBuiltConfig(); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if _, err := exec.LookPath(m.qemu); err != nil {
		return fmt.Errorf("%w: %s not found (run scripts/provision.sh)", ErrUnavailable, m.qemu)
	}
	mods, err := virtioModules(k)
	if err != nil {
		return err
	}
	files := []string{k.Image()}
	for _, m := range mods {
		files = append(files, modulePath(k, m))
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			return fmt.Errorf("%w: %s missing (run scripts/provision.sh)", ErrUnavailable, f)
		}
	}
	_, err = busybox(k.Arch)
	return err
}

// Require skips tb when the guest cannot boot here, or fails it when
// GPROBE_REQUIRE_VMLINUX=1 (as in CI), where a missing piece is a defect.
func Require(tb testing.TB, k *Kernel) {
	tb.Helper()
	testenv.Heavy(tb, "qemu guest tests")
	if err := Check(k); err != nil {
		if os.Getenv("GPROBE_REQUIRE_VMLINUX") == "1" {
			tb.Fatal(err)
		}
		tb.Skip(err)
	}
}

// busybox finds a statically linked busybox for arch: the host's
// (Debian's busybox-static), or for arm64 the one scripts/provision.sh
// unpacks from Debian's arm64 busybox-static package (installing that
// package would remove the host's).
func busybox(arch string) (string, error) {
	if arch == "arm64" && runtime.GOARCH != "arm64" {
		p := filepath.Join(testenv.CacheDir(), "busybox-arm64", "busybox")
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: %s missing (run scripts/provision.sh kernel)", ErrUnavailable, p)
		}
		return p, nil
	}
	p, err := exec.LookPath("busybox")
	if err != nil {
		return "", fmt.Errorf("%w: busybox not found (install busybox-static: run scripts/provision.sh)", ErrUnavailable)
	}
	if err := testenv.CheckStatic(p); err != nil {
		return "", fmt.Errorf("%w: %v (install busybox-static)", ErrUnavailable, err)
	}
	return p, nil
}

// Run boots the guest, runs o.Script and collects o.Collect. A non-zero
// script status is not an error: it is in Result.Status. When qemu ran,
// the Result is returned even with an error (ErrTimeout, ErrNoStatus,
// ErrCollect), so
// callers can show the partial output and console.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Kernel == nil {
		o.Kernel = Linux61
	}
	if err := Check(o.Kernel); err != nil {
		return nil, err
	}
	if err := validate(o); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()

	dir, err := os.MkdirTemp("", "gprobe-qemu-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if o.Gprobe == "" {
		if o.Gprobe, err = testenv.BuildGprobeFor(o.Kernel.Arch); err != nil {
			return nil, err
		}
	}
	nonce := make([]byte, 8)
	rand.Read(nonce)
	mark := "@@gprobe-qemu:" + hex.EncodeToString(nonce)
	initrd := filepath.Join(dir, "initrd.gz")
	if err := writeInitramfs(initrd, o, mark); err != nil {
		return nil, err
	}
	if o.Initrd != nil {
		if err := o.Initrd(initrd); err != nil {
			return nil, fmt.Errorf("%w: rewriting the initramfs: %v", ErrOptions, err)
		}
	}
	return boot(ctx, o, dir, initrd, mark)
}

// reserved paths belong to the harness.
var reserved = map[string]bool{"/init": true, "/bin/busybox": true, "/bin/sh": true, "/bin/gprobe": true, "/gprobe-qemu": true}

func validate(o Options) error {
	for p := range o.Files {
		if !path.IsAbs(p) || path.Clean(p) != p || p == "/" || strings.ContainsRune(p, 0) {
			return fmt.Errorf("%w: file path %q is not a clean absolute path", ErrOptions, p)
		}
		for q := p; q != "/"; q = path.Dir(q) {
			if reserved[q] {
				return fmt.Errorf("%w: file path %q is reserved by the harness", ErrOptions, p)
			}
		}
	}
	for _, p := range o.Collect {
		if !path.IsAbs(p) || strings.ContainsRune(p, 0) {
			return fmt.Errorf("%w: collect path %q is not absolute", ErrOptions, p)
		}
	}
	return nil
}

// writeInitramfs writes the gzip-compressed newc archive: busybox, gprobe,
// the caller's files, the script and /init.
func writeInitramfs(out string, o Options, mark string) error {
	bb, err := busybox(o.Kernel.Arch)
	if err != nil {
		return err
	}
	m := machineOf(o.Kernel)
	a := newArchive()
	for _, d := range []string{"proc", "sys", "dev", "tmp", "root", "sbin", "usr/bin", "usr/sbin"} {
		a.add(entry{name: d, mode: modeDir | 0o755})
	}
	// The kernel opens /dev/console for init before devtmpfs is mounted.
	a.add(entry{name: "dev/console", mode: modeChar | 0o600, rmaj: 5, rmin: 1})
	for name, src := range map[string]string{"bin/busybox": bb, "bin/gprobe": o.Gprobe} {
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		a.add(entry{name: name, mode: modeRegular | 0o755, data: data})
	}
	a.add(entry{name: "bin/sh", mode: modeSymlink | 0o777, data: []byte("busybox")})
	for p, data := range o.Files {
		a.add(entry{name: p, mode: modeRegular | 0o755, data: data})
	}
	mods, err := virtioModules(o.Kernel)
	if err != nil {
		return err
	}
	if len(o.Collect) > 0 || m.bootModules {
		for _, m := range mods {
			data, err := os.ReadFile(modulePath(o.Kernel, m))
			if err != nil {
				return fmt.Errorf("%w: %v (run scripts/provision.sh)", ErrUnavailable, err)
			}
			a.add(entry{name: "gprobe-qemu/" + m + ".ko", mode: modeRegular | 0o644, data: data})
		}
	}
	a.add(entry{name: "gprobe-qemu/script", mode: modeRegular | 0o755, data: []byte(o.Script)})
	a.add(entry{name: "init", mode: modeRegular | 0o755, data: []byte(initScript(m, mark, o.Collect, mods))})

	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed) // the guest decompresses it: speed over size
	if err := a.writeTo(zw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// initScript is the guest's /init. Every block writing to the channel
// opens and closes it: the last close of a serial port waits until the
// UART has sent everything, so nothing is lost when reboot -f follows.
// The guest ends with a reboot, which qemu -no-reboot turns into its exit:
// unlike a power-off, it needs no ACPI.
// Collected files are first copied (pseudo-files such as tracefs's report
// size 0, which tar would trust), then archived onto the virtio disk,
// named by their index.
func initScript(m machine, mark string, collect, modules []string) string {
	var b strings.Builder
	ch := m.channel
	out := ch // where the blocks write
	if m.holdChannel {
		out = "&3"
	}
	fmt.Fprintf(&b, `#!/bin/sh
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tracefs tracefs /sys/kernel/tracing
`)
	if m.bootModules {
		fmt.Fprintf(&b, `for m in %[1]s; do insmod /gprobe-qemu/$m.ko || echo "insmod $m failed" >/dev/console; done
i=0
while [ ! -c %[2]s ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
`, strings.Join(modules, " "), ch)
	}
	if m.holdChannel {
		fmt.Fprintf(&b, "exec 3>%s\n", ch)
	}
	fmt.Fprintf(&b, `stty -F %[1]s raw -echo
`, ch)
	fmt.Fprintf(&b, `# The script's dmesg shows what its steps caused, not the boot's messages
# (TCG under load warns about timers and the IO-APIC).
dmesg -c >/gprobe-qemu/boot.dmesg 2>&1
{
	read up idle </proc/uptime
	echo "%[1]s begin uptime=$up@@"
	cd /root
	/bin/sh /gprobe-qemu/script </dev/null 2>&1
	rc=$?
	echo
	echo "%[1]s end status=$rc@@"
} >%[2]s
`, mark, out)
	if len(collect) > 0 {
		b.WriteString("{\n\tmkdir /gprobe-qemu/out\n")
		for i, p := range collect {
			fmt.Fprintf(&b, "\t[ -f %[1]s ] && cat %[1]s >/gprobe-qemu/out/%[2]d\n", shellQuote(p), i)
		}
		if !m.bootModules {
			fmt.Fprintf(&b, "\tfor m in %s; do insmod /gprobe-qemu/$m.ko || echo \"insmod $m failed\"; done\n", strings.Join(modules, " "))
		}
		fmt.Fprintf(&b, `	i=0
	while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
	cd /gprobe-qemu/out
	set -- *
	st=0
	if [ -e "$1" ]; then tar -cf /dev/vda "$@"; st=$?; sync; fi
	echo "%[1]s files status=$st@@"
} >%[2]s 2>&1
`, mark, out)
	}
	fmt.Fprintf(&b, "echo \"%s done@@\" >%s\n", mark, out)
	if m.holdChannel {
		b.WriteString("exec 3>&-\n")
	}
	b.WriteString("reboot -f\n")
	return b.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Boot deadlines: the script starts 1-3 s after qemu under KVM and 2-15 s
// under TCG on a loaded 2-core machine. A guest that has not reached it by
// then prints nothing more: under KVM it is a KVM that cannot run guests
// (the run is retried with TCG), under TCG a run that fails at once with
// qemu's command line and stderr instead of waiting for the whole Timeout.
var (
	kvmBootDeadline = 30 * time.Second
	tcgBootDeadline = 75 * time.Second
)

// ErrNoBoot: the guest never reached the script.
var ErrNoBoot = errors.New("qemu guest did not boot")

func boot(ctx context.Context, o Options, dir, initrd, mark string) (*Result, error) {
	acc := "tcg"
	if machineOf(o.Kernel).native {
		acc = Accel(o.Kernel.Image())
	}
	res, err := bootWith(ctx, o, dir, initrd, mark, acc)
	if acc == "kvm" && errors.Is(err, ErrNoBoot) && ctx.Err() == nil {
		demoteKVM(err)
		return bootWith(ctx, o, dir, initrd, mark, "tcg")
	}
	return res, err
}

func bootWith(ctx context.Context, o Options, dir, initrd, mark, acc string) (*Result, error) {
	console, disk := filepath.Join(dir, "console"), filepath.Join(dir, "disk")
	m := machineOf(o.Kernel)
	args := append(append([]string{"-accel", acc}, m.args...), "-m", "512M", "-smp", strconv.Itoa(max(1, o.CPUs)),
		// -nodefaults drops the NIC (its iPXE ROM) and VGA; the console
		// and the channel are explicit.
		"-nodefaults", "-display", "none", "-no-reboot")
	args = append(args, m.channelArgs(console)...)
	args = append(args, "-kernel", o.Kernel.Image(), "-initrd", initrd,
		"-append", strings.TrimSpace("console="+m.console+" panic=-1 quiet "+o.Append))
	if len(o.Collect) > 0 {
		f, err := os.Create(disk)
		if err == nil {
			err = f.Truncate(CollectLimit) // sparse
			f.Close()
		}
		if err != nil {
			return nil, err
		}
		args = append(args, m.diskArgs(disk)...)
	}
	cmd := exec.CommandContext(ctx, m.qemu, args...)
	cmd.WaitDelay = 5 * time.Second // never hang on pipes after a kill
	// qemu must not outlive a test binary killed by go test's -timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	ch := &channel{begin: []byte(mark + " begin"), start: start, began: make(chan struct{})}
	cmd.Stdout = ch
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: starting qemu: %v", ErrUnavailable, err)
	}
	deadline := tcgBootDeadline
	if acc == "kvm" {
		deadline = kvmBootDeadline
	}
	var silent atomic.Bool
	stopWatch := make(chan struct{})
	go func() {
		select {
		case <-ch.began:
		case <-stopWatch:
		case <-time.After(deadline):
			silent.Store(true)
			cmd.Process.Kill()
		}
	}()
	waitErr := cmd.Wait()
	close(stopWatch)
	res := &Result{Status: -1, Elapsed: time.Since(start)}
	res.Console, _ = os.ReadFile(console)
	ch.mu.Lock()
	raw, boot := ch.buf.Bytes(), ch.boot
	ch.mu.Unlock()
	res.Boot = boot
	if silent.Load() {
		return res, fmt.Errorf("%w: the script had not started after %v with -accel %s\n  command: %s %s\n  qemu stderr: %s%s",
			ErrNoBoot, deadline, acc, m.qemu, strings.Join(args, " "), strings.TrimSpace(stderr.String()), tail(res))
	}
	perr := parse(raw, mark, len(o.Collect) > 0, res)
	if perr == nil && len(o.Collect) > 0 {
		perr = readDisk(disk, o.Collect, res)
	}

	if ctx.Err() != nil {
		return res, fmt.Errorf("%w after %v: %w%s", ErrTimeout, time.Since(start).Round(time.Millisecond), ctx.Err(), tail(res))
	}
	if perr != nil {
		return res, fmt.Errorf("%w (qemu: %v %s)%s", perr, waitErr, strings.TrimSpace(stderr.String()), tail(res))
	}
	return res, nil
}

// channel accumulates ttyS1 and notes when the script began.
type channel struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	begin []byte
	start time.Time
	boot  time.Duration
	began chan struct{} // closed when begin is first seen
}

func (c *channel) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if c.boot == 0 && bytes.Contains(c.buf.Bytes(), c.begin) {
		c.boot = time.Since(c.start)
		close(c.began)
	}
	return len(p), nil
}

// parse splits the ttyS1 stream into output and status, and checks that
// the files were archived.
func parse(raw []byte, mark string, collect bool, res *Result) error {
	i := bytes.Index(raw, []byte(mark+" begin"))
	if i < 0 {
		return fmt.Errorf("%w: the script never started", ErrNoStatus)
	}
	rest := raw[i:]
	if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[nl+1:]
	} else {
		rest = nil
	}
	// The init script prints one newline before the end marker, so that
	// it starts a line even after output without a trailing newline.
	m := regexp.MustCompile(regexp.QuoteMeta("\n"+mark+" end status=") + `(\d+)@@\n`).FindSubmatchIndex(rest)
	if m == nil {
		res.Output = rest
		return fmt.Errorf("%w: no end marker", ErrNoStatus)
	}
	res.Output = rest[:m[0]]
	res.Status, _ = strconv.Atoi(string(rest[m[2]:m[3]]))
	rest = rest[m[1]:]
	if collect {
		m := regexp.MustCompile(regexp.QuoteMeta(mark+" files status=") + `(\d+)@@\n`).FindSubmatchIndex(rest)
		if m == nil || string(rest[m[2]:m[3]]) != "0" {
			return fmt.Errorf("%w: %s", ErrCollect, bytes.TrimSpace(rest))
		}
		rest = rest[m[1]:]
	}
	if !bytes.Contains(rest, []byte(mark+" done@@")) {
		return fmt.Errorf("%w: the guest stopped before the end of its script", ErrNoStatus)
	}
	return nil
}

// readDisk reads the tar archive the guest wrote to the virtio disk; its
// members are named by their index in collect.
func readDisk(disk string, collect []string, res *Result) error {
	f, err := os.Open(disk)
	if err != nil {
		return err
	}
	defer f.Close()
	res.Files = map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: reading the disk: %v", ErrCollect, err)
		}
		idx, err := strconv.Atoi(h.Name)
		if err != nil || idx < 0 || idx >= len(collect) {
			return fmt.Errorf("%w: unexpected member %q on the disk", ErrCollect, h.Name)
		}
		if res.Files[collect[idx]], err = io.ReadAll(tr); err != nil {
			return fmt.Errorf("%w: reading %s: %v", ErrCollect, collect[idx], err)
		}
	}
}

// tail quotes the end of the output and console for an error message.
func tail(res *Result) string {
	last := func(b []byte, n int) string {
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		return strings.Join(lines, "\n")
	}
	return fmt.Sprintf("\n--- script output (end) ---\n%s\n--- console (end) ---\n%s", last(res.Output, 20), last(res.Console, 20))
}
