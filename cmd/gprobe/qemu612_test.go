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

// TestQemu612Kinds is the modern kinds' life on Debian's 6.12 kernel, in
// one boot: the host resolves an fprobe on vfs_read's entry and its exit
// (with entry values), a kretprobe with entry values on ksys_read, a
// tracepoint probe on sched_process_exec and an event probe on
// sys_enter_openat against the -dbg vmlinux; the guest installs them with
// add --from, lists them, records dd reading a file of known size with
// gprobe record, resolves the same --fprobe spec from its own BTF, deletes
// them and shows a clean dmesg. On the host, trace-cmd report and gprobe
// analyze read the recording: file positions, byte counts, the comm and
// the exec'd filename, and the opened path must be the workload's.
func TestQemu612Kinds(t *testing.T) {
	qemu.Require(t, qemu.Linux612)
	testenv.Tool(t, "trace-cmd")
	vmlinux, _ := testenv.RequireVmlinux(t, testenv.Linux612)
	input := strings.Repeat("modern kernels, read in the guest\n", 3) // 102 bytes

	const fprobeSpec = "vfs_read file->f_pos count"
	host := [][]string{
		{"--fprobe", "-D", fprobeSpec},
		{"--fprobe", "-D", "vfs_read%return $retval count file->f_pos"},
		{"-D", "ksys_read%return $retval fd count"},
		{"--tracepoint", "-D", "sched_process_exec p->comm:string bprm->filename:string"},
		{"--event", "syscalls/sys_enter_openat", "--format", "testdata/formats-6.12/syscalls.sys_enter_openat.format", "-D", "path=filename:ustring flags"},
		// An object (the struct file dd reads) and its caller, the return
		// address at the entry: analyze --object follows it and names the
		// caller from the recording's kallsyms.
		{"-D", "objread=vfs_read file caller=+0(%sp):x64"},
	}
	var defs strings.Builder
	for _, args := range host {
		r := runGprobe(append([]string{"-k", vmlinux}, args...)...)
		if r.Code != 0 || strings.Count(r.Stdout, "\n") != 1 {
			t.Fatalf("%q: %s", args, r)
		}
		defs.WriteString(r.Stdout)
	}
	t.Logf("definitions resolved on the host:\n%s", defs.String())

	script := `T=/sys/kernel/tracing
echo "== add"
gprobe add --from /root/kinds.defs; echo "status $?"
cat $T/dynamic_events
echo "== list"
gprobe -l; echo "status $?"
echo "== record"
gprobe record -e 'probe:*' -o /tmp/kinds.dat -- dd if=/root/input of=/dev/null bs=4096; echo "status $?"
echo "== btf"
gprobe --fprobe -D '` + fprobeSpec + `'; echo "status $?"
echo "== btf-raw"
gprobe add 'f:kinds/btfraw vfs_read count file->f_pos'; echo "status $?"
gprobe add 'f:kinds/bad vfs_read file->nosuch'; echo "status $?"
gprobe add --maxactive 8 --fprobe 'kinds:ret=vfs_read%return $retval'; echo "status $?"
grep kinds/ $T/dynamic_events
gprobe -d 'kinds:*' >/dev/null 2>&1; echo "status $?"
echo "== del"
gprobe -d 'probe:*'; echo "status $?"
echo "left: $(cat $T/dynamic_events $T/kprobe_events)|$(ls $T/instances)|$(cat $T/events/enable)"
echo "== dmesg"
dmesg | grep -E 'cut here|WARNING:|BUG:|Oops' || true
`
	res, err := qemu.Run(context.Background(), qemu.Options{
		Kernel:  qemu.Linux612,
		Timeout: 4 * time.Minute,
		Script:  script,
		Files:   map[string][]byte{"/root/kinds.defs": []byte(defs.String()), "/root/input": []byte(input)},
		Collect: []string{"/tmp/kinds.dat"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guest booted to the script in %v, ran in %v; output:\n%s", res.Boot, res.Elapsed, res.Output)
	steps := guestSteps(res.Output)
	if d := steps["dmesg"]; d != "" {
		t.Errorf("the guest kernel complained:\n%s", d)
	}

	t.Run("add-list-del", func(t *testing.T) {
		add, list, del := steps["add"], steps["list"], steps["del"]
		for _, want := range []string{
			"f:probe/vfs_read vfs_read f_pos=+112($arg1):s64 count=$arg3:x64",
			"f:probe/vfs_read__return vfs_read%return arg1=$retval count=$arg3:x64 f_pos=+112($arg1):s64",
			"t:probe/sched_process_exec sched_process_exec comm=+2976($arg1):string filename=+0(+96($arg3)):string",
			"e:probe/sys_enter_openat syscalls.sys_enter_openat path=$filename:ustring flags=$flags:x64",
		} {
			if !strings.Contains(add, want+"\n") {
				t.Errorf("dynamic_events lacks %q:\n%s", want, add)
			}
		}
		for _, want := range []string{
			"probe:vfs_read       (on vfs_read with f_pos count)",
			"probe:vfs_read__return (on vfs_read%return with arg1 count f_pos)",
			"probe:sched_process_exec (on tracepoint sched_process_exec with comm filename)",
			"probe:sys_enter_openat (on event syscalls/sys_enter_openat with path flags)",
			"probe:ksys_read__return (on ksys_read%return",
		} {
			if !strings.Contains(list, want) {
				t.Errorf("-l lacks %q:\n%s", want, list)
			}
		}
		if !strings.Contains(add, "status 0\n") || !strings.HasSuffix(list, "status 0\n") ||
			!strings.Contains(del, "status 0\nleft: ||0\n") {
			t.Errorf("add, -l or -d failed or left something behind:\n%s%s%s", add, list, del)
		}
		for _, ev := range []string{"vfs_read", "vfs_read__return", "ksys_read__return", "sched_process_exec", "sys_enter_openat"} {
			if !strings.Contains(del, "Removed event: probe:"+ev+"\n") {
				t.Errorf("-d did not remove probe:%s:\n%s", ev, del)
			}
		}
	})

	t.Run("kernel-btf-syntax", func(t *testing.T) {
		// A raw line in the kernel's BTF syntax is checked with the
		// guest's BTF before it is written: a bad member never reaches
		// the kernel ("refused" is the kernel's word). --maxactive gives
		// an fprobe's exit f<N>.
		out := steps["btf-raw"]
		for _, want := range []string{
			"status 0\n",
			`dynamic_events "f:kinds/bad vfs_read file->nosuch": This field is not found. (argument 1 "file->^nosuch")` + "\n",
			"f:kinds/btfraw vfs_read count=count arg2=file->f_pos\n", // the kernel names a member chain argN
			"f8:kinds/ret vfs_read%return arg1=$retval\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "refused") || strings.Count(out, "status 0\n") != 3 {
			t.Errorf("the bad line reached the kernel, or a good one failed:\n%s", out)
		}
	})

	t.Run("btf-in-guest", func(t *testing.T) {
		// The guest has no vmlinux: BTF resolves the same fprobe.
		want := strings.SplitAfter(defs.String(), "\n")[0]
		if got := steps["btf"]; got != want+"status 0\n" {
			t.Errorf("--fprobe -D %q in the guest:\n%s\nwant %s", fprobeSpec, got, want)
		}
	})

	t.Run("record", func(t *testing.T) {
		rec := steps["record"]
		if !regexp.MustCompile(`written to /tmp/kinds.dat, no events lost\n`).MatchString(rec) || !strings.HasSuffix(rec, "status 0\n") {
			t.Fatalf("record failed or lost events:\n%s", rec)
		}
		out := filepath.Join(t.TempDir(), "kinds.dat")
		if err := os.WriteFile(out, res.Files["/tmp/kinds.dat"], 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := exec.Command("trace-cmd", "report", "-i", out).CombinedOutput()
		if err != nil {
			t.Fatalf("trace-cmd report: %v\n%s", err, rep)
		}
		t.Logf("trace-cmd report -i kinds.dat:\n%s", rep)
		// trace-cmd prints a probe's address in hex: vfs_read's, in the
		// guest's kallsyms the file carries (KASLR moves it every boot).
		ks, err := exec.Command("trace-cmd", "dump", "--kallsyms", "-i", out).CombinedOutput()
		if err != nil {
			t.Fatalf("trace-cmd dump --kallsyms: %v\n%.500s", err, ks)
		}
		sym := regexp.MustCompile(`(?m)^([0-9a-f]{16}) [Tt] vfs_read$`).FindSubmatch(ks)
		if sym == nil {
			t.Fatalf("the file's kallsyms has no vfs_read")
		}
		// An fprobe's address is where ftrace calls it: after the ENDBR64
		// that starts every function of this IBT kernel.
		addr, _ := strconv.ParseUint(string(sym[1]), 16, 64)
		vfsRead := strconv.FormatUint(addr+4, 16)
		n := len(input)
		dd := `(?m)^\s*dd-\d+\s+\[\d+\]\s+[\d.]+: `
		for _, re := range []string{
			// dd reads the file twice: at 0, then at its end, which returns 0.
			dd + `vfs_read: +\(` + vfsRead + `\) f_pos=0 count=0x1000$`,
			dd + fmt.Sprintf(`vfs_read: +\(%s\) f_pos=%d count=0x1000$`, vfsRead, n),
			// At the exit: the bytes read, count as it was at the entry,
			// and f_pos read at the exit through the entry's file (ksys_read
			// stores the new position only after vfs_read returns).
			dd + fmt.Sprintf(`vfs_read__return: +\(%s <- [0-9a-f]+\) arg1=%d count=0x1000 f_pos=0$`, vfsRead, n),
			dd + fmt.Sprintf(`vfs_read__return: +\(%s <- [0-9a-f]+\) arg1=0 count=0x1000 f_pos=%d$`, vfsRead, n),
			// The kretprobe's entry values.
			dd + fmt.Sprintf(`ksys_read__return: +\([0-9a-f]+ <- [0-9a-f]+\) arg1=%d fd=0x[0-9a-f]+ count=0x1000$`, n),
			dd + `ksys_read__return: +\([0-9a-f]+ <- [0-9a-f]+\) arg1=0 fd=0x[0-9a-f]+ count=0x1000$`,
			// exec'ing dd: its comm and the file it ran.
			dd + `sched_process_exec: +\([0-9a-f]+\) comm="dd" filename="/bin/dd"$`,
			// and the file dd opens.
			dd + `sys_enter_openat: +path="/root/input" flags=0x0$`,
		} {
			if !regexp.MustCompile(re).Match(rep) {
				t.Errorf("trace-cmd report lacks a line matching %s", re)
			}
		}
		an := runGprobe("analyze", out)
		t.Logf("gprobe analyze kinds.dat:\n%s%s", an.Stdout, an.Stderr)
		// The fprobe's entry and exit pair up: dd's two reads and the
		// recorder's own, each entry with its exit.
		calls := strings.Count(string(rep), ": vfs_read: ")
		m := regexp.MustCompile(`(?m)^\s*vfs_read\s+(\d+)\s+0\s+0\s`).FindStringSubmatch(an.Stdout)
		if an.Code != 0 || m == nil || m[1] != fmt.Sprint(calls) || calls < 2 ||
			!strings.Contains(an.Stdout, "vfs_read  (probe:vfs_read -> probe:vfs_read__return)") {
			t.Errorf("gprobe analyze did not pair vfs_read's %d entries and exits:\n%s%s", calls, an.Stdout, an.Stderr)
		}

		// The file dd reads, in both of its reads, called from ksys_read.
		// Its address may have served another file before (the slab reuses
		// a closed file's): every event carrying it is in its life.
		files := regexp.MustCompile(dd+`objread: +\([0-9a-f]+\) file=(0x[0-9a-f]+) caller=0x[0-9a-f]+$`).FindAllSubmatch(rep, -1)
		if len(files) != 2 || string(files[0][1]) != string(files[1][1]) {
			t.Fatalf("dd's two reads of one file are not in the report: %q", files)
		}
		file := string(files[0][1])
		carrying := regexp.MustCompile(`(?m): objread: +\([0-9a-f]+\) file=`+file+` `).FindAll(rep, -1)
		obj := runGprobe("analyze", "--object", file, out)
		t.Logf("gprobe analyze --object %s kinds.dat:\n%s%s", file, obj.Stdout, obj.Stderr)
		read := regexp.MustCompile(`(?m)^  [\d.]+ \[\d+\] dd-\d+ probe:objread matched=file caller=0x[0-9a-f]+ <ksys_read\+0x[0-9a-f]+>$`)
		summary := fmt.Sprintf("\n%s: %d events, first ", file, len(carrying))
		if obj.Code != 0 || len(read.FindAllString(obj.Stdout, -1)) != 2 || !strings.Contains(obj.Stdout, summary) {
			t.Errorf("analyze --object %s does not show dd's two reads called from ksys_read, or not the %d events carrying it:\n%s%s", file, len(carrying), obj.Stdout, obj.Stderr)
		}
		top := runGprobe("analyze", "--objects", "50", out)
		row := regexp.MustCompile(`(?m)^\s*\d+\s+` + file + `\s+` + strconv.Itoa(len(carrying)) + `\s`)
		if top.Code != 0 || !row.MatchString(top.Stdout) {
			t.Errorf("analyze --objects 50 does not rank %s with its %d events:\n%s%s", file, len(carrying), top.Stdout, top.Stderr)
		}
	})
}
