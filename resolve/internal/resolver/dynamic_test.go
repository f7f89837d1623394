package resolver

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/internal/btfinfo"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/spec"
)

// readmeFeatures are the features of a real kernel's tracefs README
// (emit/probedef/testdata/readme/VERSION.txt).
func readmeFeatures(t testing.TB, version string) *probedef.Features {
	b, err := os.ReadFile("../../../emit/probedef/testdata/readme/" + version + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	f := probedef.ParseFeatures(string(b))
	return &f
}

// debian612 opens Debian's 6.12 -dbg vmlinux: a DWARF resolver and a BTF
// one (its .BTF section, no image), both for that kernel's features.
func debian612(t testing.TB, opts testOpts) (dw, bt *Resolver) {
	vmlinux, _ := testenv.RequireVmlinux(t, testenv.Linux612)
	f, err := dwarfinfo.Open(vmlinux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	opts.Features = *readmeFeatures(t, "6.12")
	if dw, err = testNew(f, false, opts); err != nil {
		t.Fatal(err)
	}
	s, err := btfinfo.Load(vmlinux)
	if err != nil {
		t.Fatal(err)
	}
	opts.BTF, opts.Arch = s, arch.AMD64
	if bt, err = testNew(nil, false, opts); err != nil {
		t.Fatal(err)
	}
	return dw, bt
}

// resolveKind resolves def as kind ("fprobe", "tprobe", "kprobe").
func resolveKind(t *testing.T, r *Resolver, kind, def string) (string, error) {
	t.Helper()
	p, err := spec.ParseProbeOpts(def, spec.Options{EntryValues: true})
	if err != nil {
		t.Fatal(err)
	}
	var ps []probe.Probe
	switch kind {
	case "fprobe":
		var pr probe.Probe
		pr, err = r.Fprobe(p)
		ps = []probe.Probe{pr}
	case "tprobe":
		var pr probe.Probe
		pr, err = r.Tprobe(p)
		ps = []probe.Probe{pr}
	default:
		ps, err = r.Probes(p)
	}
	if err != nil {
		return "", err
	}
	var lines []string
	for _, p := range ps {
		lines = append(lines, p.String())
	}
	return strings.Join(lines, "\n"), nil
}

// TestFprobeTprobe612: fprobes, tracepoint probes and kretprobes with entry
// values resolved from the 6.12 vmlinux's DWARF read the arguments from
// their argument registers ($argN), and BTF alone (the guest's view, no
// vmlinux) gives the same definitions. Each line passes the kernel's
// grammar for that kernel.
func TestFprobeTprobe612(t *testing.T) {
	dw, bt := debian612(t, testOpts{})
	feat := readmeFeatures(t, "6.12")
	for _, c := range []struct{ kind, def, want string }{
		{"fprobe", "vfs_read file->f_pos count", "f:probe/vfs_read vfs_read f_pos=+112($arg1):s64 count=$arg3:x64"},
		{"fprobe", "vfs_read%return $retval count file->f_pos", "f:probe/vfs_read__return vfs_read%return $retval count=$arg3:x64 f_pos=+112($arg1):s64"},
		{"fprobe", "myread=vfs_read buf", "f:probe/myread vfs_read buf=$arg2:x64"},
		{"fprobe", "vfs_read file->f_path.dentry->d_name.name:string", "f:probe/vfs_read vfs_read name=+0(+40(+72($arg1))):string"},
		{"fprobe", "vfs_read%return", "f:probe/vfs_read__return vfs_read%return"},
		{"tprobe", "sched_process_exec p->comm:string bprm->filename:string old_pid", "t:probe/sched_process_exec sched_process_exec comm=+2976($arg1):string filename=+0(+96($arg3)):string old_pid=$arg2:s32"},
		{"tprobe", "kfree ptr call_site:symbol", "t:probe/kfree kfree ptr=$arg2:x64 call_site_symbol=$arg1:symbol"},
		// With 6.12's README perf rebases a kretprobe on _text.
		{"kprobe", "vfs_read%return $retval count file->f_pos", "r:probe/vfs_read__return _text+4478080 $retval count=$arg3:x64 f_pos=+112($arg1):s64"},
	} {
		got, err := resolveKind(t, dw, c.kind, c.def)
		if err != nil || got != c.want {
			t.Errorf("%s %q (DWARF):\n got %s %v\nwant %s", c.kind, c.def, got, err, c.want)
			continue
		}
		if _, err := probedef.Parse(got, &probedef.Options{Features: feat, Arch: arch.AMD64}); err != nil {
			t.Errorf("%s: %v", got, err)
		}
		if c.kind == "kprobe" {
			continue // a kretprobe's place comes from the symbol table
		}
		if got, err := resolveKind(t, bt, c.kind, c.def); err != nil || got != c.want {
			t.Errorf("%s %q (BTF):\n got %s %v\nwant %s", c.kind, c.def, got, err, c.want)
		}
	}
}

// TestDynamicRefusals: what has no value at a function boundary, or needs
// a newer kernel, is refused with the reason.
func TestDynamicRefusals(t *testing.T) {
	dw, _ := debian612(t, testOpts{})
	for _, c := range []struct {
		kind, def, msg string
		err            error
	}{
		{"fprobe", "vfs_read:12 count", "is a source line", core.ErrInvalid},
		{"fprobe", "vfs_read+4", "is an offset inside the function", core.ErrInvalid},
		{"fprobe", "vfs_* count", "is a pattern", core.ErrInvalid},
		{"fprobe", "do_sys_openat2 fd", "'fd' is a local variable of do_sys_openat2", core.ErrInvalid},
		{"fprobe", "vfs_read nosuchvar", "", core.ErrNotFound},
		{"fprobe", "do_mmap prot populate", "'populate' of do_mmap: its value is in %sp at the entry, not in an argument register", core.ErrInvalid},
		{"fprobe", "vfs_read $retval", "only available on a return probe", core.ErrInvalid},
		{"tprobe", "sched_process_exec%return", "a tracepoint has no return", core.ErrInvalid},
		{"tprobe", "no_such_tracepoint x", "not a tracepoint of this kernel", core.ErrNotFound},
	} {
		_, err := resolveKind(t, dw, c.kind, c.def)
		if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s %q: got %v, want %v with %q", c.kind, c.def, err, c.err, c.msg)
		}
	}
	// The 6.1 kernel has no fprobes and no entry values at return: refused
	// naming the release that would take them.
	old := readmeFeatures(t, "6.1")
	dw61, _ := debian612(t, testOpts{TargetFeatures: old})
	for kind, def := range map[string]string{"fprobe": "vfs_read count", "tprobe": "kfree ptr", "kprobe": "vfs_read%return count"} {
		_, err := resolveKind(t, dw61, kind, def)
		if !errors.Is(err, core.ErrUnsupported) || !strings.Contains(err.Error(), "Linux 6.") {
			t.Errorf("%s %q for 6.1: %v", kind, def, err)
		}
	}
}

// TestKernelBTFArgs: the kernel's own BTF syntax, still resolved here.
func TestKernelBTFArgs(t *testing.T) {
	dw, _ := debian612(t, testOpts{KernelBTFArgs: true})
	for def, want := range map[string]string{
		"vfs_read%return $retval count file->f_pos":        "f:probe/vfs_read__return vfs_read%return $retval count f_pos=file->f_pos",
		"vfs_read $params":                                 "f:probe/vfs_read vfs_read $arg*",
		"vfs_read file->f_path.dentry->d_name.name:string": "f:probe/vfs_read vfs_read name=file->f_path.dentry->d_name.name:string",
	} {
		if got, err := resolveKind(t, dw, "fprobe", def); err != nil || got != want {
			t.Errorf("%q: got %s %v, want %s", def, got, err, want)
		}
	}
	if _, err := resolveKind(t, dw, "fprobe", "do_sys_openat2 fd"); err == nil {
		t.Error("a local in the kernel's BTF syntax was not refused")
	}
}

// TestEprobe612: event probes on fields of 6.12's events, members through
// a pointer field by a cast, resolved through BTF.
func TestEprobe612(t *testing.T) {
	dw, _ := debian612(t, testOpts{})
	format := func(name string) string {
		b, err := os.ReadFile("../../../cmd/gprobe/testdata/formats-6.12/" + name + ".format")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct {
		ev    probe.EventID
		words string
		want  string
	}{
		{probe.EventID{System: "syscalls", Name: "sys_enter_openat"}, "filename:ustring dfd flags if flags == 0",
			"e:probe/sys_enter_openat syscalls.sys_enter_openat filename=$filename:ustring dfd=$dfd:x64 flags=$flags:x64 if flags == 0"},
		{probe.EventID{System: "net", Name: "net_dev_xmit"}, "(sk_buff)skbaddr->len dev=(sk_buff)skbaddr->dev->name:string rc",
			"e:probe/net_dev_xmit net.net_dev_xmit len=+112($skbaddr):x32 dev=+304(+16($skbaddr)):string rc=$rc:s32"},
		{probe.EventID{System: "sched", Name: "sched_process_exec"}, "filename pid comm=$comm:string",
			"e:probe/sched_process_exec sched.sched_process_exec filename=$filename:string pid=$pid:s32 comm=$comm:string"},
	} {
		p, err := dw.Eprobe(c.ev, format(c.ev.System+"."+c.ev.Name), strings.Fields(c.words))
		if err != nil || p.String() != c.want {
			t.Errorf("%v %q:\n got %s %v\nwant %s", c.ev, c.words, p.String(), err, c.want)
		}
	}
	_, err := dw.Eprobe(probe.EventID{System: "net", Name: "net_dev_xmit"}, format("net.net_dev_xmit"), []string{"skbaddr->len"})
	if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "cast") {
		t.Errorf("members of a void * without a cast: %v", err)
	}
}

// FuzzEprobe: any words on an event's format (the fixture's BTF for casts)
// resolve or fail with a one-line error, never a panic, and what resolves
// is a line the kernel's grammar takes back as written.
func FuzzEprobe(f *testing.F) {
	bs, err := btfinfo.Load("../../../testdata/vmlinux-fixtures/x86_64-dwarf5-O2.elf")
	if err != nil {
		f.Fatal(err)
	}
	format, err := os.ReadFile("../../../cmd/gprobe/testdata/formats-6.12/net.net_dev_xmit.format")
	if err != nil {
		f.Fatal(err)
	}
	feat := readmeFeatures(f, "6.12")
	r, err := testNew(nil, false, testOpts{BTF: bs, Arch: arch.AMD64, Features: *feat})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"(sk_buff)skbaddr->len dev=(sk_buff)skbaddr->dev->name:string rc", "name len:u16 if len > 10",
		"x=+8($skbaddr):u32 $comm:string", "(file)skbaddr->f_pos", "(x skbaddr", "skbaddr->x", "=len", "len:string"} {
		f.Add(s)
	}
	ev := probe.EventID{System: "net", Name: "net_dev_xmit"}
	f.Fuzz(func(t *testing.T, words string) {
		p, err := r.Eprobe(ev, string(format), strings.Fields(words))
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !errors.Is(err, core.ErrNeedsDWARF) {
				t.Fatalf("%q: multi-line error %q", words, err)
			}
			return
		}
		line := p.String()
		back, err := probedef.Parse(line, &probedef.Options{Features: feat, Arch: arch.AMD64})
		if err == nil && back.String() != line {
			t.Fatalf("%q: %q reads back as %q", words, line, back.String())
		}
	})
}

// TestEprobeHugeFormat: an event format with 200,000 fields (a hostile
// --format file) gives a short one-line error for a field it lacks.
func TestEprobeHugeFormat(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: huge\nID: 1\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n")
	for i := range 200000 {
		fmt.Fprintf(&b, "\tfield:int f%d;\toffset:%d;\tsize:4;\tsigned:1;\n", i, 8+4*i)
	}
	bs, err := btfinfo.Load("../../../testdata/vmlinux-fixtures/x86_64-dwarf5-O2.elf")
	if err != nil {
		t.Fatal(err)
	}
	r, err := testNew(nil, false, testOpts{BTF: bs, Arch: arch.AMD64, Features: *readmeFeatures(t, "6.12")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Eprobe(probe.EventID{System: "x", Name: "huge"}, b.String(), []string{"nosuch"})
	if err == nil || !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("%v, want ErrNotFound", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || len(msg) > 300 || !strings.Contains(msg, "(fields: f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11 and 199988 more).") {
		t.Errorf("%d bytes: %.400s", len(msg), msg)
	}
}
