package qemu

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"syscall"

	"errors"
	"fmt"
	"log"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gprobe/gprobe/internal/atomicfile"
	"github.com/gprobe/gprobe/internal/testenv"

	"golang.org/x/sys/unix"
)

// AccelEnv overrides the accelerator choice: "tcg" or "kvm".
const AccelEnv = "GPROBE_QEMU_ACCEL"

// kvmProbeTimeout bounds the KVM probe: a tiny guest that halts at once
// returns from KVM_RUN in microseconds where KVM works.
const kvmProbeTimeout = 3 * time.Second

var (
	accelOnce sync.Once
	accelName atomic.Value // string
)

// Accel is the accelerator the guests use: $GPROBE_QEMU_ACCEL when set,
// else "kvm" when this machine can really run a KVM guest, else "tcg".
// /dev/kvm opening is not enough: in some nested virtual machines it opens
// and even runs a real-mode guest, but a kernel stops for good when it
// leaves real mode ("Probing EDD ... ok", then nothing). So KVM is tried
// twice: a one-instruction guest through the KVM ioctls (fails fast where
// KVM is refused), then image itself booted by qemu, which must print its
// banner within kvmBannerTimeout. The choice is made once per process, kept
// for the machine's boot under CacheDir()/test/qemu-accel, and logged when
// KVM is present but unusable.
func Accel(image string) string {
	accelOnce.Do(func() { accelName.Store(chooseAccel(image)) })
	return accelName.Load().(string)
}

func chooseAccel(image string) string {
	switch v := os.Getenv(AccelEnv); v {
	case "tcg", "kvm":
		return v
	case "":
	default:
		log.Printf("qemu: %s=%q is neither tcg nor kvm; deciding by probing", AccelEnv, v)
	}
	if _, err := os.Stat("/dev/kvm"); err != nil {
		return "tcg"
	}
	bootID, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	memo := filepath.Join(testenv.CacheDir(), "test", "qemu-accel")
	key := strings.TrimSpace(string(bootID)) + " "
	if b, err := os.ReadFile(memo); err == nil && len(bootID) > 0 && strings.HasPrefix(string(b), key) {
		if v := strings.TrimSpace(strings.TrimPrefix(string(b), key)); v == "kvm" || v == "tcg" {
			return v
		}
	}
	choice := "kvm"
	err := probeKVM(kvmProbeTimeout)
	if err == nil {
		err = probeKVMBoot(image, kvmBannerTimeout)
	}
	if err != nil {
		log.Printf("qemu: /dev/kvm is present but cannot run a guest (%v); using TCG (%s=kvm|tcg overrides)", err, AccelEnv)
		choice = "tcg"
	}
	if len(bootID) > 0 && os.MkdirAll(filepath.Dir(memo), 0o755) == nil {
		atomicfile.Write(memo, []byte(key+choice+"\n"))
	}
	return choice
}

// kvmBannerTimeout bounds the boot probe: a kernel prints its banner
// ("Linux version") about 0.5 s after qemu starts under KVM, 2.5 s under TCG.
const kvmBannerTimeout = 10 * time.Second

// probeKVMBoot boots image under KVM with an early console and no root
// file system, and requires its banner within timeout.
func probeKVMBoot(image string, timeout time.Duration) error {
	if image == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "qemu-system-x86_64", "-accel", "kvm", "-cpu", "max", "-m", "256M",
		"-nodefaults", "-display", "none", "-no-reboot", "-serial", "stdio",
		"-kernel", image, "-append", "console=ttyS0 earlyprintk=serial panic=-1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	found := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "Linux version") {
				found <- true
				return
			}
		}
		found <- false
	}()
	select {
	case ok := <-found:
		if ok {
			return nil
		}
		return errors.New("a kernel under qemu -accel kvm ended without printing its banner")
	case <-ctx.Done():
		return fmt.Errorf("a kernel under qemu -accel kvm printed no banner within %v", timeout)
	}
}

// The KVM ioctls (linux/kvm.h) and the one exit reason the probe expects.
const (
	kvmGetAPIVersion       = 0xAE00
	kvmCreateVM            = 0xAE01
	kvmGetVCPUMmapSize     = 0xAE04
	kvmCreateVCPU          = 0xAE41
	kvmSetUserMemoryRegion = 0x4020AE46
	kvmRun                 = 0xAE80
	kvmSetRegs             = 0x4090AE82
	kvmGetSregs            = 0x8138AE83
	kvmSetSregs            = 0x4138AE84
	kvmExitHLT             = 5
	kvmAPIVersion          = 12
)

