package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gprobe/gprobe/internal/qemu"
)

// TestQemuKprobes is issue 4's cross-machine workflow on a real kprobe
// kernel: the host resolves line probes against Debian's -dbg vmlinux with
// -D, and the guest booted from the matching vmlinuz (no debuginfo there)
// installs them, sees them fire with the right values, lists and deletes
// them. One boot runs every step; each subtest checks one step's output.
func TestQemuKprobes(t *testing.T) {
	qemu.Require(t, qemu.Linux61)
	vmlinux, _ := vmlinuxPath(t)
	hello := "hello from the host\n"

	// Host side: resolve with DWARF: line probes whose C variables live in
	// registers (and memory behind them) at those lines, a return probe.
	specs := []string{
		"vfs_read:12 file->f_pos count",
		"do_sys_openat2:10 dfd filename:ustring how->flags",
		"vfs_read%return $retval",
	}
	var defs strings.Builder
	for _, s := range specs {
		r := runGprobe("-k", vmlinux, "-D", s)
		if r.Code != 0 || strings.Count(r.Stdout, "\n") != 1 {
			t.Fatalf("-D %q: %s", s, r)
		}
		defs.WriteString(r.Stdout)
	}
	t.Logf("definitions resolved on the host:\n%s", defs.String())
	offset := func(sym string) int { // SYM+N of the definition naming sym
		m := regexp.MustCompile(`(?m) ` + sym + `\+(\d+)`).FindStringSubmatch(defs.String())
		if m == nil {
			t.Fatalf("no %s+N in the definitions", sym)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}

	trigger := `echo 1 > $T/events/probe/enable
dd if=/etc/hello of=/dev/null bs=4096 2>/dev/null # read(2); busybox cat would use sendfile(2)
echo 0 > $T/events/probe/enable
`
	rec := recordSteps(t, vmlinux) // gprobe record's steps share the boot (qemu_record_test.go)
	script := `T=/sys/kernel/tracing
echo "== raw"
while IFS= read -r l; do echo "$l" >> $T/kprobe_events || echo "REFUSED: $l"; done < /root/probes.defs
cat $T/kprobe_events
` + trigger + `cat $T/trace > /tmp/trace.raw
echo > $T/trace
echo > $T/kprobe_events
echo "left: $(cat $T/kprobe_events)"
echo "== add"
gprobe add --from /root/probes.defs; echo "status $?"
echo "== list"
gprobe -l; echo "status $?"
` + trigger + `cat $T/trace > /tmp/trace.add
echo > $T/trace
echo "== del"
gprobe -d 'probe:*'; echo "status $?"
echo "left: $(cat $T/kprobe_events)"
echo "== btf"
gprobe add 'vfs_read file->f_pos count'; echo "status $?"
` + trigger + `cat $T/trace > /tmp/trace.btf
gprobe -d 'probe:*'; echo "status $?"
echo "left: $(cat $T/kprobe_events)"
` + rec.script + `echo "== dmesg"
dmesg | grep -E 'cut here|WARNING:|BUG:|Oops' || true # grep: 1 when nothing found
`
	res, err := qemu.Run(context.Background(), qemu.Options{
		Kernel:  qemu.Linux61,
		Script:  script,
		Files:   rec.withFiles(map[string][]byte{"/root/probes.defs": []byte(defs.String()), "/etc/hello": []byte(hello)}),
		Collect: append([]string{"/tmp/trace.raw", "/tmp/trace.add", "/tmp/trace.btf"}, rec.collect...),
		// Many steps in one boot; a loaded 2-core machine's TCG guest has
		// taken more than qemu.DefaultTimeout.
		Timeout: 4 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guest booted to the script in %v, ran in %v; output:\n%s", res.Boot, res.Elapsed, res.Output)
	if res.Status != 0 {
		t.Fatalf("guest script exit status %d", res.Status)
	}
	steps := guestSteps(res.Output)

	// What the trace must show for dd reading /etc/hello: the line probes
	// at the host-resolved offsets with their variables' values (the first
	// read at offset 0 asks for dd's block size; openat(AT_FDCWD, path,
	// O_RDONLY) gets O_LARGEFILE added on 64-bit), and read's return.
	checkTrace := func(t *testing.T, trace string) {
		t.Helper()
		dd := `(?m)^\s+dd-\d+\s+\[000\] \S+\s+[\d.]+: `
		for _, re := range []string{
			dd + regexp.QuoteMeta(fmt.Sprintf("vfs_read_L12: (vfs_read+0x%x/", offset("vfs_read"))) + `0x[0-9a-f]+\) f_pos=0 count=0x1000$`,
			dd + regexp.QuoteMeta(fmt.Sprintf("do_sys_openat2_L10: (do_sys_openat2+0x%x/", offset("do_sys_openat2"))) + `0x[0-9a-f]+\) dfd=-100 filename_ustring="/etc/hello" flags=0x8000$`,
			dd + `vfs_read__return: \(ksys_read\+0x[0-9a-f]+/0x[0-9a-f]+ <- vfs_read\) arg1=` + fmt.Sprintf("(0x%x|%d)$", len(hello), len(hello)),
		} {
			if !regexp.MustCompile(re).MatchString(trace) {
				t.Errorf("trace lacks a line matching %s:\n%s", re, trace)
			}
		}
	}

	if d := steps["dmesg"]; d != "" {
		t.Errorf("the guest kernel complained:\n%s", d)
	}

	t.Run("raw", func(t *testing.T) {
		// The kernel takes the host's definitions as they are.
		out := steps["raw"]
		if strings.Contains(out, "REFUSED") {
			t.Errorf("the guest kernel refused a definition:\n%s", out)
		}
		// The kernel lists them in its own form (r10:, "vfs_read", arg1=).
		for _, ev := range []string{"p:probe/vfs_read_L12 vfs_read+", "p:probe/do_sys_openat2_L10 do_sys_openat2+", ":probe/vfs_read__return vfs_read "} {
			if !strings.Contains(out, ev) {
				t.Errorf("kprobe_events does not list %q:\n%s", ev, out)
			}
		}
		checkTrace(t, string(res.Files["/tmp/trace.raw"]))
		if !strings.Contains(out, "left: \n") {
			t.Errorf("probes left after clearing kprobe_events:\n%s", out)
		}
	})

	t.Run("add-from", func(t *testing.T) {
		add, list, del := steps["add"], steps["list"], steps["del"]
		for _, ev := range []string{"probe:vfs_read_L12", "probe:do_sys_openat2_L10", "probe:vfs_read__return"} {
			if !strings.Contains(add, ev) || !strings.Contains(list, ev) || !strings.Contains(del, "Removed event: "+ev) {
				t.Errorf("%s missing from add, -l or -d output", ev)
			}
		}
		if !strings.Contains(add, "Added new event") || !strings.HasSuffix(add, "status 0\n") ||
			!strings.HasSuffix(list, "status 0\n") || !strings.Contains(del, "status 0\nleft: \n") {
			t.Errorf("add, -l or -d failed or left probes behind:\n%s%s%s", add, list, del)
		}
		checkTrace(t, string(res.Files["/tmp/trace.add"]))
	})

	t.Run("btf", func(t *testing.T) {
		out := steps["btf"]
		if !strings.Contains(out, "probe:vfs_read") || !strings.Contains(out, "status 0\nleft: \n") {
			t.Errorf("BTF add or delete failed:\n%s", out)
		}
		// dd's first read: offset 0, count = its block size.
		re := `(?m)^\s+dd-\d+\s+\[000\] \S+\s+[\d.]+: vfs_read: \(vfs_read\+0x0/0x[0-9a-f]+\) f_pos=(0|0x0) count=(4096|0x1000)$`
		if trace := string(res.Files["/tmp/trace.btf"]); !regexp.MustCompile(re).MatchString(trace) {
			t.Errorf("trace lacks dd's read with f_pos and count:\n%s", trace)
		}
	})

	t.Run("record", func(t *testing.T) { checkRecording(t, steps, res.Files) })
}
