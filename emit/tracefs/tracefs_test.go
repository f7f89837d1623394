package tracefs_test

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/target"
)

// realFS opens this machine's tracefs with uprobe_events (mounted when it
// is not), or skips (fatal under GPROBE_REQUIRE_PERF=1, as in CI).
func realFS(t *testing.T) *tracefs.FS {
	t.Helper()
	testenv.Tracefs(t)
	fs, err := tracefs.Open()
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// group is a tracefs group name unique to this test and process.
func group(t *testing.T) string {
	n := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, t.Name())
	return fmt.Sprintf("gpt_%s_%d", n, os.Getpid())
}

// selfOffset is the file offset of the test binary's ELF entry point: a
// real instruction for uprobes to sit on, already executed.
func selfOffset(t *testing.T) (string, uint64) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && f.Entry >= p.Vaddr && f.Entry < p.Vaddr+p.Filesz {
			return exe, f.Entry - p.Vaddr + p.Off
		}
	}
	t.Fatal("no segment holds the entry point")
	return "", 0
}

// cleanup deletes every event of grp this test created, disabling it first.
func cleanup(t *testing.T, fs *tracefs.FS, grp string) {
	t.Cleanup(func() {
		evs, err := fs.List()
		if err != nil {
			t.Error(err)
			return
		}
		for _, e := range evs {
			if e.Group == grp {
				_ = fs.Enable(e.Group, e.Name, false)
				if err := fs.Delete(e.Kind, e.Group, e.Name); err != nil && !errors.Is(err, tracefs.ErrNotFound) {
					t.Errorf("cleanup %s:%s: %v", e.Group, e.Name, err)
				}
			}
		}
	})
}

func TestFeaturesOfThisKernel(t *testing.T) {
	fs := realFS(t)
	f := fs.Features()
	if !f.HexTypes || !f.MultiProbe || !f.Immediates {
		t.Errorf("README features: %+v", f)
	}
	for _, want := range []string{"u8", "s64", "x32", "string", "ustring", "symbol", "bitfield"} {
		found := false
		for _, ty := range f.Types {
			found = found || ty == want
		}
		if !found {
			t.Errorf("type %s missing from %v", want, f.Types)
		}
	}
}

func TestParseErrorLog(t *testing.T) {
	log := "[ 9694.869533] trace_uprobe: error: Invalid uprobe offset\n" +
		"  Command: p:gpv/a /bin/sh:10a\n" +
		"                           ^\n" +
		"[ 9695.000001] trace_kprobe: error: Invalid register name\n" +
		"  Command: p vfs_read %none_reg\n" +
		"                      ^\n"
	es := tracefs.ParseErrorLog(log)
	if len(es) != 2 {
		t.Fatalf("got %+v", es)
	}
	if es[0] != (tracefs.LogEntry{"trace_uprobe", "Invalid uprobe offset", "p:gpv/a /bin/sh:10a", 16}) {
		t.Errorf("entry 0: %+v", es[0])
	}
	if m := es[1].Message(); m != `Invalid register name (argument 1 "^%none_reg")` {
		t.Errorf("message: %s", m)
	}
}

// TestHistErrorMessage: an error_log entry of a writer that is not a probe
// (a hist trigger, a synthetic event) reads as the command with a caret,
// not as probe parts.
func TestHistErrorMessage(t *testing.T) {
	log := "[    6.313290] hist:lat:r: error: Param type doesn't match synthetic event field type\n" +
		"  Command: hist:keys=common_pid:l=common_timestamp-$ts0:onmatch(lat.e).trace(glat,$l,$l)\n" +
		"                                                                                  ^\n"
	es := tracefs.ParseErrorLog(log)
	if len(es) != 1 || es[0].Subsystem != "hist:lat:r" {
		t.Fatalf("got %+v", es)
	}
	want := `Param type doesn't match synthetic event field type (at "hist:keys=common_pid:l=common_timestamp-$ts0:onmatch(lat.e).trace(glat,^$l,$l)")`
	if m := es[0].Message(); m != want {
		t.Errorf("message:\n got %s\nwant %s", m, want)
	}
}

