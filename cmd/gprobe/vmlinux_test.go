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
		// The kprobe blacklist: the image's own (perf checks none offline).
		"notify_die", "do_int3", "notify_*", "exc_nmi%return", "notify_die%return",
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

// TestPerfDiffDebianVmlinux612 runs the same comparison on Debian's 6.12
// cloud vmlinux (DWARF 5), whose functions differ from 6.1's: the
// allocators became *_noprof functions behind alloc_hooks() macros,
// dev_queue_xmit is an inline wrapper of __dev_queue_xmit found in its
// callers, and struct file, sk_buff and sock moved their members. Besides
// the hand-picked specs, specs are generated from the image for a few
// functions (functionSpecs: entry, return, offsets, the numbered lines;
// argSpecsNamed: each parameter and local and their members, read with
// debug/dwarf).
func TestPerfDiffDebianVmlinux612(t *testing.T) {
	perf := testenv.RequirePerf(t)
	vmlinux, src := testenv.RequireVmlinux(t, testenv.Linux612)
	stats := &diffStats{}
	c := &checker{t: t, perf: perf, image: vmlinux, stats: stats}
	base := []string{"-k", vmlinux, "-s", src}
	var specs [][]string
	for _, s := range []string{
		"do_sys_openat2", "do_sys_openat2:10", "vfs_read", "vfs_read:12", "getname_flags:20", "tcp_sendmsg:5",
		"copy_process:30", "IS_ERR", "alloc_pages_noprof", "kmalloc_noprof", "folio_alloc_noprof:2",
		"dev_queue_xmit", "dev_queue_xmit%return", "dev_queue_xmit:2", "vfs_read+3",
		"do_sys_openat2;*getname*", "fs/open.c:1420", "mm/slub.c:4240", "nosuch_function",
		"__x64_sys_openat", "do_filp_open%return", "alloc_pages_noprof%return",
	} {
		specs = append(specs, []string{"-D", s})
	}
	for _, s := range []string{"dev_queue_xmit", "kmalloc_noprof", "fs/open.c:1400-1430"} {
		specs = append(specs, []string{"-L", s})
	}
	for _, s := range []string{
		"vfs_read file->f_path.dentry->d_name.name:string count",
		"do_sys_openat2 dfd filename:string how->flags how->mode:x16",
		"vfs_read:12 file->f_pos count pos", "tcp_sendmsg sk->__sk_common.skc_dport size msg->msg_iter.count",
		"tcp_sendmsg_locked sk->sk_sndbuf size", "vfs_read file->f_inode->i_ino file->f_flags",
		"__kmalloc_noprof size flags", "kmem_cache_free s->name:string x", "kmem_cache_alloc_noprof%return $retval",
		"dev_queue_xmit skb->len skb->dev->name:string", "inet_sendmsg sock->sk->sk_protocol",
		"schedule:3 $vars", "vfs_read:8 $vars", "vfs_read jiffies",
	} {
		specs = append(specs, []string{"-D", s})
	}
	specs = append(specs, []string{"-V", "dev_queue_xmit"}, []string{"-V", "tcp_sendmsg_locked:30"},
		[]string{"--externs", "-V", "vfs_read"}, []string{"--range", "-V", "do_sys_openat2:10"})
	// Generated from the image.
	// Each gprobe run reads this image's units afresh (about a second of
	// CPU): two functions for the generated places, two for the arguments.
	for _, fn := range []string{"kmem_cache_alloc_noprof", "__dev_queue_xmit"} {
		specs = append(specs, functionSpecs(fn, runGprobe(append(base, "-L", fn)...).Stdout)...)
	}
	c.checkAll(base, specs)
	generated := []string{"kmem_cache_alloc_noprof", "__alloc_pages_noprof"}
	args := argSpecsNamed(t, vmlinux, generated, 2)
	for _, fn := range generated {
		lines := numberedLines(runGprobe(append(base, "-L", fn)...).Stdout, 4)
		line := 0
		if len(lines) > 2 {
			line = lines[2]
		}
		c.checkArgSpecs(base, fn, line, args[fn])
	}
	stats.report(t)
}
