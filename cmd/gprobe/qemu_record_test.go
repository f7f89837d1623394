package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

// Recording kprobes for real, on Debian's 6.1 kernel booted under qemu
// (this machine's kernel has no kprobes), as part of TestQemuKprobes' boot:
// the host resolves vfs_read's entry with its count argument and its return
// with $retval against the -dbg vmlinux; in the guest, gprobe add
// --maxactive installs them (the return probe as r64:), gprobe record
// records dd reading a file of known size, and the trace file comes back
// to the host, where trace-cmd report must list dd's two reads (4096 bytes
// asked; the file's size, then 0 returned), one return per entry, and as
// many events as the summary line counted, none lost.

const (
	guestRecordInput     = "hello from the host, read in the guest while recording\n"
	guestRecordMaxActive = 64
)

// guestRecording is record's part of a guest run: the script's steps
// ("== record-*"), the files they need and the trace file to bring back.
type guestRecording struct {
	script  string
	files   map[string][]byte
	collect []string
}

// recordSteps resolves the probes on the host. The steps leave nothing
// installed in the guest.
func recordSteps(t *testing.T, vmlinux string) guestRecording {
	t.Helper()
	var defs strings.Builder
	for _, s := range []string{"vfs_read count", "vfs_read%return $retval"} {
		r := runGprobe("-k", vmlinux, "-D", s)
		if r.Code != 0 || strings.Count(r.Stdout, "\n") != 1 {
			t.Fatalf("-D %q: %s", s, r)
		}
		defs.WriteString(r.Stdout)
	}
	return guestRecording{
		script: fmt.Sprintf(`T=/sys/kernel/tracing
echo "== record-add"
gprobe add --maxactive %d --from /root/record.defs; echo "status $?"
grep probe/ $T/kprobe_events
echo "== record"
gprobe record -e 'probe:*' -o /tmp/t.out -- dd if=/root/record.input of=/dev/null bs=4096; echo "status $?"
echo "== record-profile"
grep vfs_read $T/kprobe_profile
echo "== record-del"
gprobe -d 'probe:*'; echo "status $?"
echo "left: $(cat $T/kprobe_events)|$(ls $T/instances)|$(cat $T/events/enable)"
echo "== maxactive-spec"
gprobe add --maxactive 8 'vfs_read%%return $retval' >/dev/null 2>&1; echo "status $?"
cat $T/kprobe_events
gprobe -d 'probe:*' >/dev/null 2>&1; echo "status $?"
`, guestRecordMaxActive),
		files:   map[string][]byte{"/root/record.defs": []byte(defs.String()), "/root/record.input": []byte(guestRecordInput)},
		collect: []string{"/tmp/t.out"},
	}
}

// withFiles adds the recording's files to the guest's files m.
func (g guestRecording) withFiles(m map[string][]byte) map[string][]byte {
	maps.Copy(m, g.files)
	return m
}