// TestUprobeLifecycle writes, lists, enables, fails to delete while enabled,
// disables and deletes a uprobe on the real kernel.
func TestUprobeLifecycle(t *testing.T) {
	fs := realFS(t)
	grp := group(t)
	cleanup(t, fs, grp)
	bin, off := selfOffset(t)
	line := fmt.Sprintf("p:%s/ev %s:0x%x a=%%ax:x64 s=+0(%%sp):u32", grp, bin, off)
	if err := fs.Write(probe.Uprobe, line); err != nil {
		t.Fatal(err)
	}
	evs, err := fs.List()
	if err != nil {
		t.Fatal(err)
	}
	var got *tracefs.Event
	for i := range evs {
		if evs[i].Group == grp {
			got = &evs[i]
		}
	}
	if got == nil || got.Probe == nil {
		t.Fatalf("%s not listed: %+v", line, evs)
	}
	want := fmt.Sprintf("p:%s/ev %s:0x%016x a=%%ax:x64 s=+0(%%sp):u32", grp, bin, off)
	if got.Line != want || got.Probe.Target.Path != bin || got.Probe.Target.Offset != off || len(got.Probe.Args) != 2 || got.Probe.Args[1].Name != "s" {
		t.Errorf("listed %q (%+v), want %q", got.Line, got.Probe, want)
	}
	// Writing the same name again is the kernel's multi-probe append; the
	// exact same probe is refused with EEXIST and error_log's SAME_PROBE.
	err = fs.Write(probe.Uprobe, line)
	var we *tracefs.WriteError
	if !errors.Is(err, tracefs.ErrExist) || !errors.As(err, &we) || we.Log == nil || we.Log.Text != "There is already the exact same probe event" {
		t.Errorf("duplicate write: %v", err)
	}
	if err := fs.Enable(grp, "ev", true); err != nil {
		t.Fatal(err)
	}
	if on, err := fs.Enabled(grp, "ev"); err != nil || !on {
		t.Errorf("enabled = %v, %v", on, err)
	}
	if err := fs.Delete(probe.Uprobe, grp, "ev"); !errors.Is(err, tracefs.ErrBusy) || !errors.Is(err, syscall.EBUSY) {
		t.Errorf("deleting an enabled event: %v, want tracefs.ErrBusy", err)
	}
	if err := fs.Enable(grp, "ev", false); err != nil {
		t.Fatal(err)
	}
	if err := fs.Delete(probe.Uprobe, grp, "ev"); err != nil {
		t.Fatal(err)
	}
	if err := fs.Delete(probe.Uprobe, grp, "ev"); !errors.Is(err, tracefs.ErrNotFound) {
		t.Errorf("deleting twice: %v, want tracefs.ErrNotFound", err)
	}
	if err := fs.Enable(grp, "ev", true); !errors.Is(err, tracefs.ErrNotFound) {
		t.Errorf("enabling a deleted event: %v", err)
	}
}

