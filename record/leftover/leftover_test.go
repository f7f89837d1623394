package leftover

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
)

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// fakeTracefs is a directory laid out as tracefs is, enough for Find and
// Remove: instances (directories, with trigger files), synthetic_events,
// the probe events files and the events' directories.
type fakeTracefs struct {
	t    *testing.T
	root string
}

func newFake(t *testing.T) *fakeTracefs {
	f := &fakeTracefs{t: t, root: t.TempDir()}
	for _, n := range []string{"kprobe_events", "uprobe_events", "synthetic_events"} {
		f.write(n, "")
	}
	os.Mkdir(filepath.Join(f.root, "instances"), 0o755)
	return f
}

func (f *fakeTracefs) write(name, content string) {
	p := filepath.Join(f.root, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeTracefs) read(name string) string {
	b, _ := os.ReadFile(filepath.Join(f.root, name))
	return string(b)
}

func (f *fakeTracefs) probe(kind, group, event, def string) {
	file := "kprobe_events"
	if kind == "u" {
		file = "uprobe_events"
	}
	f.write(file, f.read(file)+def+"\n")
	f.write(filepath.Join("events", group, event, "enable"), "0\n")
}

func withLedgerDir(t *testing.T) {
	old, oldRemove, oldUnset := Dir, removeInstance, unsetTrigger
	Dir = t.TempDir()
	removeInstance = func(t *tracefs.FS, name string) error {
		return os.RemoveAll(t.Path(filepath.Join("instances", name)))
	}
	// As the kernel does: "!SPEC" removes the trigger with SPEC's keys
	// (the file shows more than was written: vals, sort, the state).
	unsetTrigger = func(t *tracefs.FS, file, spec string) error {
		p := t.Path(file)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		keys := func(s string) string {
			k, _, _ := strings.Cut(s, ":")
			_, after, _ := strings.Cut(s, ":keys=")
			k2, _, _ := strings.Cut(after, ":")
			return k + k2
		}
		lines := strings.Split(string(b), "\n")
		for i, l := range lines {
			if !strings.HasPrefix(l, "#") && l != "" && keys(l) == keys(spec) {
				lines = append(lines[:i], lines[i+1:]...)
				break
			}
		}
		unsets = append(unsets, spec)
		return os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644)
	}
	unsets = nil
	t.Cleanup(func() { Dir, removeInstance, unsetTrigger = old, oldRemove, oldUnset })
}

// unsets are the triggers the stand-in tracefs was asked to remove.
var unsets []string

