package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gprobe/gprobe/internal/qemu"
	"github.com/gprobe/gprobe/internal/testenv"
)

// TestQemuArm64 is kprobe events on ARMv8, for real: Debian's arm64 cloud
// kernels (6.1 and 6.12) booted under qemu-system-aarch64 -M virt -cpu max
// (TCG), one boot each. The host resolves against the arm64 -dbg vmlinux:
// an entry probe with its arguments in %x0.. (dfd, the file name read as
// :string, which arm64's kernels read from user memory too, and as
// :ustring, a member through a pointer), a
// source line with a struct member, vfs_read's kretprobe and the
// --ret-insn probes of the same function. The arm64 gprobe in the guest
// installs them with add --from, adds one resolved from the guest's own
// BTF, lists them, records dd with gprobe record, traces the same workload
// in the top-level buffer, reads kprobe_profile back and deletes them. On
// the host, trace-cmd report and gprobe analyze read the recording; in the
// trace every kretprobe event follows one return-instruction event with
// the same value, and kprobe_profile counts as many hits for both, none
// missed.
//
// On 6.12 the host also refuses an fprobe: Debian's arm64 kernel has
// none (CONFIG_FPROBE needs DYNAMIC_FTRACE_WITH_REGS, which arm64 lacks in
// 6.12), and the guest's own README, read by gprobe there, agrees.
func TestQemuArm64(t *testing.T) {
	for _, k := range []*qemu.Kernel{qemu.Linux61Arm64, qemu.Linux612Arm64} {
		t.Run(k.Release, func(t *testing.T) { qemuArm64(t, k) })
	}
}

// arm64Input is the file dd reads in the arm64 guests: 3 reads of 4096
// bytes each time, the last returning 0 at its end.
var arm64Input = strings.Repeat("kprobes on ARMv8, read in the guest\n", 200)[:6000]

const arm64Runs = 5