// TestNoKprobes: this kernel has no kprobe_events; the error says so.
func TestNoKprobes(t *testing.T) {
	fs := realFS(t)
	if fs.Has(probe.Kprobe) {
		t.Skip("this kernel has kprobe_events")
	}
	err := fs.Write(probe.Kprobe, "p:gpt_nokprobes/x vfs_read")
	if !errors.Is(err, tracefs.ErrNoKprobes) {
		t.Fatalf("got %v", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("not one line: %q", err)
	}
}

// TestKernelAgreesWithValidator writes every error case of probedef's
// golden table that the running kernel can take (uprobe cases here; kprobe,
// fprobe, tprobe and eprobe cases too on a kernel with those events, such
// as the 6.1 and 6.12 guests of the qemu tests) to the kernel: it must
// refuse each with the message and caret position the validator predicted,
// reading the line with this kernel's README features, its symbols, its BTF
// and its events. A case the validator accepts on this kernel (a line of
// an older kernel's section) must be accepted by the kernel too, and is
// removed again. GPROBE_SYNTAX_CASES names the table when the test binary
// runs away from the source tree.
func TestKernelAgreesWithValidator(t *testing.T) {
	fs := realFS(t)
	before, err := fs.List()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeNew(t, fs, before) })
	path := os.Getenv("GPROBE_SYNTAX_CASES")
	if path == "" {
		path = "../probedef/testdata/syntax_errors.txt"
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	relb, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	rel := strings.TrimSpace(string(relb))
	is61 := strings.HasPrefix(rel, "6.1.")
	feat := fs.Features()
	ks := install.RunningKallsyms()
	var kbtf probedef.BTF
	if feat.BTFArgs {
		if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err == nil {
			kbtf = target.RunningBTF()
		}
	}
	options := func(existing []*probe.Probe) *probedef.Options {
		o := &probedef.Options{Features: &feat, Existing: existing, BTF: kbtf, EventFields: fs.EventFields}
		if ks != nil {
			o.Symbols = ks.Count
		}
		return o
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := map[probe.Kind]int{}
	accepted := 0
	// The multi-probe cases need their probe installed first: only in the
	// throw-away guest kernel, where kprobes/testevent is ours to create.
	inGuest := os.Getenv("GPROBE_IN_GUEST") == "1"
	var existing []*probe.Probe
	setup := func(line string) {
		for _, d := range existing {
			_ = fs.Delete(d.Kind, d.GroupOrDefault(), d.Event)
		}
		existing = nil
		if line == "" {
			return
		}
		d, err := probedef.Parse(line, options(nil))
		if err != nil {
			return // an existing probe of a kind this kernel lacks
		}
		if err := fs.Write(d.Kind, line); err != nil {
			t.Fatalf("existing: %q: %v", line, err)
		}
		existing = []*probe.Probe{d}
	}
	defer setup("")
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "readme:") {
			setup("")
			continue
		}
		if rest, ok := strings.CutPrefix(l, "existing:"); ok {
			if inGuest && fs.Has(probe.Kprobe) {
				setup(strings.TrimSpace(rest))
			}
			continue
		}
		cmd, code, ok := strings.Cut(l, "\t")
		if !ok || strings.HasPrefix(l, "#") {
			continue
		}
		line := strings.Replace(cmd, "^", "", 1)
		kind := probedef.KindOf(line)
		if needsState[code] != (existing != nil) {
			continue
		}
		if !fs.Has(kind) || gprobeOnly[code] || kernelDiffers(rel, line) != "" ||
			(is61 && (code == "TOO_MANY_ARGS" || accepted61[line])) {
			continue
		}
		_, verr := probedef.Parse(line, options(existing))
		var pe *probedef.Error
		if verr == nil {
			// Valid on this kernel: it must take the line too.
			if existing != nil || !inGuest {
				continue
			}
			had, _ := fs.List()
			if err := fs.Write(kind, line); err != nil {
				t.Errorf("%q: the validator accepts it, the kernel said %v", line, err)
				continue
			}
			removeNew(nil, fs, had)
			accepted++
			continue
		}
		if !errors.As(verr, &pe) {
			t.Errorf("%q: %v", line, verr)
			continue
		}
		if gprobeOnly[pe.Code] {
			continue // refused by gprobe before the kernel would see it
		}
		werr := fs.Write(kind, line)
		var we *tracefs.WriteError
		if is61 && pe.Code == "NEED_STRING_TYPE" {
			// 6.1 refuses these without an error_log entry.
			if !errors.As(werr, &we) || we.Errno != syscall.EINVAL || we.Log != nil {
				t.Errorf("%q: 6.1 said %v", line, werr)
			}
			continue
		}
		if pe.Code == "TOO_MANY_ARGS" && errors.As(werr, &we) && we.Errno == syscall.E2BIG && we.Log == nil {
			// Linux 6.5 to 6.17 refuse these with E2BIG and no log.
			n[kind]++
			continue
		}
		if !errors.As(werr, &we) || we.Log == nil {
			t.Errorf("%q: kernel said %v, validator %s", line, werr, pe.Code)
			continue
		}
		if we.Log.Text != pe.Text || we.Log.Pos != pe.Pos || we.Log.Command != pe.Command {
			t.Errorf("%q:\nkernel    %q at %d\nvalidator %q at %d", line, we.Log.Text, we.Log.Pos, pe.Text, pe.Pos)
		}
		if we.Log.Message() != probedef.Describe(pe.Command, pe.Pos, pe.Text) {
			t.Errorf("messages differ: %s", we.Log.Message())
		}
		n[kind]++
	}
	if n[probe.Uprobe] < 50 || (fs.Has(probe.Kprobe) && n[probe.Kprobe] < 50) ||
		(feat.Fprobes && (n[probe.Fprobe] < 50 || n[probe.Tprobe] < 40)) || (inGuest && n[probe.Eprobe] < 8) {
		t.Errorf("only %v cases reached the kernel", n)
	}
	t.Logf("refused lines where this kernel (%s) and the validator agree on message and position: %d uprobe, %d kprobe, %d fprobe, %d tprobe, %d eprobe; %d lines both accept",
		rel, n[probe.Uprobe], n[probe.Kprobe], n[probe.Fprobe], n[probe.Tprobe], n[probe.Eprobe], accepted)
}

