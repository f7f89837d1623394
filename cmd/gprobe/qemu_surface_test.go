package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/btf"

	"github.com/gprobe/gprobe/internal/testenv"

	"github.com/gprobe/gprobe/internal/qemu"
)

// Scripts written for perf probe, run against gprobe on real kprobe
// kernels (Debian's 6.1 and 6.12, no vmlinux in the guest: BTF and
// kallsyms answer), one boot each:
//   - the kprobe blacklist (debugfs): perf's live conversion skips a
//     blacklisted function ("FUNC is blacklisted function, skip it.") and,
//     from the symbol table, fails with only its trailer (exit 254);
//     nothing is written. The guest's list is collected and checked
//     against the vmlinux's own blacklist (the independent oracle), which
//     gprobe uses for -D -k;
//   - a function pattern with $params, dry run and real: every matching
//     function BTF describes is listed or written, the ones that cannot
//     be are named with a warning, and the events fire;
//   - -l of a probe another tool wrote as _text+N shows the function, as
//     perf's find_perf_probe_point_from_map does through kallsyms;
//   - -d with one event busy (enabled in another instance) deletes every
//     other match and names the one left, with EBUSY's status.
func TestQemuSurface61(t *testing.T)  { qemuSurface(t, testenv.Linux61) }
func TestQemuSurface612(t *testing.T) { qemuSurface(t, testenv.Linux612) }