var errKVMStuck = errors.New("KVM_RUN did not return")

// probeKVM runs a real-mode guest whose only instruction is hlt and
// requires KVM_RUN to come back with KVM_EXIT_HLT within timeout. A KVM_RUN
// that never returns leaves one thread blocked in the ioctl; the process
// goes on with TCG.
func probeKVM(timeout time.Duration) error {
	if runtime.GOARCH != "amd64" {
		return fmt.Errorf("the KVM probe is written for x86-64 hosts, not %s", runtime.GOARCH)
	}
	done := make(chan error, 1)
	go func() { done <- runHaltGuest() }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		return fmt.Errorf("%w within %v", errKVMStuck, timeout)
	}
}

func runHaltGuest() error {
	kvm, err := unix.Open("/dev/kvm", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(kvm)
	ioctl := func(fd int, req, arg uintptr) (uintptr, error) {
		r, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, arg)
		if e != 0 {
			return r, e
		}
		return r, nil
	}
	if v, err := ioctl(kvm, kvmGetAPIVersion, 0); err != nil || v != kvmAPIVersion {
		return fmt.Errorf("KVM_GET_API_VERSION: %d, %v", v, err)
	}
	vmfd, err := ioctl(kvm, kvmCreateVM, 0)
	if err != nil {
		return fmt.Errorf("KVM_CREATE_VM: %w", err)
	}
	vm := int(vmfd)
	defer unix.Close(vm)

	mem, err := unix.Mmap(-1, 0, 0x1000, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return err
	}
	defer unix.Munmap(mem)
	mem[0] = 0xf4 // hlt
	region := struct {
		slot, flags                          uint32
		guestPhys, memorySize, userspaceAddr uint64
	}{guestPhys: 0x1000, memorySize: 0x1000, userspaceAddr: uint64(uintptr(unsafe.Pointer(&mem[0])))}
	if _, err := ioctl(vm, kvmSetUserMemoryRegion, uintptr(unsafe.Pointer(&region))); err != nil {
		return fmt.Errorf("KVM_SET_USER_MEMORY_REGION: %w", err)
	}
	cpufd, err := ioctl(vm, kvmCreateVCPU, 0)
	if err != nil {
		return fmt.Errorf("KVM_CREATE_VCPU: %w", err)
	}
	cpu := int(cpufd)
	defer unix.Close(cpu)
	size, err := ioctl(kvm, kvmGetVCPUMmapSize, 0)
	if err != nil {
		return fmt.Errorf("KVM_GET_VCPU_MMAP_SIZE: %w", err)
	}
	run, err := unix.Mmap(cpu, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return err
	}
	defer unix.Munmap(run)

	// Real mode, code segment at 0: cs.base (offset 0) and cs.selector
	// (offset 12) of struct kvm_sregs.
	var sregs [312]byte
	if _, err := ioctl(cpu, kvmGetSregs, uintptr(unsafe.Pointer(&sregs))); err != nil {
		return fmt.Errorf("KVM_GET_SREGS: %w", err)
	}
	clear(sregs[0:8])
	clear(sregs[12:14])
	if _, err := ioctl(cpu, kvmSetSregs, uintptr(unsafe.Pointer(&sregs))); err != nil {
		return fmt.Errorf("KVM_SET_SREGS: %w", err)
	}
	var regs [18]uint64 // rax..r15, rip, rflags
	regs[16], regs[17] = 0x1000, 0x2
	if _, err := ioctl(cpu, kvmSetRegs, uintptr(unsafe.Pointer(&regs))); err != nil {
		return fmt.Errorf("KVM_SET_REGS: %w", err)
	}
	if _, err := ioctl(cpu, kvmRun, 0); err != nil {
		return fmt.Errorf("KVM_RUN: %w", err)
	}
	// struct kvm_run: request_interrupt_window, immediate_exit, padding1[6],
	// then exit_reason (u32) at offset 8.
	if reason := *(*uint32)(unsafe.Pointer(&run[8])); reason != kvmExitHLT {
		return fmt.Errorf("KVM_RUN exited with reason %d, not HLT", reason)
	}
	return nil
}

// demoteKVM makes every later run of this process use TCG after a KVM guest
// failed to boot although the probe passed.
func demoteKVM(cause error) {
	Accel("")
	log.Printf("qemu: a KVM guest did not boot (%v); this process uses TCG from now on", firstLine(cause.Error()))
	accelName.Store("tcg")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