// Lines Linux 6.1 accepts where gprobe is stricter, as newer kernels are:
// a symbol type on a uprobe. (6.1 also takes a 129th argument and
// silently drops it; gprobe refuses TOO_MANY_ARGS as newer kernels do.)
var accepted61 = map[string]bool{"p /bin/sh:10 $stack0:symstr": true}

// Cases that need probes installed first (the multi-probe checks): run
// against a real kernel only in the guest.
var needsState = map[string]bool{"DIFF_PROBE_TYPE": true, "DIFF_ARG_TYPE": true, "SAME_PROBE": true}

// Codes the kernel does not refuse (gprobe is stricter, or refuses what
// the kernel's README does not offer): never written.
var gprobeOnly = map[string]bool{"MAXACT_NO_UPROBE": true, "BAD_PREFIX": true, "TRAILING_DEREF": true,
	"BAD_SYMBOL": true, "NOT_A_PROBE": true, "NO_PLACE": true, "BAD_CHAR": true, "LINE_TOO_LONG": true,
	"BAD_KIND_PREFIX": true, "NO_FPROBES": true, "NO_TPROBES": true, "NO_EPROBES": true, "NO_EP_FILTERS": true}

// kernelDiffers says why a kernel answers a line differently from the
// validator (which follows Linux 6.1, and the parser Linux 6.12 has where
// README shows it): "" when it does not.
func kernelDiffers(release, line string) string {
	if !strings.HasPrefix(release, "6.18.") {
		return ""
	}
	return differs618[line]
}

// Lines where Linux 6.18 answers differently from the 6.12 parser the
// validator follows.
var differs618 = map[string]string{
	"p /bin/sh:10 (%sp+10)": "6.18 reads a leading '(' as a type cast: BTF is not available",
	"p /bin/sh:10 (%sp)":    "6.18 reads a leading '(' as a type cast: BTF is not available",
}

