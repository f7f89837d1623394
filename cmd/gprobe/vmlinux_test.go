package main

import (
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

// vmlinuxPath returns Debian's 6.1 cloud vmlinux (DWARF 5, 590 MB) and its
// source subset, cached by scripts/provision.sh.
func vmlinuxPath(t *testing.T) (vmlinux, src string) {
	t.Helper()
	return testenv.RequireVmlinux(t, testenv.Linux61)
}

// TestPerfDiffDebianVmlinux compares gprobe and perf probe on the real
// Debian 6.1 kernel: line probes in large functions, header inlines found
// in hundreds of units, clones, return probes, lazy patterns, file forms,
// -L listings and error cases.
func TestPerfDiffDebianVmlinux(t *testing.T) {
	perf := testenv.RequirePerf(t)
	vmlinux, src := vmlinuxPath(t)
	stats := &diffStats{}
	c := &checker{t: t, perf: perf, image: vmlinux, stats: stats}
	base := []string{"-k", vmlinux, "-s", src}
	var specs [][]string
	for _, s := range []string{
		"do_sys_openat2", "do_sys_openat2:3", "do_sys_openat2:4", "do_sys_openat2:8", "do_sys_openat2:10",
		"do_sys_openat2:14", "do_sys_openat2:16", "do_sys_openat2:21", "do_sys_openat2:25",
		"vfs_read", "vfs_read%return", "vfs_read:5", "vfs_read:12", "vfs_write:10", "ksys_read:5",
		"build_open_how", "build_open_how:3", "getname_flags:20", "tcp_sendmsg", "tcp_sendmsg:5",
		"schedule:3", "copy_process:30", "IS_ERR", "kmalloc", "vfs_read+3", "vfs_read+5",
		"do_sys_openat2;*getname*", "fs/open.c:1210", "fs/read_write.c:470", "nosuch_function",
		"do_sys_openat2@fs/open.c", "do_sys_openat2@fs/namei.c", "__x64_sys_openat", "do_filp_open%return",
	} {
		specs = append(specs, []string{"-D", s})
	}
	for _, s := range []string{"do_sys_openat2", "vfs_read", "build_open_how", "tcp_sendmsg:1-20", "getname_flags", "fs/open.c:1200-1230"} {
		specs = append(specs, []string{"-L", s})
	}
	// Fetch arguments and -V (issue 3).
	for _, s := range []string{
		"vfs_read file->f_path.dentry->d_name.name:string count",
		"do_sys_openat2 dfd filename:string how->flags how->mode:x16",
		"do_sys_openat2:10 $vars", "vfs_read $params", "vfs_read:12 file->f_pos count pos",
		"tcp_sendmsg sk->__sk_common.skc_dport size msg->msg_iter.count",
		"schedule:3 $vars", "copy_process:30 clone_flags", "getname_flags:20 filename uptr:string",
		"vfs_read jiffies", "vfs_read file->f_mode", "ksys_read fd buf count",
	} {
		specs = append(specs, []string{"-D", s})
	}
	for _, s := range []string{"vfs_read", "do_sys_openat2:10", "tcp_sendmsg:20", "copy_process:30"} {
		specs = append(specs, []string{"-V", s})
	}
	specs = append(specs, []string{"--externs", "-V", "vfs_read"},
		[]string{"--range", "-V", "do_sys_openat2:10"}, []string{"--range", "-V", "tcp_sendmsg_locked:178"},
		[]string{"--range", "--externs", "-V", "tcp_sendmsg_locked"})
	c.checkAll(base, specs)
	stats.report(t)
	// The same answers without the index, and from copies whose debug
	// sections are compressed with zlib and zstd (perf 6.1's libdw
	// cannot read the latter), with a warm index and, for a sample,
	// without one (each such run inflates the sections).
	zlib, zstd := testenv.Compressed(t, vmlinux, "zlib"), testenv.Compressed(t, vmlinux, "zstd")
	c.checkVariants([]variant{
		{image: vmlinux, flags: []string{"--no-cache"}},
		{image: zlib}, {image: zstd},
		{image: zlib, flags: []string{"--no-cache"}, every: 16},
		{image: zstd, flags: []string{"--no-cache"}, every: 16},
	})
}
