package install

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/mountns"
)

func TestRawDefinitionOrProbedef(t *testing.T) {
	for s, raw := range map[string]bool{
		"p:probe/x vfs_read+0":            true,
		"r:probe/x__return vfs_read+0":    true,
		"r16:x vfs_read":                  true,
		"p:x /bin/sh:0x10 a=%di":          true,
		"p:grp/ev=vfs_read":               false, // GROUP:EVENT=FUNC
		"p:10":                            false, // function p, line 10
		"p:10 x":                          false,
		"vfs_read:3 count":                false,
		"p:probe/x":                       true, // raw, then refused: "No probe place"
		"probe:vfs_read=vfs_read $retval": false,
		"f:probe/vfs_read vfs_read count": true,
		"f8:x vfs_read%return $retval":    true,
		"t:probe/kfree kfree $arg*":       true,
		"e:probe/openat syscalls.sys_enter_openat $filename:ustring": true,
		"e:10 x":            false, // function e, line 10
		"t8:x kfree":        false, // no maxactive on t:
		"f:grp/ev=vfs_read": false,
		"u:request u32 id":  true,
		"u:request":         true,
		"u:10 x":            false, // function u, line 10
	} {
		if got := IsDefinition(s); got != raw {
			t.Errorf("IsDefinition(%q) = %v", s, got)
		}
	}
}

// standIn is a tracefs of regular files: Debian 6.1's README, kprobe_events
// holding installed, and no uprobe_events.
func standIn(t *testing.T, installed string) *tracefs.FS {
	dir := t.TempDir()
	readme, err := os.ReadFile("../probedef/testdata/readme/6.1.txt")
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"README": string(readme), "kprobe_events": installed} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &tracefs.FS{Root: dir}
}

// TestAdd: raw lines given together are one request per event, a --from
// file is read where it stands, the requests to resolve are handed over
// once in order, and everything is named against the installed events and
// written in order; each failure names its step.
func TestAdd(t *testing.T) {
	fs := standIn(t, "p:probe/vfs_read vfs_read\n")
	from := filepath.Join(t.TempDir(), "defs")
	if err := os.WriteFile(from, []byte("# a comment\np:probe/x vfs_write+4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := Options{Features: probedef.ParseFeatures(readme(t)), Symbols: testKallsyms}
	resolved := &Request{Point: "vfs_read"}
	var asked []*Request
	forced := opts
	forced.Force = true
	o := AddOptions{Options: forced, Resolve: func(reqs []*Request) error {
		asked = reqs
		reqs[0].Probes = []probe.Probe{{Group: "probe", Event: "vfs_read", Target: probe.Location{Symbol: "vfs_read"}}}
		return nil
	}}
	defs := []Def{{Lines: []string{"p:probe/x vfs_write"}}, {From: from}, {Req: resolved}}
	plan, err := Add(fs, defs, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != resolved {
		t.Errorf("Resolve was asked for %v, want the one request", asked)
	}
	var lines []string
	for _, ev := range plan {
		lines = append(lines, ev.Line)
	}
	want := []string{"p:probe/x vfs_write", "p:probe/x vfs_write+4", "p:probe/vfs_read_1 vfs_read+0"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") || plan[0].Req != plan[1].Req {
		t.Errorf("plan %q (one request for x: %v), want %q", lines, plan[0].Req == plan[1].Req, want)
	}
	b, _ := os.ReadFile(filepath.Join(fs.Root, "kprobe_events"))
	if got := string(b); got != "p:probe/vfs_read vfs_read\n"+strings.Join(want, "\n")+"\n" {
		t.Errorf("kprobe_events:\n%s", got)
	}

	failing := errors.New("resolution failed")
	for _, c := range []struct {
		defs []Def
		o    AddOptions
		step Step
		is   error
	}{
		{[]Def{{From: filepath.Join(t.TempDir(), "none")}}, o, StepRead, os.ErrNotExist},
		{[]Def{{Lines: []string{"p:x /bin/true:0x10"}}}, o, StepRaw, tracefs.ErrNoUprobes},
		{[]Def{{Req: &Request{Point: "x"}}}, AddOptions{Options: opts, Resolve: func([]*Request) error { return failing }}, StepResolve, failing},
		{[]Def{{Lines: []string{"p:probe/vfs_read vfs_read"}}}, AddOptions{Options: opts, DryRun: true}, StepPlan, tracefs.ErrExist},
		{[]Def{{Lines: []string{"p:probe/y vfs_read"}}}, AddOptions{Options: opts, MountNS: 1 << 30}, StepNamespace, mountns.ErrNoProcess},
	} {
		_, err := Add(fs, c.defs, c.o)
		var ae *AddError
		if !errors.As(err, &ae) || ae.Step != c.step || !errors.Is(err, c.is) {
			t.Errorf("%+v: %v, want step %d wrapping %v", c.defs, err, c.step, c.is)
		}
	}
	// gprobe's own namespace is not entered.
	if _, err := Add(fs, []Def{{Lines: []string{"p:probe/y vfs_read"}}}, AddOptions{Options: opts, DryRun: true, MountNS: os.Getpid()}); err != nil || fs.Enter != nil {
		t.Errorf("in gprobe's own namespace: %v (Enter set: %v)", err, fs.Enter != nil)
	}
}

func readme(t *testing.T) string {
	b, err := os.ReadFile("../probedef/testdata/readme/6.1.txt")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestList: -l's lines, kprobes first, each file's sorted by its text, a
// definition once, the filter applied.
func TestList(t *testing.T) {
	ev := func(k probe.Kind, line string) tracefs.Event {
		p, err := probedef.Parse(line, &probedef.Options{NoStat: true})
		if err != nil {
			t.Fatal(err)
		}
		return tracefs.Event{Kind: k, Group: p.GroupOrDefault(), Name: p.Event, Line: line, Probe: p}
	}
	installed := []tracefs.Event{
		ev(probe.Uprobe, "p:probe_x/main /bin/true:0x10"),
		ev(probe.Kprobe, "p:probe/vfs_write vfs_write+0"),
		ev(probe.Kprobe, "p:probe/vfs_read vfs_read+0"),
		ev(probe.Kprobe, "p:probe/vfs_read vfs_read+0"),
		ev(probe.Kprobe, "p:other/do_exit do_exit+0"),
	}
	find := func(p *probe.Probe) string { return "at " + p.Event }
	got := List(installed, func(g, e string) bool { return g != "other" }, find)
	want := []string{
		"  probe:vfs_read       (on at vfs_read)",
		"  probe:vfs_write      (on at vfs_write)",
		"  probe_x:main         (on at main in /bin/true)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
