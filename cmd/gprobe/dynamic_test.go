package main

import (
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

// TestDynamicDefinitions: --fprobe, --tracepoint and --event with -D on
// Debian's 6.12 vmlinux, whose own README (in the image) decides what the
// kernel takes, and the same flags on the 6.1 vmlinux refused naming the
// release that brought each kind.
func TestDynamicDefinitions(t *testing.T) {
	v612, _ := testenv.RequireVmlinux(t, testenv.Linux612)
	v61, _ := vmlinuxPath(t)
	const formats = "testdata/formats-6.12/"
	for _, c := range []struct {
		args []string
		code int
		out  string // stdout, or a piece of stderr when code != 0
	}{
		{[]string{"-k", v612, "--fprobe", "-D", "vfs_read file->f_pos count", "-D", "vfs_read%return $retval count"}, exitOK,
			"f:probe/vfs_read vfs_read f_pos=+112($arg1):s64 count=$arg3:x64\nf:probe/vfs_read__return vfs_read%return $retval count=$arg3:x64\n"},
		{[]string{"-k", v612, "--fprobe", "--kernel-btf-args", "-D", "vfs_read%return $retval count file->f_pos"}, exitOK,
			"f:probe/vfs_read__return vfs_read%return $retval count f_pos=file->f_pos\n"},
		{[]string{"-k", v612, "--tracepoint", "-D", "sched_process_exec p->comm:string bprm->filename:string"}, exitOK,
			"t:probe/sched_process_exec sched_process_exec comm=+2976($arg1):string filename=+0(+96($arg3)):string\n"},
		{[]string{"-k", v612, "--event", "syscalls/sys_enter_openat", "--format", formats + "syscalls.sys_enter_openat.format", "-D", "filename:ustring flags"}, exitOK,
			"e:probe/sys_enter_openat syscalls.sys_enter_openat filename=$filename:ustring flags=$flags:x64\n"},
		{[]string{"-k", v612, "-D", "vfs_read%return $retval count"}, exitOK, "$retval count=$arg3:x64\n"},
		{[]string{"-k", v612, "--fprobe", "-D", "vfs_read:12 count"}, exitEINVAL, "vfs_read:12 is a source line; fprobes sit only at a function's entry or return"},
		{[]string{"-k", v612, "--fprobe", "-D", "do_sys_openat2 fd"}, exitEINVAL, "'fd' is a local variable of do_sys_openat2"},
		{[]string{"-k", v612, "--event", "net/net_dev_xmit", "--format", formats + "net.net_dev_xmit.format", "-D", "(sk_buff)skbaddr->len len"}, exitEINVAL,
			`This argument name is already used (argument 2 "^len=$len:x32")`},
		{[]string{"-k", v61, "--fprobe", "-D", "vfs_read count"}, exitEOPNOTSUPP, "fprobe events (f:) need Linux 6.5 or later"},
		{[]string{"-k", v61, "--tracepoint", "-D", "kfree ptr"}, exitEOPNOTSUPP, "Tracepoint probes (t:) need Linux 6.5 or later"},
		{[]string{"-k", v61, "-D", "vfs_read%return $retval count"}, exitEOPNOTSUPP, "need Linux 6.9 or later"},
		{[]string{"-k", v612, "--event", "sched_switch", "-D", "prev_pid"}, exitUsage, "want SYSTEM/EVENT"},
		{[]string{"-x", "/bin/sh", "--fprobe", "-D", "main"}, exitUsage, "probe the kernel"},
	} {
		r := runGprobe(c.args...)
		switch {
		case r.Code != c.code:
			t.Errorf("%q: status %d, want %d\n%s", c.args, r.Code, c.code, r)
		case c.code == exitOK && r.Stdout != c.out && !(strings.HasPrefix(c.args[2], "-D") && strings.HasSuffix(r.Stdout, c.out)):
			t.Errorf("%q:\n got %q\nwant %q", c.args, r.Stdout, c.out)
		case c.code != exitOK && !strings.Contains(r.Stderr, c.out):
			t.Errorf("%q: stderr %q lacks %q", c.args, r.Stderr, c.out)
		}
	}
}
