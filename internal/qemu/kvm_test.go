package qemu

import (
	"os"
	"testing"
	"time"
)

func TestAccelOverride(t *testing.T) {
	for _, v := range []string{"tcg", "kvm"} {
		t.Setenv(AccelEnv, v)
		start := time.Now()
		if got := chooseAccel(Linux61.Image()); got != v {
			t.Errorf("%s=%s: chose %s", AccelEnv, v, got)
		}
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Errorf("%s=%s: the override still probed (%v)", AccelEnv, v, d)
		}
	}
}

// The decision must agree with the two probes run now, and each probe must
// answer within its bound whatever this machine's KVM does: on a machine
// whose /dev/kvm opens but runs no kernel the ioctl probe passes (a
// real-mode hlt runs) and the boot probe times out.
func TestAccelAgreesWithProbes(t *testing.T) {
	Require(t, Linux61)
	if _, err := os.Stat("/dev/kvm"); err != nil {
		if got := Accel(Linux61.Image()); got != "tcg" && os.Getenv(AccelEnv) == "" {
			t.Fatalf("no /dev/kvm but Accel chose %s", got)
		}
		t.Skip("no /dev/kvm")
	}
	start := time.Now()
	err := probeKVM(kvmProbeTimeout)
	if d := time.Since(start); d > kvmProbeTimeout+time.Second {
		t.Fatalf("ioctl probe took %v", d)
	}
	if err == nil {
		start = time.Now()
		err = probeKVMBoot(Linux61.Image(), kvmBannerTimeout)
		if d := time.Since(start); d > kvmBannerTimeout+3*time.Second {
			t.Fatalf("boot probe took %v", d)
		}
	}
	want := "kvm"
	if err != nil {
		want = "tcg"
	}
	t.Logf("probes: %v; Accel: %s", err, Accel(Linux61.Image()))
	if os.Getenv(AccelEnv) == "" && Accel(Linux61.Image()) != want {
		t.Fatalf("the probes say %s (%v) but Accel chose %s", want, err, Accel(Linux61.Image()))
	}
}
