package main

// Tests of -a/-d/-l and add/del/list on this machine's real kernel
// (uprobes on C programs compiled here), and differential tests against
// perf probe 6.1 doing the same installs. Every test uses its own binary
// name, hence its own group probe_<bin>, and removes what it created.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/gprobe/gprobe/internal/perfprobe"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/target"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
)

// liveFS is this machine's tracefs with uprobe_events (testenv.Tracefs).
func liveFS(t *testing.T) *tracefs.FS { return tracefs.At(testenv.Tracefs(t)) }

// progTarget is a C program compiled for one test. Its functions are renamed
// with a prefix unique to the process (work -> g1234_work) because perf
// checks event names across all groups of uprobe_events, where other
// programs may have a "work" too; its events go to a group no one else
// uses, removed when the test ends (enabled ones disabled first).
type progTarget struct {
	bin, group string
	prefix     string
}

var progFuncs = regexp.MustCompile(`(^|[^A-Za-z0-9_])(work|add_item|drop_item|twice|walk)`)

// u renames prog.c's functions in s (arguments, expected output).
func (tg *progTarget) u(s string) string {
	return progFuncs.ReplaceAllString(s, "${1}"+tg.prefix+"${2}")
}

// run is runGprobe with prog.c's functions renamed in the arguments.
func (tg *progTarget) run(args ...string) result { return runGprobe(tg.args(args)...) }

func (tg *progTarget) args(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == tg.bin {
			out[i] = a
			continue
		}
		out[i] = tg.u(a)
	}
	return out
}

func uprobeTarget(t *testing.T, fs *tracefs.FS) *progTarget {
	t.Helper()
	testenv.Tool(t, "gcc")
	name := strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(strings.TrimPrefix(t.Name(), "Test"), ""))
	if len(name) > 24 {
		name = name[:24]
	}
	name = fmt.Sprintf("g%s%d", name, os.Getpid())
	tg := &progTarget{bin: filepath.Join(t.TempDir(), name), group: "probe_" + name, prefix: fmt.Sprintf("g%d_", os.Getpid())}
	args := []string{"-O2", "-g", "-o", tg.bin}
	for _, f := range []string{"work", "add_item", "drop_item", "twice", "walk"} {
		args = append(args, "-D"+f+"="+tg.prefix+f)
	}
	if out, err := exec.Command("gcc", append(args, "testdata/uprobe/prog.c")...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	tg.bin = target.RealPath(tg.bin)
	t.Cleanup(func() { removeGroup(t, fs, tg.group) })
	return tg
}

func removeGroup(t *testing.T, fs *tracefs.FS, group string) {
	evs, err := fs.List()
	if err != nil {
		t.Error(err)
		return
	}
	for _, e := range evs {
		if e.Group != group {
			continue
		}
		_ = fs.Enable(e.Group, e.Name, false)
		_ = fs.Delete(e.Kind, e.Group, e.Name)
	}
	evs, _ = fs.List()
	for _, e := range evs {
		if e.Group == group {
			t.Errorf("left behind: %s", e.Line)
		}
	}
}

// installed lists the group's lines as the kernel shows them.
func installed(t *testing.T, fs *tracefs.FS, group string) []string {
	t.Helper()
	evs, err := fs.List()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if e.Group == group {
			out = append(out, e.Line)
		}
	}
	return out
}

// expect compares a result with the expected output, prog.c's functions
// renamed in it.
func (tg *progTarget) expect(t *testing.T, what string, got result, code int, stdout, stderr string) {
	t.Helper()
	stdout, stderr = tg.u(stdout), tg.u(stderr)
	if got.Code != code || got.Stdout != stdout || got.Stderr != stderr {
		t.Errorf("%s:\ngot  %s\nwant exit %d\n--- stdout\n%s--- stderr\n%s", what, got, code, stdout, stderr)
	}
}

func footer(group, event string) string {
	return "\nYou can now use it in all perf tools, such as:\n\n\tperf record -e " + group + ":" + event + " -aR sleep 1\n\n"
}