// removeNew deletes events that appeared during a test that should have
// created none (a kernel accepting a line the test expected it to refuse):
// those in the kernel's default groups on the table's places.
func removeNew(t *testing.T, fs *tracefs.FS, before []tracefs.Event) {
	had := map[string]bool{}
	for _, e := range before {
		had[e.Group+"/"+e.Name] = true
	}
	after, _ := fs.List()
	for _, e := range after {
		if had[e.Group+"/"+e.Name] || e.Probe == nil {
			continue
		}
		if (e.Group == "uprobes" && e.Probe.Target.Path == "/bin/sh") || (e.Group == "kprobes" && e.Probe.Target.Symbol == "vfs_read") ||
			e.Kind.Dynamic() {
			if t != nil {
				t.Errorf("kernel accepted a line and created %s", e.Line)
			}
			_ = fs.Delete(e.Kind, e.Group, e.Name)
		}
	}
}

// FuzzParseErrorLog: any error_log text parses without panicking, into
// entries whose caret lies within (or just past) their command, and whose
// one-line message has no newline.
func FuzzParseErrorLog(f *testing.F) {
	f.Add("[ 9694.869533] trace_uprobe: error: Invalid uprobe offset\n  Command: p:gpv/a /bin/sh:10a\n                           ^\n")
	f.Add("[    1.000000] trace_kprobe: error: Too many arguments are specified\n  Command: p x\n               ^\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, e := range tracefs.ParseErrorLog(s) {
			if e.Pos < 0 {
				t.Fatalf("negative position in %+v", e)
			}
			if strings.Contains(e.Message(), "\n") {
				t.Fatalf("multi-line message %q", e.Message())
			}
		}
	})
}

// FuzzParseList: any listing text parses without panicking; parsed lines
// render back to text that parses to the same line.
func FuzzParseList(f *testing.F) {
	f.Add("p:probe_prog/work /tmp/e4/prog:0x0000000000001260 n=%di:s32 s=%si:x64\nr:uprobes/x /bin/sh:0x000000000000000a arg1=$retval\n")
	f.Add("p:kprobes/testevent kernel_clone abcd=\\1\nr16:probe/vfs_read__return vfs_read arg1=$retval\n")
	f.Add("p:/\np::/0\n") // once broke record's own listing parser
	f.Fuzz(func(t *testing.T, s string) {
		evs, err := tracefs.ParseList(probe.Uprobe, s)
		if err != nil {
			return
		}
		for _, e := range evs {
			if e.Probe == nil {
				continue
			}
			again, err := probedef.Parse(e.Probe.String(), &probedef.Options{NoStat: true, AnyRegister: true, Features: &probedef.KnownFeatures})
			if err != nil || again.String() != e.Probe.String() {
				t.Fatalf("%q -> %q -> %v", e.Line, e.Probe.String(), err)
			}
		}
	})
}

func TestErrnoSentinels(t *testing.T) {
	for no, want := range map[syscall.Errno]error{syscall.EILSEQ: tracefs.ErrNotBoundary, syscall.ENOENT: tracefs.ErrNotFound,
		syscall.EEXIST: tracefs.ErrExist, syscall.EBUSY: tracefs.ErrBusy, syscall.EINVAL: tracefs.ErrInvalid, syscall.EACCES: tracefs.ErrPermission,
		syscall.EPERM: tracefs.ErrPermission, syscall.ENOMEM: tracefs.ErrInvalid} {
		err := error(&tracefs.WriteError{File: "kprobe_events", Line: "p x", Errno: no})
		if !errors.Is(err, want) || !errors.Is(err, no) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v", no, err)
		}
	}
}

