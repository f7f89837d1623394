package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestMaxActiveRefused: add --maxactive refuses, in one line and before
// installing anything, a count outside the kernel's 1..4096, a uprobe
// return probe (uretprobes have no maxactive) and a set of probes without
// a return probe. Installing r<N>: kprobes is tested on the 6.1 kernel
// under qemu (TestQemuKprobes/record).
func TestMaxActiveRefused(t *testing.T) {
	fs := liveFS(t)
	g := fmt.Sprintf("gprobe_maxact_%d", os.Getpid())
	uret := fmt.Sprintf("r:%s/ret /bin/true:0x0", g)
	uent := fmt.Sprintf("p:%s/ent /bin/true:0x0", g)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"add", "--maxactive", "0", uret}, exitUsage, "gprobe add: --maxactive 0: want 1 to 4096 (the kernel's KRETPROBE_MAXACTIVE_MAX)\n"},
		{[]string{"add", "--maxactive", "4097", "r:g/e vfs_read"}, exitUsage, "gprobe add: --maxactive 4097: want 1 to 4096 (the kernel's KRETPROBE_MAXACTIVE_MAX)\n"},
		{[]string{"add", "--maxactive", "-3", uret}, exitUsage, "gprobe add: --maxactive -3: want 1 to 4096"},
		{[]string{"add", "--maxactive", "16", uret}, exitEINVAL, "--maxactive is for kernel return probes; /bin/true:0x0 is a uprobe"},
		{[]string{"add", "--maxactive", "16", uent}, exitEINVAL, "--maxactive applies to return probes (FUNC%return, r:) and none was given"},
	} {
		r := runGprobe(c.args...)
		if r.Code != c.code || r.Stdout != "" || !strings.HasPrefix(r.Stderr, c.msg) {
			t.Errorf("%q: %s\nwant exit %d, stderr starting %q", c.args, r, c.code, c.msg)
		}
	}
	evs, err := fs.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Group == g {
			t.Errorf("installed despite the error: %s", e.Line)
			_ = fs.Delete(e.Kind, e.Group, e.Name)
		}
	}
}