func qemuSurface(t *testing.T, k *testenv.Kernel) {
	qemu.Require(t, k)
	vmlinux, _ := testenv.RequireVmlinux(t, k)
	script := `T=/sys/kernel/tracing
mount -t debugfs none /sys/kernel/debug
cp /sys/kernel/debug/kprobes/blacklist /tmp/blacklist
echo "== bl-add"
gprobe -a notify_die; echo "status $?"
echo "left: $(cat $T/kprobe_events)"
echo "== bl-def"
gprobe -D do_int3; echo "status $?"
echo "== bl-pattern"
gprobe -D 'notify_*' > /tmp/notify.defs; echo "status $?"
echo "== batch-dry"
gprobe -nf --max-probes=512 -a 'vfs_* $params'; echo "status $?"
echo "left: $(cat $T/kprobe_events)"
echo "== batch"
gprobe --max-probes=512 -a 'vfs_* $params' > /tmp/batch.out 2>&1; echo "status $?"
echo "added: $(grep -c '^  probe:' /tmp/batch.out)"
grep 'skip it' /tmp/batch.out
echo "count: $(grep -c . $T/kprobe_events)"
echo 1 > $T/events/probe/vfs_read/enable
dd if=/etc/hello of=/dev/null bs=4096 2>/dev/null
echo 0 > $T/events/probe/vfs_read/enable
grep -c 'vfs_read: (vfs_read+0x' $T/trace
echo > $T/trace
gprobe -q -d 'probe:*'; echo "status $?"
echo "left: $(cat $T/kprobe_events)"
echo "== text"
A=$(grep ' T inode_permission$' /proc/kallsyms | cut -d' ' -f1)
B=$(grep ' T _text$' /proc/kallsyms | cut -d' ' -f1)
echo "p:other/ip _text+$(( 0x$A - 0x$B ))" >> $T/kprobe_events
echo "r:other/ipr _text+$(( 0x$A - 0x$B ))" >> $T/kprobe_events
gprobe -l 'other:*'; echo "status $?"
gprobe -q -d 'other:*'; echo "status $?"
echo "== busy"
gprobe -q -a vfs_read -a vfs_write -a ksys_read; echo "status $?"
mkdir $T/instances/busy
echo 1 > $T/instances/busy/events/probe/vfs_write/enable
gprobe -d 'probe:*'; echo "status $?"
echo "left: $(cat $T/kprobe_events)"
echo 0 > $T/instances/busy/events/probe/vfs_write/enable
rmdir $T/instances/busy
gprobe -d 'probe:*'; echo "status $?"
echo "left: $(cat $T/kprobe_events)"
echo "== dmesg"
dmesg | grep -E 'cut here|WARNING:|BUG:|Oops' || true
`
	res, err := qemu.Run(context.Background(), qemu.Options{
		Kernel:  k,
		Script:  script,
		Files:   map[string][]byte{"/etc/hello": []byte("hello\n")},
		Collect: []string{"/tmp/blacklist", "/tmp/notify.defs"},
		Timeout: 5 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guest booted to the script in %v, ran in %v; output:\n%s", res.Boot, res.Elapsed, res.Output)
	steps := guestSteps(res.Output)
	if d := steps["dmesg"]; d != "" {
		t.Errorf("the guest kernel complained:\n%s", d)
	}
	if p := os.Getenv("GPROBE_SAVE_BLACKLIST"); p != "" {
		_ = os.WriteFile(p, res.Files["/tmp/blacklist"], 0o644)
	}

	t.Run("blacklist", func(t *testing.T) {
		// perf's map path: the warning, then its trailer alone; nothing
		// written, not even tried (no error_log line).
		want := "notify_die is blacklisted function, skip it.\n  Error: Failed to add events.\nstatus 254\nleft: \n"
		if got := steps["bl-add"]; got != want {
			t.Errorf("-a notify_die:\n%s\nwant\n%s", got, want)
		}
		if got, want := steps["bl-def"], "do_int3 is blacklisted function, skip it.\n  Error: Failed to add events.\nstatus 254\n"; got != want {
			t.Errorf("-D do_int3:\n%s\nwant\n%s", got, want)
		}
		// A pattern: the blacklisted ones left out, the others printed.
		defs := string(res.Files["/tmp/notify.defs"])
		out := steps["bl-pattern"]
		if !strings.Contains(out, "notify_die is blacklisted function, skip it.\n") || !strings.HasSuffix(out, "status 0\n") ||
			strings.Contains(defs, "notify_die ") || !strings.Contains(defs, "p:probe/notify_change notify_change+0\n") {
			t.Errorf("-D 'notify_*':\n%s\n%s", out, defs)
		}
		// The guest's list is the vmlinux's own: every entry of the
		// kernel's text is blacklisted by the oracle, at the same
		// distance from _text.
		o := newBlacklistOracle(t, vmlinux)
		bl := string(res.Files["/tmp/blacklist"])
		var bias int64
		biasKnown := false
		n := 0
		for _, l := range strings.Split(strings.TrimSpace(bl), "\n") {
			var start, end uint64
			var name string
			if _, err := fmt.Sscanf(l, "0x%x-0x%x\t%s", &start, &end, &name); err != nil {
				t.Fatalf("blacklist line %q: %v", l, err)
			}
			if strings.Contains(l, "[") {
				continue // a module's
			}
			addrs := o.byName[name]
			if len(addrs) == 0 {
				t.Errorf("blacklisted %s is not a symbol of %s", name, vmlinux)
				continue
			}
			if !biasKnown {
				bias, biasKnown = int64(start-addrs[0]), true
			}
			// A name several static functions share: the one at the
			// kernel's distance.
			found := false
			for _, a := range addrs {
				if int64(start-a) == bias && o.listed(a) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: live %#x, image %#x (distance %#x, first %#x), not listed by the oracle", name, start, addrs, int64(start-addrs[0]), bias)
			}
			n++
		}
		if n < 100 {
			t.Errorf("the guest's blacklist has %d entries of the kernel:\n%s", n, bl)
		}
		t.Logf("%d blacklisted symbols of the kernel, each blacklisted in %s as well", n, vmlinux)
	})

	t.Run("pattern", func(t *testing.T) {
		// Every vfs_* function BTF describes is listed (the dry run) and
		// written, or named with the reason it is not.
		// The functions the vmlinux's BTF describes (the guest's
		// /sys/kernel/btf/vmlinux is the same), read with cilium/ebpf.
		bs, err := btf.LoadSpec(vmlinux)
		if err != nil {
			t.Fatal(err)
		}
		var funcs []string
		for typ, err := range bs.All() {
			if err != nil {
				t.Fatal(err)
			}
			if f, ok := typ.(*btf.Func); ok && strings.HasPrefix(f.Name, "vfs_") {
				funcs = append(funcs, f.Name)
			}
		}
		sort.Strings(funcs)
		funcs = slices.Compact(funcs)
		dry := steps["batch-dry"]
		listed := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^  probe:(\w+) +\(on vfs_\* with \$params\)$`).FindAllStringSubmatch(dry, -1) {
			listed[m[1]] = true
		}
		skipped := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^(vfs_\w+)(: .*; skip it\.| is (blacklisted function|out of \.text), skip it\.)$`).FindAllStringSubmatch(dry, -1) {
			skipped[m[1]] = true
		}
		for _, m := range regexp.MustCompile(`(?m)^vfs_\*: the kernel would refuse "p:probe/(\w+) .*; skip it\.$`).FindAllStringSubmatch(dry, -1) {
			skipped[m[1]] = true
		}
		var missing []string
		for _, f := range funcs {
			if !listed[f] && !skipped[f] {
				missing = append(missing, f)
			}
		}
		sort.Strings(missing)
		if len(funcs) < 50 || len(listed) < len(funcs)*3/4 || len(missing) > 0 || !strings.HasSuffix(dry, "status 0\nleft: \n") {
			t.Errorf("%d functions, %d listed, %d skipped, neither: %q\n%s", len(funcs), len(listed), len(skipped), missing, dry)
		}
		t.Logf("vfs_*: %d functions, %d listed, %d skipped with a reason", len(funcs), len(listed), len(skipped))
		// Written: every event listed, but those the kernel itself
		// refuses when they are written (a notrace function), each named.
		out := steps["batch"]
		refused := len(regexp.MustCompile(`(?m)^vfs_\*: kprobe_events refused "p:probe/\w+ .*; skip it\.$`).FindAllString(out, -1))
		added := len(listed) - refused
		if !strings.HasPrefix(out, fmt.Sprintf("status 0\nadded: %d\n", added)) || !strings.Contains(out, fmt.Sprintf("count: %d\n", added)) ||
			added < len(listed)*3/4 || !regexp.MustCompile(`\n[1-9][0-9]*\nstatus 0\nleft: \n$`).MatchString(out) {
			t.Errorf("the pattern's %d events were not all written (%d refused), did not fire or were not deleted:\n%s", len(listed), refused, out)
		}
		t.Logf("written: %d of %d (%d refused by the kernel, named)", added, len(listed), refused)
	})

	t.Run("list-text", func(t *testing.T) {
		want := "  other:ip             (on inode_permission)\n  other:ipr            (on inode_permission%return)\nstatus 0\nstatus 0\n"
		if got := steps["text"]; got != want {
			t.Errorf("-l of _text+N:\n%s\nwant\n%s", got, want)
		}
	})

	t.Run("delete-busy", func(t *testing.T) {
		want := "status 0\nRemoved event: probe:ksys_read\nRemoved event: probe:vfs_read\n" +
			"Failed to delete event probe:vfs_write: kprobe_events refused \"-:probe/vfs_write\": the event is enabled or in use (EBUSY); it is enabled in instance \"busy\"\n" +
			"  Error: Failed to delete events.\nstatus 240\nleft: p:probe/vfs_write vfs_write\n" +
			"Removed event: probe:vfs_write\nstatus 0\nleft: \n"
		if got := steps["busy"]; got != want {
			t.Errorf("-d with a busy event:\n%s\nwant\n%s", got, want)
		}
	})
}