func qemuArm64(t *testing.T, k *qemu.Kernel) {
	qemu.Require(t, k)
	testenv.Tool(t, "trace-cmd")
	vmlinux, _ := testenv.RequireVmlinux(t, k)
	var defs strings.Builder
	for _, args := range [][]string{
		{"-D", "do_sys_openat2 dfd filename:string fname=filename:ustring how->flags"},
		{"-D", "vfs_read:12 file->f_pos count"},
		{"-D", "vfs_read%return $retval:s64"},
		{"--ret-insn", "-D", "vfs_read%return $retval:s64"},
	} {
		defs.WriteString(gprobeD(t, append([]string{"-k", vmlinux}, args...)...))
	}
	t.Logf("%s: definitions resolved on the host:\n%s", k.Release, defs.String())
	for _, want := range []string{" dfd=%x0:s32 ", " fname=+0(%x1):ustring ", "p:probe/vfs_read__retinsn vfs_read+"} {
		if !strings.Contains(defs.String(), want) {
			t.Errorf("the definitions lack %q", want)
		}
	}
	fprobe := runGprobe("-k", vmlinux, "--fprobe", "-D", "vfs_read count")
	if k.Version == "6.12" && (fprobe.Code != exitEOPNOTSUPP && fprobe.Code != exitEINVAL || !strings.Contains(fprobe.Stderr, "fprobe events (f:) need")) {
		t.Errorf("--fprobe on Debian's arm64 6.12 (no CONFIG_FPROBE): %s", fprobe)
	}

	workload := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do dd if=/root/input of=/dev/null bs=4096 2>/dev/null; i=$((i+1)); done`, arm64Runs)
	script := `T=/sys/kernel/tracing
uname -m
echo "== add"
gprobe add --from /root/arm64.defs; echo "status $?"
cat $T/kprobe_events
echo "== btf"
gprobe add 'btfread=vfs_read file->f_pos count'; echo "status $?"
echo "== list"
gprobe -l; echo "status $?"
echo "== record"
gprobe record -e 'probe:*' -o /tmp/arm64.dat -- sh -c '` + workload + `'; echo "status $?"
echo "== trace"
echo > $T/trace
cat $T/kprobe_profile > /tmp/profile.before
echo 1 > $T/events/probe/enable
` + workload + `
echo 0 > $T/events/probe/enable
cat $T/trace > /tmp/trace.arm64
echo "== profile"
cat /tmp/profile.before
echo "--"
cat $T/kprobe_profile
echo "== fprobe"
gprobe --fprobe -D 'vfs_read count'; echo "status $?"
echo "== del"
gprobe -d 'probe:*'; echo "status $?"
echo "left: $(cat $T/kprobe_events)|$(ls $T/instances)"
echo "== dmesg"
dmesg | grep -E 'cut here|WARNING:|BUG:|Oops' || true
`
	start := time.Now()
	res, err := qemu.Run(context.Background(), qemu.Options{
		Kernel:  k,
		Script:  script,
		Files:   map[string][]byte{"/root/arm64.defs": []byte(defs.String()), "/root/input": []byte(arm64Input)},
		Collect: []string{"/tmp/arm64.dat", "/tmp/trace.arm64"},
		Timeout: 8 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: booted to the script in %v, whole run %v (wall %v); output:\n%s", k.Release, res.Boot, res.Elapsed, time.Since(start), res.Output)
	if res.Status != 0 {
		t.Fatalf("guest script exit status %d", res.Status)
	}
	steps := guestSteps(res.Output)
	if !strings.HasPrefix(string(res.Output), "aarch64\n") {
		t.Errorf("the guest is not arm64: %q", head(string(res.Output), 1))
	}
	if d := steps["dmesg"]; d != "" {
		t.Errorf("the guest kernel complained:\n%s", d)
	}

	t.Run("add-list-del", func(t *testing.T) {
		add, list, del := steps["add"], steps["list"], steps["del"]
		for _, want := range []string{"p:probe/do_sys_openat2 do_sys_openat2+", "p:probe/vfs_read_L12 vfs_read+", ":probe/vfs_read__return vfs_read ", "p:probe/vfs_read__retinsn vfs_read+"} {
			if !strings.Contains(add, want) {
				t.Errorf("kprobe_events lacks %q:\n%s", want, add)
			}
		}
		for _, ev := range []string{"probe:do_sys_openat2", "probe:vfs_read_L12", "probe:vfs_read__return", "probe:vfs_read__retinsn", "probe:btfread"} {
			if !strings.Contains(list, ev) || !strings.Contains(del, "Removed event: "+ev+"\n") {
				t.Errorf("%s missing from -l or -d:\n%s%s", ev, list, del)
			}
		}
		if !strings.Contains(add, "status 0\n") || steps["btf"] == "" || !strings.HasSuffix(steps["btf"], "status 0\n") ||
			!strings.HasSuffix(list, "status 0\n") || !strings.Contains(del, "status 0\nleft: |\n") {
			t.Errorf("add, -l or -d failed or left something:\n%s%s%s%s", add, steps["btf"], list, del)
		}
		if k.Version == "6.12" {
			if f := steps["fprobe"]; !strings.Contains(f, "fprobe events (f:) need") || strings.HasSuffix(f, "status 0\n") {
				t.Errorf("the guest's gprobe --fprobe on a kernel without fprobes:\n%s", f)
			}
		}
	})

	t.Run("trace", func(t *testing.T) {
		trace := string(res.Files["/tmp/trace.arm64"])
		checkBufferComplete(t, trace)
		n := checkExitPairs(t, trace, "vfs_read")
		t.Logf("vfs_read: %s", n)
		// dd reads the file twice and then 0 at its end, each run; the
		// shell and dd read more (their own files).
		if n.kret < arm64Runs*3 || n.kret != n.retinsn+n.tailcall || n.values != n.retinsn {
			t.Errorf("vfs_read: %s; want each kretprobe event after one return-instruction event with its value", n)
		}
		for _, re := range []string{
			fmt.Sprintf(`(?m)^\s*dd-\d+\s+.*: vfs_read__return: \(ksys_read\+0x[0-9a-f]+/0x[0-9a-f]+ <- vfs_read\) arg1=%d$`, 4096),
			fmt.Sprintf(`(?m)^\s*dd-\d+\s+.*: vfs_read__retinsn: \(vfs_read\+0x[0-9a-f]+/0x[0-9a-f]+\) arg1=%d$`, len(arm64Input)-4096),
			`(?m)^\s*dd-\d+\s+.*: vfs_read_L12: \(vfs_read\+0x[0-9a-f]+/0x[0-9a-f]+\) f_pos=4096 count=0x1000$`,
			`(?m)^\s*dd-\d+\s+.*: do_sys_openat2: \(do_sys_openat2\+0x[0-9a-f]+/0x[0-9a-f]+\) dfd=-100 filename_string="/root/input" fname="/root/input" flags=0x[0-9a-f]+$`,
			`(?m)^\s*dd-\d+\s+.*: btfread: \(vfs_read\+0x[0-9a-f]+/0x[0-9a-f]+\) f_pos=0 count=0x1000$`,
		} {
			if !regexp.MustCompile(re).MatchString(trace) {
				t.Errorf("the trace lacks a line matching %s:\n%s", re, head(trace, 40))
			}
		}
	})

	t.Run("profile", func(t *testing.T) {
		// kprobe_profile: "  EVENT  HITS  MISSES", before and after
		// the traced workload.
		before, after, _ := strings.Cut(steps["profile"], "--\n")
		hits := func(text, ev string) (int, int) {
			m := regexp.MustCompile(`(?m)^\s*` + ev + `\s+(\d+)\s+(\d+)$`).FindStringSubmatch(text)
			if m == nil {
				t.Fatalf("kprobe_profile lacks %s:\n%s", ev, text)
			}
			h, _ := strconv.Atoi(m[1])
			mi, _ := strconv.Atoi(m[2])
			return h, mi
		}
		rb, _ := hits(before, "vfs_read__return")
		ra, rmiss := hits(after, "vfs_read__return")
		ib, _ := hits(before, "vfs_read__retinsn")
		ia, imiss := hits(after, "vfs_read__retinsn")
		n := checkExitPairs(t, string(res.Files["/tmp/trace.arm64"]), "vfs_read")
		t.Logf("kprobe_profile: vfs_read__return %d hits (%d missed), vfs_read__retinsn %d hits (%d missed); the traced workload %d and %d",
			ra, rmiss, ia, imiss, ra-rb, ia-ib)
		// Over the whole life of the probes the totals may differ by the
		// calls in flight while gprobe record enabled or disabled them one
		// after the other (a kretprobe counts a call at its entry); over
		// the traced workload both count every call.
		if rmiss != 0 || imiss != 0 || ra-rb != ia-ib || ra-rb != n.kret || ia-ib != n.retinsn {
			t.Errorf("kprobe_profile disagrees with the trace (%s)", n)
		}
	})

	t.Run("record", func(t *testing.T) {
		rec := steps["record"]
		if !strings.Contains(rec, "written to /tmp/arm64.dat, no events lost\n") || !strings.HasSuffix(rec, "status 0\n") {
			t.Fatalf("record failed or lost events:\n%s", rec)
		}
		out := filepath.Join(t.TempDir(), "arm64.dat")
		if err := os.WriteFile(out, res.Files["/tmp/arm64.dat"], 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := exec.Command("trace-cmd", "report", "-i", out).CombinedOutput()
		if err != nil {
			t.Fatalf("trace-cmd report: %v\n%s", err, rep)
		}
		t.Logf("trace-cmd report -i arm64.dat (head):\n%s", head(string(rep), 30))
		dd := `(?m)^\s*dd-\d+\s+\[\d+\]\s+[\d.]+: `
		for _, re := range []string{
			dd + `vfs_read_L12: +\([0-9a-f]+\) f_pos=0 count=0x1000$`,
			dd + `do_sys_openat2: +\([0-9a-f]+\) dfd=-100 filename_string="/root/input" fname="/root/input" flags=0x[0-9a-f]+$`,
			dd + fmt.Sprintf(`vfs_read__return: +\([0-9a-f]+ <- [0-9a-f]+\) arg1=%d$`, len(arm64Input)-4096),
			dd + fmt.Sprintf(`vfs_read__retinsn: +\([0-9a-f]+\) arg1=%d$`, 4096),
		} {
			if !regexp.MustCompile(re).Match(rep) {
				t.Errorf("trace-cmd report lacks a line matching %s", re)
			}
		}
		kret := strings.Count(string(rep), ": vfs_read__return: ")
		retinsn := strings.Count(string(rep), ": vfs_read__retinsn: ")
		if kret == 0 || kret != retinsn {
			t.Errorf("the recording holds %d kretprobe and %d return-instruction events of vfs_read", kret, retinsn)
		}
		an := runGprobe("analyze", out)
		t.Logf("gprobe analyze arm64.dat:\n%s%s", an.Stdout, an.Stderr)
		if an.Code != 0 || !strings.Contains(an.Stdout, ", 0 lost, complete") {
			t.Errorf("gprobe analyze failed or found losses:\n%s%s", an.Stdout, an.Stderr)
		}
	})
}