func TestAddListDel(t *testing.T) {
	fs := liveFS(t)
	tg := uprobeTarget(t, fs)
	bin, g := tg.bin, tg.group
	r := tg.run("-x", bin, "-a", "work", "-a", "add_item %di")
	tg.expect(t, "add", r, 0, "", "Added new events:\n"+
		fmt.Sprintf("  %-20s (on work in %s)\n", g+":work", bin)+
		fmt.Sprintf("  %-20s (on add_item in %s with %%di)\n", g+":add_item", bin)+
		fmt.Sprintf("  %-20s (on add_item in %s with %%di)\n", g+":add_item", bin)+
		footer(g, "add_item"))
	lines := installed(t, fs, g)
	if len(lines) != 3 || !strings.HasPrefix(lines[0], tg.u("p:"+g+"/work "+bin+":0x")) || !strings.HasSuffix(lines[2], " arg1=%di") {
		t.Errorf("kernel lists %q", lines)
	}
	// -l: DWARF maps the addresses back (add_item is also inlined in main).
	r = tg.run("-l", g+":*")
	tg.expect(t, "list", r, 0,
		fmt.Sprintf("  %-20s (on main:5@testdata/uprobe/prog.c in %s with arg1)\n", g+":add_item", bin)+
			fmt.Sprintf("  %-20s (on add_item@testdata/uprobe/prog.c in %s with arg1)\n", g+":add_item", bin)+
			fmt.Sprintf("  %-20s (on work@testdata/uprobe/prog.c in %s)\n", g+":work", bin), "")
	if r := tg.run("list", "nomatch_"+g); r.Code != 0 || r.Stdout != "" {
		t.Errorf("list with no match: %s", r)
	}
	r = tg.run("-d", g+":*")
	tg.expect(t, "del", r, 0, "", "Removed event: "+g+":add_item\nRemoved event: "+g+":work\n")
	if l := installed(t, fs, g); len(l) != 0 {
		t.Errorf("left after -d: %q", l)
	}
	r = tg.run("-d", g+":*")
	tg.expect(t, "del again", r, 254, "", `"`+g+`:*" does not hit any event.`+"\n  Error: Failed to delete events.\n")
}

func TestDuplicateNamesAndForce(t *testing.T) {
	fs := liveFS(t)
	tg := uprobeTarget(t, fs)
	bin, g := tg.bin, tg.group
	if r := tg.run("-q", "-x", bin, "-a", "work"); r.Code != 0 || r.Stderr != "" {
		t.Fatalf("quiet add: %s", r)
	}
	r := tg.run("-x", bin, "-a", "work")
	tg.expect(t, "duplicate", r, 239, "", "Error: event \"work\" already exists.\n"+
		" Hint: Remove existing event by 'perf probe -d'\n"+
		"       or force duplicates by 'perf probe -f'\n"+
		"       or set 'force=yes' in BPF source.\n"+
		"  Error: Failed to add events.\n")
	r = tg.run("-x", bin, "-f", "-a", "work")
	tg.expect(t, "-f", r, 0, "", fmt.Sprintf("Added new event:\n  %-20s (on work in %s)\n", g+":work_1", bin)+footer(g, "work_1"))
	// perf 6.1 drops __return from suffixed names: the next is work_2.
	r = tg.run("-x", bin, "-f", "-a", "work%return $retval")
	if r.Code != 0 || !strings.Contains(r.Stderr, tg.u(g+":work__return (on work%return in "+bin+" with $retval)")) {
		t.Errorf("return probe: %s", r)
	}
	r = tg.run("-x", bin, "-f", "-a", "work%return $retval")
	if r.Code != 0 || !strings.Contains(r.Stderr, tg.u(g+":work_2")) {
		t.Errorf("second return probe: %s", r)
	}
	// A glob is a glob: work_* also matches work__return.
	r = tg.run("-d", g+":work_*", "-d", g+":nosuch")
	tg.expect(t, "glob del", r, 0, "", "Removed event: "+g+":work_1\nRemoved event: "+g+":work_2\nRemoved event: "+g+":work__return\n")
	if l := installed(t, fs, g); len(l) != 1 {
		t.Errorf("after deleting work_*: %q", l)
	}
	r = tg.run("del", "nosuch*", "!*")
	tg.expect(t, "del no hit", r, 254, "", "\"nosuch*|(!*)\" does not hit any event.\n  Error: Failed to delete events.\n")
}