// TestFindByLedger: the ledger of a dead process names what it left; a
// live process's ledger is left alone and claims its probes.
func TestFindByLedger(t *testing.T) {
	withLedgerDir(t)
	f := newFake(t)
	fs := tracefs.At(f.root)
	dead := deadPID(t)
	inst := LatencyInstance(dead)
	synth := LatencySynthetic(dead)
	f.probe("k", LatencyGroup, "vfs_read", "p:gprobe_latency/vfs_read vfs_read+0")
	f.probe("k", LatencyGroup, "vfs_read__return", "r:gprobe_latency/vfs_read__return vfs_read+0 comm=$comm:string")
	f.probe("k", LatencyGroup, "mine", "p:gprobe_latency/mine do_sys_open+0")
	f.write("synthetic_events", synth+" u64 ns_plus1; int pid; char comm[]\n")
	os.MkdirAll(filepath.Join(f.root, "events/synthetic", synth), 0o755)
	trig := "events/gprobe_latency/vfs_read/trigger"
	f.write(filepath.Join("instances", inst, trig), "# Available triggers:\nhist:keys=common_pid.execname:vals=hitcount:ts0=common_timestamp:sort=hitcount:size=2048 [active]\n")
	os.WriteFile(filepath.Join(Dir, strconv.Itoa(dead)), []byte(strings.Join([]string{
		"gprobe " + strconv.Itoa(dead) + " 0 latency " + f.root,
		"probe kprobe gprobe_latency/vfs_read",
		"probe kprobe gprobe_latency/vfs_read__return",
		"synthetic " + synth,
		"instance " + inst,
		"trigger " + inst + " " + trig + " hist:keys=common_pid.execname:ts0=common_timestamp:size=2048",
		"probe kprobe gprobe_latency/gone_already",
		"garbage line",
	}, "\n")+"\n"), 0o600)
	// This process is alive: its ledger claims "mine".
	os.WriteFile(filepath.Join(Dir, strconv.Itoa(os.Getpid())), []byte("gprobe "+strconv.Itoa(os.Getpid())+" 0 latency "+f.root+"\nprobe kprobe gprobe_latency/mine\n"), 0o600)

	ls, err := Find(fs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 || ls[0].PID != dead || ls[0].Command != "latency" {
		t.Fatalf("leftovers %+v", ls)
	}
	var got []string
	for _, o := range ls[0].Objects {
		got = append(got, o.String())
	}
	want := []string{
		"kprobe gprobe_latency/vfs_read",
		"kprobe gprobe_latency/vfs_read__return",
		"synthetic event " + synth,
		"instance " + inst,
		`trigger "hist:keys=common_pid.execname:ts0=common_timestamp:size=2048" on gprobe_latency/vfs_read in instance ` + inst,
	}
	if !slices.Equal(got, want) {
		t.Errorf("objects\n%q\nwant\n%q", got, want)
	}
	sum := ls[0].Summary()
	if wantSum := "gprobe latency (pid " + strconv.Itoa(dead) + ", no longer running) left kprobe gprobe_latency/vfs_read, kprobe gprobe_latency/vfs_read__return, synthetic event " + synth + ", instance " + inst + ", 1 hist trigger"; sum != wantSum {
		t.Errorf("summary\n%s\nwant\n%s", sum, wantSum)
	}

	removed, err := Remove(fs, ls[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 5 {
		t.Errorf("removed %v, want the 5 objects", removed)
	}
	// The kernel's files got the removals, in the kernel's order.
	// The trigger as the ledger has it, once.
	if want := []string{"hist:keys=common_pid.execname:ts0=common_timestamp:size=2048"}; !slices.Equal(unsets, want) {
		t.Errorf("triggers unset %q, want %q", unsets, want)
	}
	if got := f.read("synthetic_events"); !strings.HasSuffix(got, "!"+synth+"\n") {
		t.Errorf("synthetic_events: %q", got)
	}
	if got := f.read("kprobe_events"); !strings.HasSuffix(got, "-:gprobe_latency/vfs_read__return\n-:gprobe_latency/vfs_read\n") || strings.Contains(got, "-:gprobe_latency/mine") {
		t.Errorf("kprobe_events: %q", got)
	}
	if _, err := os.Stat(filepath.Join(Dir, strconv.Itoa(dead))); !os.IsNotExist(err) {
		t.Errorf("the dead process's ledger is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(Dir, strconv.Itoa(os.Getpid()))); err != nil {
		t.Errorf("a live process's ledger was removed: %v", err)
	}
}

// TestFindByName: without a ledger, instances and synthetic events named
// after a process that is gone are leftovers, with the triggers in those
// instances; latency probes no live session claims are listed apart. What
// live processes own, and instances of other tools, are left alone.
func TestFindByName(t *testing.T) {
	withLedgerDir(t)
	f := newFake(t)
	fs := tracefs.At(f.root)
	dead := deadPID(t)
	live := os.Getpid()
	for _, n := range []string{RecordInstance(dead), RecordInstance(dead) + "-1", RecordInstance(live), LatencyInstance(live), "gprobe-x", "other"} {
		os.MkdirAll(filepath.Join(f.root, "instances", n), 0o755)
	}
	// A live latency session's triggers claim its probe.
	f.write(filepath.Join("instances", LatencyInstance(live), "events/gprobe_latency/claimed/trigger"), "hist:keys=common_pid.execname:size=2048 [active]\n")
	f.probe("u", LatencyGroup, "claimed", "p:gprobe_latency/claimed /bin/true:0x10")
	f.probe("u", LatencyGroup, "orphan", "p:gprobe_latency/orphan /bin/true:0x20")
	f.probe("u", "probe_true", "notours", "p:probe_true/notours /bin/true:0x20")
	dead2, dead3 := deadPID(t), deadPID(t)
	// A dead latency session's instance with its triggers, as the kernel
	// shows them.
	f.write(filepath.Join("instances", LatencyInstance(dead3), "events/gprobe_latency/x__return/trigger"),
		"# Available triggers:\nhist:keys=common_pid.execname:vals=hitcount:lat1=common_timestamp-$ts0+1:sort=hitcount:size=2048:clock=global:onmatch(gprobe_latency.x).trace(s,$lat1) [active]\nhist:keys=pid:vals=hitcount:sort=hitcount:size=2048 [paused]\n")
	f.write("synthetic_events", LatencySynthetic(dead2)+"_1\tu64 x\n"+LatencySynthetic(live)+" u64 x\nsomeone_else u64 x\n")
	ls, err := Find(fs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range ls {
		for _, o := range l.Objects {
			got = append(got, strconv.Itoa(l.PID)+" "+l.Command+" "+o.String())
		}
	}
	slices.Sort(got)
	want := []string{
		"0  uprobe gprobe_latency/orphan",
		strconv.Itoa(dead2) + " latency synthetic event " + LatencySynthetic(dead2) + "_1",
		strconv.Itoa(dead) + " record instance " + RecordInstance(dead),
		strconv.Itoa(dead3) + " latency instance " + LatencyInstance(dead3),
		strconv.Itoa(dead3) + ` latency trigger "hist:keys=common_pid.execname:vals=hitcount:lat1=common_timestamp-$ts0+1:sort=hitcount:size=2048:clock=global:onmatch(gprobe_latency.x).trace(s,$lat1)" on gprobe_latency/x__return in instance ` + LatencyInstance(dead3),
		strconv.Itoa(dead3) + ` latency trigger "hist:keys=pid:vals=hitcount:sort=hitcount:size=2048" on gprobe_latency/x__return in instance ` + LatencyInstance(dead3),
		strconv.Itoa(dead) + " record instance " + RecordInstance(dead) + "-1",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("leftovers\n%q\nwant\n%q", got, want)
	}
	for _, l := range ls {
		if _, err := Remove(fs, l); err != nil {
			t.Error(err)
		}
	}
	if len(unsets) != 2 || strings.Contains(strings.Join(unsets, ""), "[") {
		t.Errorf("triggers unset %q, want the two as shown, without their state", unsets)
	}
	insts, _ := fs.Instances()
	slices.Sort(insts)
	if want := []string{RecordInstance(live), LatencyInstance(live), "gprobe-x", "other"}; !slices.Equal(insts, want) {
		t.Errorf("instances after Remove %q, want %q", insts, want)
	}
	if got := f.read("uprobe_events"); !strings.HasSuffix(got, "-:gprobe_latency/orphan\n") {
		t.Errorf("uprobe_events %q", got)
	}
}

// TestLedger: a session's ledger lists what it created and goes away when
// the session removed it all; a session that could not keeps it.
func TestLedger(t *testing.T) {
	withLedgerDir(t)
	l := Start("/sys/kernel/tracing", "record")
	if l == nil {
		t.Fatal("no ledger")
	}
	l.Add(Object{Kind: "instance", Name: "gprobe-1"})
	l.Add(Object{Kind: "probe", Probe: probe.Uprobe, Name: "g/e"})
	l.Add(Object{Kind: "trigger", Instance: "gprobe-1", Name: "events/g/e/trigger", Spec: "hist:keys=a b:size=1"})
	lfs := readLedgers()
	if len(lfs) != 1 || lfs[0].pid != os.Getpid() || lfs[0].command != "record" || len(lfs[0].objects) != 3 ||
		lfs[0].objects[2].Spec != "hist:keys=a b:size=1" || lfs[0].start == 0 {
		t.Fatalf("ledger read back %+v", lfs)
	}
	l.Done(false)
	if len(readLedgers()) != 1 {
		t.Error("a ledger of a session that did not clean up was removed")
	}
	l = Start("/sys/kernel/tracing", "record")
	l.Done(true)
	if len(readLedgers()) != 0 {
		t.Error("the ledger of a clean session is left")
	}
	var nilLedger *Ledger
	nilLedger.Add(Object{Kind: "instance", Name: "x"}) // no ledger: nothing to do, no panic
	nilLedger.Done(true)
	// A ledger directory another user could change is not used.
	os.Chmod(Dir, 0o777)
	if l := Start("/sys/kernel/tracing", "record"); l != nil {
		t.Error("a world-writable ledger directory was used")
		l.Done(true)
	}
}

// TestClean: gprobe cleanup's workflow: -n lists and removes nothing,
// --pid keeps to one process, each object removed is one line, a live
// session's instance is never touched, and nothing found is said.
func TestClean(t *testing.T) {
	withLedgerDir(t)
	f := newFake(t)
	fs := tracefs.At(f.root)
	a, b := deadPID(t), deadPID(t)
	for _, pid := range []int{a, b, os.Getpid()} {
		os.MkdirAll(filepath.Join(f.root, "instances", RecordInstance(pid)), 0o755)
	}
	exists := func(pid int) bool {
		_, err := os.Stat(filepath.Join(f.root, "instances", RecordInstance(pid)))
		return err == nil
	}
	var out bytes.Buffer
	found, err := Clean(fs, CleanOptions{PID: a, DryRun: true}, &out)
	want := fmt.Sprintf("gprobe record (pid %d, no longer running) left instance %s\n", a, RecordInstance(a))
	if !found || err != nil || out.String() != want || !exists(a) {
		t.Errorf("dry run: found %v, %v, %q (want %q), still there %v", found, err, out.String(), want, exists(a))
	}
	out.Reset()
	found, err = Clean(fs, CleanOptions{PID: a}, &out)
	if !found || err != nil || out.String() != "removed instance "+RecordInstance(a)+"\n" || exists(a) || !exists(b) {
		t.Errorf("--pid %d: found %v, %v, %q; a left %v, b left %v", a, found, err, out.String(), exists(a), exists(b))
	}
	out.Reset()
	found, err = Clean(fs, CleanOptions{}, &out)
	if !found || err != nil || out.String() != "removed instance "+RecordInstance(b)+"\n" || exists(b) || !exists(os.Getpid()) {
		t.Errorf("all: found %v, %v, %q; b left %v, the live one kept %v", found, err, out.String(), exists(b), exists(os.Getpid()))
	}
	out.Reset()
	if found, err = Clean(fs, CleanOptions{}, &out); found || err != nil || out.Len() != 0 {
		t.Errorf("nothing left: found %v, %v, %q", found, err, out.String())
	}
	var rep bytes.Buffer
	Report(&rep, fs)
	if rep.Len() != 0 {
		t.Errorf("Report with nothing left: %q", rep.String())
	}
}
