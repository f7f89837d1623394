package qemu

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gprobe/gprobe/internal/testenv"
)

// gprobe is the static gprobe every boot of this package installs.
func gprobe(t *testing.T) string { return testenv.Gprobe(t) }

// gprobeFor is gprobe built for k's architecture.
func gprobeFor(t *testing.T, k *Kernel) string {
	t.Helper()
	p, err := testenv.BuildGprobeFor(k.Arch)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGuestKprobes boots each kernel once (Debian's 6.1 and 6.12 for
// x86-64 and arm64, and the kernel the project builds) and proves, with
// busybox alone, what the other packages' guest tests rely on: it is the
// kernel the vmlinux describes (same build-id), it has BTF (unless built
// without debug information), a raw kprobe and kretprobe written to
// kprobe_events fire with the right values, files go in and come back
// byte for byte, and output and exit status are exact.
func TestGuestKprobes(t *testing.T) {
	for _, k := range []*Kernel{Linux61, Linux612, Linux61Arm64, Linux612Arm64, LinuxBuilt} {
		t.Run(k.Release, func(t *testing.T) { guestKprobes(t, k) })
	}
}

func guestKprobes(t *testing.T, k *Kernel) {
	Require(t, k)
	payload := make([]byte, 100_000)
	for i := range payload {
		payload[i] = byte(rand.Uint32())
	}
	hello := []byte("hello from the host\n")
	script := `T=/sys/kernel/tracing
uname -r
echo "boot log $(grep -c . /gprobe-qemu/boot.dmesg) lines, kernel log $(dmesg | grep -c .) lines"
ls -l /sys/kernel/btf/vmlinux
echo 'p:gprobe_qemu/vfs_read vfs_read' >> $T/kprobe_events || echo FAIL add
echo 'r:gprobe_qemu/vfs_read_ret vfs_read ret=$retval:s64' >> $T/kprobe_events || echo FAIL add
cat $T/kprobe_events
echo 1 > $T/events/gprobe_qemu/enable
dd if=/etc/hello of=/dev/null bs=4096 # read(2); busybox cat would use sendfile(2)
echo 0 > $T/events/gprobe_qemu/enable
cat $T/trace > /tmp/trace
echo '-:gprobe_qemu/vfs_read' >> $T/kprobe_events
echo '-:gprobe_qemu/vfs_read_ret' >> $T/kprobe_events
echo "left: $(cat $T/kprobe_events)"
cp /sys/kernel/notes /tmp/notes
cp /root/payload /tmp/payload.copy
printf 'no newline at the end'
exit 7
`
	res, err := Run(context.Background(), Options{
		Kernel:  k,
		Script:  script,
		Files:   map[string][]byte{"/etc/hello": hello, "/root/payload": payload},
		Collect: []string{"/tmp/trace", "/tmp/notes", "/tmp/payload.copy", "/tmp/does-not-exist"},
		Gprobe:  gprobeFor(t, k),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("boot to script %v, whole run %v", res.Boot, res.Elapsed)
	out := string(res.Output)
	t.Logf("guest output:\n%s", out)
	if res.Status != 7 || !strings.HasSuffix(out, "\nno newline at the end") {
		t.Errorf("status %d, output end %q: want 7 and the exact unterminated last line", res.Status, out[max(0, len(out)-40):])
	}
	if !strings.HasPrefix(out, k.Release+"\n") {
		t.Errorf("guest kernel is not %s", k.Release)
	}
	// The boot's messages were kept aside and the script's log starts empty.
	if m := regexp.MustCompile(`(?m)^boot log (\d+) lines, kernel log (\d+) lines$`).FindStringSubmatch(out); m == nil || m[1] == "0" || m[2] != "0" {
		t.Errorf("kernel log not cleared before the script (boot log, script log): %q", m)
	}
	// A kernel built without debug information has no BTF.
	if hasBTF := regexp.MustCompile(`(?m)^-r--r--r-- .* /sys/kernel/btf/vmlinux$`).MatchString(out); hasBTF == k.NoDebugInfo {
		t.Errorf("/sys/kernel/btf/vmlinux in the guest: %v, want %v", hasBTF, !k.NoDebugInfo)
	}
	// The kernel lists what it installed (r<maxactive>: its default).
	if !regexp.MustCompile(`(?m)^p:gprobe_qemu/vfs_read vfs_read\nr\d+:gprobe_qemu/vfs_read_ret vfs_read ret=\$retval:s64\n`).MatchString(out) ||
		!strings.Contains(out, "left: \n") {
		t.Error("kprobe_events did not list the two probes, or kept them after removal")
	}
	if strings.Contains(out, "FAIL") {
		t.Error("the kernel refused a probe definition")
	}

	trace := string(res.Files["/tmp/trace"])
	// (arm64 places a probe on a function's entry after its BTI or PACIASP
	// landing pad where ftrace's patchable entry follows it.)
	entry := regexp.MustCompile(`(?m)^\s+dd-\d+\s+\[000\] .* vfs_read: \(vfs_read\+0x[048]/0x[0-9a-f]+\)$`)
	// dd reads the whole file, then end of file. (6.12 is built with IBT:
	// a probe on a function sits after its ENDBR64, at +0x4.)
	ret := regexp.MustCompile(`(?m)^\s+dd-\d+\s+\[000\] .* vfs_read_ret: \(ksys_read\+0x[0-9a-f]+/0x[0-9a-f]+ <- vfs_read\) ret=` + strconv.Itoa(len(hello)) + `$`)
	if !entry.MatchString(trace) || !ret.MatchString(trace) {
		t.Errorf("trace lacks dd's vfs_read entry or its return of the file's size:\n%s", trace)
	}

	if got := res.Files["/tmp/payload.copy"]; !bytes.Equal(got, payload) {
		t.Errorf("payload came back as %d bytes, differing from the %d sent", len(got), len(payload))
	}
	if _, ok := res.Files["/tmp/does-not-exist"]; ok || len(res.Files) != 3 {
		t.Errorf("files back: %d, want the 3 that exist", len(res.Files))
	}

	guestID := gnuBuildID(res.Files["/tmp/notes"])
	if guestID == "" {
		t.Fatal("no build-id in the guest's /sys/kernel/notes")
	}
	f, err := elf.Open(k.Vmlinux())
	if err != nil {
		if os.Getenv("GPROBE_REQUIRE_VMLINUX") == "1" {
			t.Fatal(err)
		}
		t.Skipf("no -dbg vmlinux to compare build-ids with: %v", err)
	}
	defer f.Close()
	notes, err := f.Section(".notes").Data()
	if err != nil {
		t.Fatal(err)
	}
	if hostID := gnuBuildID(notes); hostID != guestID {
		t.Errorf("guest kernel build-id %s, %s has %s: not the matching -dbg build", guestID, k.Vmlinux(), hostID)
	}
}

// gnuBuildID returns the NT_GNU_BUILD_ID in a sequence of ELF notes
// (4-byte aligned, as in .notes and /sys/kernel/notes), "" if none.
func gnuBuildID(b []byte) string {
	for len(b) >= 12 {
		nsz, dsz, typ := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])
		n, d := int(nsz+3)&^3, int(dsz+3)&^3
		if nsz > 1<<16 || dsz > 1<<16 || 12+n+d > len(b) {
			return ""
		}
		if typ == 3 && string(b[12:12+nsz]) == "GNU\x00" {
			return hex.EncodeToString(b[12+n : 12+n+int(dsz)])
		}
		b = b[12+n+d:]
	}
	return ""
}

// TestGuestCrash: a kernel panic in the guest ends the run at once with
// ErrNoStatus and the partial output, not a hang until the timeout.
func TestGuestCrash(t *testing.T) {
	Require(t, Linux61)
	res, err := Run(context.Background(), Options{Script: "echo before; echo c > /proc/sysrq-trigger; echo after", Gprobe: gprobe(t)})
	if !errors.Is(err, ErrNoStatus) || res == nil {
		t.Fatalf("got %v, want ErrNoStatus", err)
	}
	if string(res.Output) != "before\n" || res.Status != -1 || !bytes.Contains(res.Console, []byte("sysrq triggered crash")) {
		t.Errorf("output %q, status %d, console:\n%s", res.Output, res.Status, res.Console)
	}
}

// TestTimeout: a guest that does not finish in time is killed and the
// error says so.
func TestTimeout(t *testing.T) {
	Require(t, Linux61)
	start := time.Now()
	_, err := Run(context.Background(), Options{Script: "sleep 1000", Timeout: 3 * time.Second, Gprobe: gprobe(t)})
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	t.Logf("killed after %v", time.Since(start))
}

func TestBadOptions(t *testing.T) {
	Require(t, Linux61)
	for _, o := range []Options{
		{Files: map[string][]byte{"relative": nil}},
		{Files: map[string][]byte{"/a/../b": nil}},
		{Files: map[string][]byte{"/init": nil}},
		{Files: map[string][]byte{"/gprobe-qemu/script": nil}},
		{Collect: []string{"tmp/x"}},
	} {
		if _, err := Run(context.Background(), o); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: got %v, want ErrOptions", o, err)
		}
	}
}

// FuzzParse: whatever comes over the serial line, parse returns an error
// of the documented kinds or a result, never panics.
func FuzzParse(f *testing.F) {
	const mark = "@@gprobe-qemu:0011223344556677"
	f.Add([]byte(mark+" begin uptime=1.0@@\nhi\n\n"+mark+" end status=0@@\n"+mark+" files status=0@@\n"+mark+" done@@\n"), true)
	f.Add([]byte(mark+" begin uptime=1.0@@\nhi\n\n"+mark+" end status=99999999999999999999@@\n"+mark+" files status=1@@\n"), true)
	f.Add([]byte(mark+" begin uptime=1.0@@\nno newline"), false)
	f.Add([]byte(mark+" begin"), false)
	f.Fuzz(func(t *testing.T, raw []byte, collect bool) {
		res := &Result{Status: -1}
		if err := parse(raw, mark, collect, res); err != nil && !errors.Is(err, ErrNoStatus) && !errors.Is(err, ErrCollect) {
			t.Fatalf("unexpected error class: %v", err)
		}
	})
}