func TestDryRun(t *testing.T) {
	fs := liveFS(t)
	tg := uprobeTarget(t, fs)
	bin, g := tg.bin, tg.group
	r := tg.run("-n", "-x", bin, "-a", "walk")
	tg.expect(t, "dry run", r, 0, "", fmt.Sprintf("Added new event:\n  %-20s (on walk in %s)\n", g+":walk", bin)+footer(g, "walk"))
	if l := installed(t, fs, g); len(l) != 0 {
		t.Errorf("-n installed %q", l)
	}
}

// TestAddFrom installs what -D printed, the cross-machine workflow, and raw
// definitions given as arguments.
func TestAddFrom(t *testing.T) {
	fs := liveFS(t)
	tg := uprobeTarget(t, fs)
	bin, g := tg.bin, tg.group
	d := tg.run("-x", bin, "-D", "work %di:s32 n=%si", "-D", "add_item")
	if d.Code != 0 {
		t.Fatal(d)
	}
	file := filepath.Join(t.TempDir(), "defs")
	if err := os.WriteFile(file, []byte("# from -D\n"+d.Stdout+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := tg.run("add", "--from", file)
	if r.Code != 0 || !strings.HasPrefix(r.Stderr, "Added new events:\n") {
		t.Fatalf("add --from: %s", r)
	}
	got := installed(t, fs, g)
	want := strings.Split(strings.TrimSpace(d.Stdout), "\n")
	if len(got) != len(want) {
		t.Fatalf("installed %q from %q", got, want)
	}
	for i := range want {
		// The kernel lists offsets as 16 hex digits and names every argument.
		w := regexp.MustCompile(`:0x([0-9a-f]+)`).ReplaceAllStringFunc(want[i], func(s string) string {
			var v uint64
			fmt.Sscanf(s, ":0x%x", &v)
			return fmt.Sprintf(":0x%016x", v)
		})
		w = strings.Replace(w, " %di:s32", " arg1=%di:s32", 1)
		if got[i] != w {
			t.Errorf("installed %q, want %q", got[i], w)
		}
	}
	// Again: the names are taken.
	r = tg.run("add", "--from", file)
	if r.Code != 239 || !strings.Contains(r.Stderr, tg.u(`Error: event "work" already exists.`)) {
		t.Errorf("second --from: %s", r)
	}
	// -f: suffixes, as perf gives them; the two add_item lines share one name.
	r = tg.run("add", "-f", "--from", file)
	if r.Code != 0 || !strings.Contains(r.Stderr, tg.u(g+":work_1")) || strings.Count(r.Stderr, tg.u(g+":add_item_1 (on")) != 2 {
		t.Errorf("--from -f: %s", r)
	}
	// A raw definition as an argument, with the place written by hand.
	off := regexp.MustCompile(`:0x[0-9a-f]+`).FindString(want[0])
	raw := fmt.Sprintf("p:%s/handmade %s%s cnt=%%si:u32", g, bin, off)
	r = tg.run("-a", raw)
	tg.expect(t, "raw", r, 0, "", fmt.Sprintf("Added new event:\n  %-20s (on work@testdata/uprobe/prog.c in %s with cnt)\n", g+":handmade", bin)+footer(g, "handmade"))
	if r := tg.run("-d", g+":*"); r.Code != 0 {
		t.Error(r)
	}
}

// TestRefusedBeforeWriting: a bad raw definition is refused with the
// kernel's message and position, and nothing is written.
func TestRefusedBeforeWriting(t *testing.T) {
	fs := liveFS(t)
	tg := uprobeTarget(t, fs)
	bin, g := tg.bin, tg.group
	line := fmt.Sprintf("p:%s/bad %s:0x1000 x=%%none", g, bin)
	r := tg.run("add", line)
	tg.expect(t, "bad register", r, 234, "", fmt.Sprintf("uprobe_events %q: Invalid register name (argument 1 \"x=^%%none\")\n  Error: Failed to add events.\n", line))
	line = fmt.Sprintf("p:%s/bad %s:0x10z0", g, bin)
	r = tg.run("add", line)
	tg.expect(t, "bad offset", r, 234, "", fmt.Sprintf("uprobe_events %q: Invalid uprobe offset (probe place \"%s:^0x10z0\")\n  Error: Failed to add events.\n", line, bin))
	if l := installed(t, fs, g); len(l) != 0 {
		t.Errorf("installed %q", l)
	}
}

// TestAllOrNothing: the second line passes the checks but the kernel refuses
// it (it would append to the event the first line created, with other
// argument names); the first event must be gone again, and the message is
// the kernel's, read from error_log.
func TestAllOrNothing(t *testing.T) {
	fs := liveFS(t)
	tg := uprobeTarget(t, fs)
	bin, g := tg.bin, tg.group
	d := tg.run("-x", bin, "-D", "work", "-D", "main")
	defs := strings.Split(strings.TrimSpace(d.Stdout), "\n")
	if d.Code != 0 || len(defs) != 2 {
		t.Fatal(d)
	}
	first := defs[0] + " a=%di"
	second := strings.Replace(defs[1], "/main ", tg.u("/work "), 1) + " b=%si"
	r := tg.run("add", first, second)
	want := fmt.Sprintf("uprobe_events refused %q: Argument type or name is different from existing probe (argument 1 \"^b=%%si\")\n  Error: Failed to add events.\n", second)
	tg.expect(t, "rollback", r, 239, "", want)
	if l := installed(t, fs, g); len(l) != 0 {
		t.Errorf("half-installed: %q", l)
	}
}

func TestDeleteEnabled(t *testing.T) {
	fs := liveFS(t)
	tg := uprobeTarget(t, fs)
	bin, g := tg.bin, tg.group
	if r := tg.run("-q", "-x", bin, "-a", "work"); r.Code != 0 {
		t.Fatal(r)
	}
	if err := fs.Enable(g, tg.u("work"), true); err != nil {
		t.Fatal(err)
	}
	// The kernel itself refuses: EBUSY.
	if err := fs.Delete(probe.Uprobe, g, tg.u("work")); err == nil {
		t.Fatal("the kernel deleted an enabled event")
	}
	r := tg.run("-d", g+":work")
	tg.expect(t, "del enabled", r, 0, "", "Removed event: "+g+":work\n")
	if l := installed(t, fs, g); len(l) != 0 {
		t.Errorf("still installed: %q", l)
	}
}

// TestDeleteBusy: an event enabled in a tracefs instance (a recording of
// someone else) stays; -d deletes every other match and names the one it
// left and what keeps it, with perf's trailer and EBUSY's status.
func TestDeleteBusy(t *testing.T) {
	fs := liveFS(t)
	tg := uprobeTarget(t, fs)
	bin, g := tg.bin, tg.group
	if r := tg.run("-q", "-x", bin, "-a", "work", "-a", "walk", "-a", "twice"); r.Code != 0 {
		t.Fatal(r)
	}
	in, err := fs.NewUniqueInstance("gprobe-busy-test")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Remove()
	if err := in.Enable(g, tg.u("walk"), true); err != nil {
		t.Fatal(err)
	}
	defer in.Enable(g, tg.u("walk"), false)
	r := tg.run("-d", g+":*")
	want := fmt.Sprintf("Removed event: %[1]s:twice\nRemoved event: %[1]s:work\n"+
		"Failed to delete event %[1]s:walk: uprobe_events refused \"-:%[1]s/walk\": the event is enabled or in use (EBUSY); it is enabled in instance %[2]q\n"+
		"  Error: Failed to delete events.\n", g, in.Name)
	tg.expect(t, "del busy", r, 240, "", want)
	if l := installed(t, fs, g); len(l) != 1 || !strings.Contains(l[0], tg.u("walk")) {
		t.Errorf("installed after -d: %q", l)
	}
}

// TestNoKprobesHere: this kernel has no kprobe_events; adding a kernel
// probe ends with one line saying so.
func TestNoKprobesHere(t *testing.T) {
	fs := liveFS(t)
	if fs.Has(probe.Kprobe) {
		t.Skip("this kernel has kprobe_events")
	}
	want := "/sys/kernel/tracing/kprobe_events does not exist: this kernel was built without CONFIG_KPROBE_EVENTS: kernel probes cannot be installed here\n"
	for _, args := range [][]string{
		{"-k", "../../testdata/vmlinux-fixtures/x86_64-dwarf5-O2.elf", "-a", "do_sys_openat2"},
		{"add", "p:gprobe_nokp/x vfs_read"},
		{"add", "--from", "testdata/kprobes.def"},
	} {
		if r := runGprobe(args...); r.Code != 254 || r.Stdout != "" || r.Stderr != want {
			t.Errorf("%v: %s", args, r)
		}
	}
}

// TestPerfDifferential runs the same install/list/delete sequence through
// perf probe and through gprobe (one after the other, on the same binary,
// cleaning up in between) and compares every step's stdout, stderr and exit.
func TestPerfDifferential(t *testing.T) {
	perf := testenv.RequirePerf(t)
	fs := liveFS(t)
	tg := uprobeTarget(t, fs)
	bin, g := tg.bin, tg.group
	steps := [][]string{
		{"-x", bin, "-a", "work"},
		{"-x", bin, "-a", "work"},
		{"-x", bin, "-f", "-a", "work"},
		{"-x", bin, "-a", "add_item %di", "-a", "work%return $retval"},
		{"-x", bin, "-f", "-a", "work%return r=$retval:s32"},
		{"-x", bin, "twice"},
		{"-x", bin, "-a", "e1=walk", "-a", g + "x:e2=drop_item %si"},
		{"-x", bin, "-a", "*_item"},
		{"-l", g + "x:*"},
		{"-d", g + "x:*"},
		{"-x", bin, "-n", "-a", "walk"},
		{"-l", g + ":*"},
		{"-l", g + ":add_item"},
		{"-l", "nomatch" + g},
		{"-d", g + ":work_*"},
		{"-d", g + ":nomatch"},
		// Never a negated pattern here: "!G:*" matches other groups' events.
		{"-d", g + ":nomatch", "-d", g + ":work"},
		{"-n", "-d", g + ":twice"},
		{"-l", g + ":*"},
		// perf installs the first and then fails on the second (its
		// name is taken by then); gprobe installs neither, same output
		// (so this step comes last before the final deletion).
		{"-x", bin, "-a", tg.prefix + "m=main", "-a", tg.prefix + "m=main"},
		{"-q", "-d", g + ":*"},
		{"-l", g + ":*"},
		{"-x", bin, "-a", "nosuchfunction"},
		{"-x", bin, "work:x"},
	}
	run := func(f func(args ...string) result) []result {
		removeGroup(t, fs, g)
		var out []result
		for _, s := range steps {
			out = append(out, f(s...))
		}
		removeGroup(t, fs, g)
		removeGroup(t, fs, g+"x")
		return out
	}
	pr := run(func(args ...string) result { return perf.Live(tg.args(args)...) })
	gr := run(tg.run)
	for i, s := range steps {
		if testing.Verbose() {
			t.Logf("step %d: %s\n%s", i, strings.Join(s, " "), pr[i])
		}
		if s[0] == "-n" && s[1] == "-d" {
			// perf 6.1's dry-run delete opens the events file read-only and
			// then writes to it: "Failed to delete event: Bad file
			// descriptor", exit 254. gprobe only prints what it would remove.
			cut := strings.Index(pr[i].Stderr, "Failed to delete event: Bad file descriptor\n")
			if cut < 0 || pr[i].Code != 254 || gr[i].Code != 0 || gr[i].Stderr != pr[i].Stderr[:cut] || gr[i].Stdout != "" {
				t.Errorf("step %d: %s\nperf:   %s\ngprobe: %s", i, strings.Join(s, " "), pr[i], gr[i])
			}
			continue
		}
		if pr[i] != gr[i] {
			t.Errorf("step %d: %s\nperf:   %s\ngprobe: %s", i, strings.Join(s, " "), pr[i], gr[i])
		}
	}
}

// TestMain lets a test run this binary as gprobe in a child process (to
// drop root privileges): GPROBE_TEST_AS_GPROBE=1 runs main's run(). Tests
// keep gprobe's index cache in the test cache (testenv.UseIndexCache).
func TestMain(m *testing.M) {
	if os.Getenv("GPROBE_TEST_AS_GPROBE") == "1" {
		os.Exit(run(append([]string{"gprobe"}, os.Args[1:]...), os.Stdout, os.Stderr))
	}
	testenv.UseIndexCache()
	os.Exit(m.Run())
}

// TestNoPermission: as an unprivileged user, tracefs (mode 0700) cannot be
// read; every probe command says so in one line, with perf's exit status.
func TestNoPermission(t *testing.T) {
	liveFS(t)
	if st, err := os.Stat("/sys/kernel/tracing"); err != nil || st.Mode().Perm()&0o005 != 0 {
		t.Skip("tracefs is readable by others here")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary's directory is private: copy it where nobody can run it.
	dir, err := os.MkdirTemp("", "gprobe-noperm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "gprobe")
	if err := os.WriteFile(exe, b, 0o755); err != nil || os.Chmod(dir, 0o755) != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args    []string
		trailer string
	}{
		{[]string{"-l"}, perfprobe.ListTrailer},
		{[]string{"-a", "p:gprobe_noperm/x /bin/sh:0x10"}, perfprobe.AddTrailer},
		{[]string{"-d", "gprobe_noperm:*"}, perfprobe.DelTrailer},
	} {
		cmd := exec.Command(exe, c.args...)
		cmd.Env = append(os.Environ(), "GPROBE_TEST_AS_GPROBE=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		want := "no permission to read tracefs at /sys/kernel/tracing: run this command again as root (or remount it with mode=755 to read)\n" + c.trailer + "\n"
		if code != 243 || out.String() != "" || errb.String() != want {
			t.Errorf("%v as nobody: exit %d\nstdout %q\nstderr %q", c.args, code, out.String(), errb.String())
		}
	}
}

// TestPatternRepeatedName: a pattern's probes where $vars meets a block
// variable shadowing a parameter (two variables named n). perf writes the
// other function's probe, then the kernel refuses the line naming n twice
// (and perf reads the parameter for both): exit 234, half installed.
// gprobe writes both, the shadowing n as n_1 read from its own place, and
// the recorded values are the program's.
func TestPatternRepeatedName(t *testing.T) {
	perf := testenv.RequirePerf(t)
	fs := liveFS(t)
	bin := testenv.BuildC(t, "gcc", "testdata/uprobe/shadow.c", "gshadow", "-O0", "-g")
	const group = "probe_gshadow"
	removeGroup(t, fs, group)
	defer removeGroup(t, fs, group)
	spec := "sum_*;r+=* $vars"
	p := perf.Live("-x", bin, "-a", spec)
	if p.Code != exitEINVAL || !strings.Contains(p.Stderr, "Failed to write event: Invalid argument") {
		t.Errorf("perf: %s", p)
	}
	removeGroup(t, fs, group)
	g := runGprobe("-x", bin, "-a", spec)
	if g.Code != 0 || strings.Count(g.Stderr, "two variables are named n; the second is written n_1") != 2 ||
		!strings.Contains(g.Stderr, "Added new events:\n  "+group+":sum_b") || !strings.Contains(g.Stderr, group+":sum_a") {
		t.Fatalf("gprobe: %s", g)
	}
	lines := installed(t, fs, group)
	if len(lines) != 4 || !strings.Contains(strings.Join(lines, "\n"), "n_1=-8(%bp):s32") {
		t.Fatalf("installed: %q", lines)
	}
	in, err := fs.NewUniqueInstance("gprobe-shadow-test")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Remove()
	for _, ev := range []string{"sum_a", "sum_b"} {
		if err := in.Enable(group, ev, true); err != nil {
			t.Fatal(err)
		}
		defer in.Enable(group, ev, false)
	}
	if out, err := exec.Command(bin, "5").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "358" {
		t.Fatalf("%s 5: %q %v", bin, out, err)
	}
	trace, err := in.ReadFile("trace")
	if err != nil {
		t.Fatal(err)
	}
	// sum_a(5): r = 10, then the block's n = 13 (r becomes 179); sum_b
	// alike with m.
	for _, want := range []string{"sum_a: (0x", ") n=5 r=10 n_1=13\n", "sum_b: (0x", ") n=5 r=10 m=13\n"} {
		if !strings.Contains(string(trace), want) {
			t.Errorf("trace lacks %q:\n%s", want, trace)
		}
	}
}