// TestDynamicEventsLifecycle writes an fprobe (entry and exit), a tracepoint
// probe and an eprobe to dynamic_events, lists them back (each parsed, of
// its kind, described as -l describes it), enables one, fails to delete it
// while enabled, and deletes them; then install.Write must leave nothing
// when the last line of a plan is refused. It runs on kernels that offer
// these kinds (the 6.12 guest).
func TestDynamicEventsLifecycle(t *testing.T) {
	fs := realFS(t)
	if !fs.Has(probe.Fprobe) || !fs.Has(probe.Tprobe) || !fs.Has(probe.Eprobe) {
		t.Skip("this kernel does not offer fprobes, tracepoint probes and eprobes")
	}
	grp := group(t)
	cleanup(t, fs, grp)
	want := []struct {
		kind  probe.Kind
		line  string // written
		list  string // as the kernel lists it
		descr string // -l
	}{
		{probe.Fprobe, "f:" + grp + "/fentry vfs_read count=$arg3:u64", "f:" + grp + "/fentry vfs_read count=$arg3:u64", "(on vfs_read with count)"},
		{probe.Fprobe, "f4:" + grp + "/fexit vfs_read%return r=$retval:s64 count", "f4:" + grp + "/fexit vfs_read%return r=$retval:s64 count=count", "(on vfs_read%return with r count)"},
		{probe.Tprobe, "t:" + grp + "/tp sched_process_exec p=$arg1", "t:" + grp + "/tp sched_process_exec p=$arg1", "(on tracepoint sched_process_exec with p)"},
		{probe.Eprobe, "e:" + grp + "/ep syscalls.sys_enter_openat path=$filename:ustring if flags == 0", "e:" + grp + "/ep syscalls.sys_enter_openat path=$filename:ustring", "(on event syscalls/sys_enter_openat with path)"},
	}
	for _, w := range want {
		if err := fs.Write(w.kind, w.line); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := fs.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []tracefs.Event
	for _, e := range evs {
		if e.Group == grp {
			got = append(got, e)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("listed %d events of %s, want %d: %+v", len(got), grp, len(want), got)
	}
	for i, w := range want {
		e := got[i]
		if e.Kind != w.kind || e.Line != w.list || e.Probe == nil || e.Probe.Kind != w.kind ||
			!strings.HasSuffix(install.Describe(e.Probe, func(*probe.Probe) string { return "?" }), w.descr) {
			t.Errorf("listed %v %q (%+v), want %v %q described %s", e.Kind, e.Line, e.Probe, w.kind, w.list, w.descr)
		}
	}
	if err := fs.Enable(grp, "fexit", true); err != nil {
		t.Fatal(err)
	}
	if err := fs.Delete(probe.Fprobe, grp, "fexit"); !errors.Is(err, tracefs.ErrBusy) {
		t.Errorf("deleting an enabled fprobe: %v, want tracefs.ErrBusy", err)
	}
	for _, w := range want {
		name := strings.Fields(w.line)[0]
		name = name[strings.IndexByte(name, '/')+1:]
		if err := install.Delete(fs, w.kind, grp, name); err != nil {
			t.Errorf("delete %s: %v", name, err)
		}
	}

	// All or nothing: the tprobe is refused (a $retval), so the fprobe
	// written before it is removed again.
	plan := []install.Event{
		{Probe: probe.Probe{Kind: probe.Fprobe, Group: grp, Event: "ok"}, Line: "f:" + grp + "/ok vfs_read"},
		{Probe: probe.Probe{Kind: probe.Tprobe, Group: grp, Event: "bad"}, Line: "t:" + grp + "/bad kfree $retval"},
	}
	err = install.Write(fs, plan)
	var we *tracefs.WriteError
	if !errors.As(err, &we) || we.Log == nil || we.Log.Text != "$retval is not available on probe" {
		t.Errorf("the refused tprobe: %v", err)
	}
	evs, _ = fs.List()
	for _, e := range evs {
		if e.Group == grp {
			t.Errorf("left behind: %s", e.Line)
		}
	}
	// The filter parser's own error_log entry explains a refused filter.
	err = fs.Write(probe.Eprobe, "e:"+grp+"/ep syscalls.sys_enter_openat if dfd == -100")
	if !errors.As(err, &we) || we.Log == nil || !strings.Contains(err.Error(), `Illegal integer value (filter "dfd == -^100")`) {
		t.Errorf("a refused filter: %v", err)
	}
}