// checkRecording checks the record steps' output and the file.
func checkRecording(t *testing.T, steps map[string]string, files map[string][]byte) {
	testenv.Tool(t, "trace-cmd")
	if add := steps["record-add"]; !strings.Contains(add, "status 0\n") ||
		!strings.Contains(add, fmt.Sprintf("r%d:probe/vfs_read__return vfs_read", guestRecordMaxActive)) {
		t.Fatalf("add --maxactive %d did not install r%d:\n%s", guestRecordMaxActive, guestRecordMaxActive, add)
	}
	// A probe resolved in the guest (BTF) takes --maxactive as well.
	if ms := steps["maxactive-spec"]; ms != "status 0\nr8:probe/vfs_read__return vfs_read arg1=$retval\nstatus 0\n" {
		t.Errorf("add --maxactive 8 'vfs_read%%return $retval':\n%s", ms)
	}
	rec := steps["record"]
	m := regexp.MustCompile(`gprobe record: (\d+) events, .* written to /tmp/t.out, no events lost\n`).FindStringSubmatch(rec)
	if m == nil || !strings.HasSuffix(rec, "status 0\n") {
		t.Fatalf("record failed or lost events:\n%s", rec)
	}
	summaryEvents, _ := strconv.Atoi(m[1])
	if !strings.HasSuffix(steps["record-del"], "status 0\nleft: ||0\n") {
		t.Errorf("probes, instances or enabled events left in the guest:\n%s", steps["record-del"])
	}

	data := files["/tmp/t.out"]
	out := filepath.Join(t.TempDir(), "t.out")
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(fmt.Sprintf(`r%d:probe/vfs_read__return vfs_read`, guestRecordMaxActive))) {
		t.Errorf("the file does not carry the return probe's definition")
	}
	rep, err := exec.Command("trace-cmd", "report", "-i", out).CombinedOutput()
	if err != nil {
		t.Fatalf("trace-cmd report: %v\n%s", err, rep)
	}
	t.Logf("trace-cmd report -i t.out:\n%s", rep)
	// "  dd-57  [000]  12.345678: vfs_read: (vfs_read+0x0/0x1c0) count=0x1000"
	line := regexp.MustCompile(`(?m)^\s*(\S+)-(\d+)\s+\[(\d+)\]\s+[\d.]+: (vfs_read|vfs_read__return): (.*)$`)
	events := line.FindAllStringSubmatch(string(rep), -1)
	if len(events) != summaryEvents {
		t.Errorf("trace-cmd report lists %d events, the summary counted %d:\n%s", len(events), summaryEvents, rep)
	}
	// trace-cmd prints a kprobe's ip in hex (its print fmt is "(%lx)"): it
	// must be vfs_read's address in the guest's kallsyms the file carries
	// (KASLR moves it every boot), and a return's "(FUNC <- CALLER)" too.
	ks, err := exec.Command("trace-cmd", "dump", "--kallsyms", "-i", out).CombinedOutput()
	if err != nil {
		t.Fatalf("trace-cmd dump --kallsyms: %v\n%.500s", err, ks)
	}
	sym := regexp.MustCompile(`(?m)^([0-9a-f]{16}) [Tt] vfs_read$`).FindSubmatch(ks)
	if sym == nil {
		t.Fatalf("the file's kallsyms has no vfs_read")
	}
	ip := regexp.MustCompile(`^\(([0-9a-f]+)[ )]`)
	entries, returns := map[string]int{}, map[string]int{}
	var ddCounts, ddRets []string
	for _, e := range events {
		comm, ev, args := e[1], e[4], strings.TrimSpace(e[5])
		if comm != "dd" && comm != "gprobe" { // gprobe: the forking thread, until dd's exec
			t.Errorf("event of a process not followed: %s", e[0])
		}
		if a := ip.FindStringSubmatch(args); a == nil || strings.TrimLeft(a[1], "0") != strings.TrimLeft(string(sym[1]), "0") {
			t.Errorf("%s: the probe address is not vfs_read's %s", e[0], sym[1])
		}
		last := args[strings.LastIndex(args, " ")+1:]
		if ev == "vfs_read" {
			entries[comm]++
			if comm == "dd" {
				ddCounts = append(ddCounts, last)
			}
		} else {
			returns[comm]++
			if comm == "dd" {
				ddRets = append(ddRets, last)
			}
		}
	}
	want := []string{fmt.Sprintf("arg1=0x%x", len(guestRecordInput)), "arg1=0x0"}
	if strings.Join(ddCounts, " ") != "count=0x1000 count=0x1000" || strings.Join(ddRets, " ") != strings.Join(want, " ") {
		t.Errorf("dd's reads: entries %q, returns %q; want two count=0x1000 returning %q\n%s", ddCounts, ddRets, want, rep)
	}
	for comm, n := range entries {
		if returns[comm] != n {
			t.Errorf("%s: %d vfs_read entries but %d returns", comm, n, returns[comm])
		}
	}
	// kprobe_profile: "  vfs_read__return   HITS   MISSES", both probes,
	// counting every process's reads (the recording's among them).
	prof := strings.Split(strings.TrimSpace(steps["record-profile"]), "\n")
	if len(prof) != 2 {
		t.Errorf("kprobe_profile: %q, want the two probes", prof)
	}
	for _, l := range prof {
		f := strings.Fields(l)
		if len(f) != 3 || f[2] != "0" {
			t.Errorf("kprobe_profile: %q, want no misses", l)
			continue
		}
		if hits, _ := strconv.Atoi(f[1]); hits < entries["dd"]+entries["gprobe"] {
			t.Errorf("kprobe_profile: %q, fewer hits than the %d events recorded", l, entries["dd"]+entries["gprobe"])
		}
	}
}
