package install

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/emit/tracefs"
)

// features612 are Debian 6.12's README features (fprobes, tprobes, BTF
// arguments, entry values at return).
func features612(t *testing.T) probedef.Features {
	b, err := os.ReadFile("../probedef/testdata/readme/6.12.txt")
	if err != nil {
		t.Fatal(err)
	}
	return probedef.ParseFeatures(string(b))
}

var testKallsyms = ReadKallsyms(strings.NewReader("ffffffff81000000 T _stext\nffffffff81234560 T vfs_read\n" +
	"ffffffff81234660 T vfs_write\nffffffff81e00000 T _etext\n"))

func rawRequests(t *testing.T, opts Options, lines ...string) []*Request {
	var reqs []*Request
	for _, l := range lines {
		p, err := Check(l, opts)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		reqs = append(reqs, &Request{Probes: []probe.Probe{*p}, checked: map[string]bool{l: true}})
	}
	return reqs
}

// TestPlanDynamicKinds: fprobes, tprobes and eprobes are named against
// every installed event (dynamic_events share one name space with all
// events), --maxactive gives an fprobe's exit f<N>, and the new kinds are
// checked with the target's features.
func TestPlanDynamicKinds(t *testing.T) {
	opts := Options{Features: features612(t), Symbols: testKallsyms, Force: true}
	installed := []tracefs.Event{
		{Kind: probe.Kprobe, Group: "probe", Name: "vfs_read"},
		{Kind: probe.Fprobe, Group: "probe", Name: "vfs_write"},
	}
	reqs := rawRequests(t, opts,
		"f:probe/vfs_read vfs_read count=$arg3:u64",
		"f:probe/vfs_read__return vfs_read%return $retval",
		"p:probe/vfs_write vfs_write",
		"t:probe/sched_process_exec sched_process_exec comm=+0($arg1):u64",
		"e:probe/openat syscalls.sys_enter_openat path=+0($filename):ustring",
	)
	opts.MaxActive = 32
	plan, err := Plan(reqs, installed, opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range plan {
		got = append(got, ev.Line)
	}
	want := []string{
		"f:probe/vfs_read_1 vfs_read count=$arg3:u64",
		"f32:probe/vfs_read__return vfs_read%return $retval",
		"p:probe/vfs_write_1 vfs_write",
		"t:probe/sched_process_exec sched_process_exec comm=+0($arg1):u64",
		"e:probe/openat syscalls.sys_enter_openat path=+0($filename):ustring",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// 6.1 offers no fprobes: refused before anything is written, naming
	// the release that would take it.
	_, err = Check("f:probe/vfs_read vfs_read", Options{Features: probedef.AllFeatures, Symbols: testKallsyms})
	if !errors.Is(err, probedef.ErrSyntax) || !strings.Contains(err.Error(), "Linux 6.5") {
		t.Errorf("fprobe on 6.1: %v", err)
	}
	// A function the kernel does not have, once the line is read.
	_, err = Check("f:probe/x no_such_function", Options{Features: features612(t), Symbols: testKallsyms})
	var pe *probedef.Error
	if !errors.As(err, &pe) || pe.Code != "FAIL_REG_PROBE" {
		t.Errorf("fprobe on a missing function: %v", err)
	}
}

// TestDescribeDynamicKinds: -l names an fprobe's function, a tprobe's
// tracepoint and an eprobe's event.
func TestDescribeDynamicKinds(t *testing.T) {
	opts := &probedef.Options{Features: &probedef.KnownFeatures, NoStat: true}
	noDWARF := func(*probe.Probe) string { t.Error("asked DWARF for a dynamic kind"); return "" }
	for line, want := range map[string]string{
		"f:fprobes/vfs_read__entry vfs_read count=count":                      "  fprobes:vfs_read__entry (on vfs_read with count)",
		"f4:probe/vfs_read__return vfs_read%return arg1=$retval":              "  probe:vfs_read__return (on vfs_read%return with arg1)",
		"t:tracepoints/sched_process_exec sched_process_exec comm=+0($arg1)":  "  tracepoints:sched_process_exec (on tracepoint sched_process_exec with comm)",
		"e:eprobes/sys_enter_openat syscalls.sys_enter_openat arg1=$filename": "  eprobes:sys_enter_openat (on event syscalls/sys_enter_openat with arg1)",
	} {
		p, err := probedef.Parse(line, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := Describe(p, noDWARF); got != want {
			t.Errorf("%s:\n got %q\nwant %q", line, got, want)
		}
	}
}

// TestPlanLeavesOutRefused: of a request resolved to several trace events
// (a function pattern), one the kernel would refuse (an argument name
// twice, a symbol the kernel does not have) is left out with a warning and
// the others are planned; a request whose events are all refused fails
// with the first refusal; a single event is never left out.
func TestPlanLeavesOutRefused(t *testing.T) {
	var warnings []string
	opts := Options{Features: features612(t), Symbols: testKallsyms, Warn: func(s string) { warnings = append(warnings, s) }}
	parse := func(lines ...string) []probe.Probe {
		var ps []probe.Probe
		for _, l := range lines {
			p, err := probedef.Parse(l, &probedef.Options{NoStat: true})
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, *p)
		}
		return ps
	}
	req := &Request{Point: "vfs_*", Probes: parse("p:probe/vfs_read vfs_read+0 a=%di:x64",
		"p:probe/vfs_nosuch vfs_nosuch+0", "p:probe/vfs_write vfs_write+0 f=%di:x64 g=%si:x64", "p:probe/vfs_write_1 vfs_write+4")}
	req.Probes[2].Args[1].Name = "f" // what perf writes for two variables named f
	plan, err := Plan([]*Request{req}, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, ev := range plan {
		lines = append(lines, ev.Line)
	}
	if want := "p:probe/vfs_read vfs_read+0 a=%di:x64|p:probe/vfs_write_1 vfs_write+4"; strings.Join(lines, "|") != want {
		t.Errorf("planned %q, want %q", lines, want)
	}
	if len(warnings) != 2 || !strings.HasPrefix(warnings[0], `vfs_*: the kernel would refuse "p:probe/vfs_nosuch vfs_nosuch+0": `) ||
		!strings.Contains(warnings[1], "This argument name is already used") || !strings.HasSuffix(warnings[1], "; skip it.") {
		t.Errorf("warnings %q", warnings)
	}
	warnings = nil
	all := &Request{Point: "vfs_n*", Probes: parse("p:probe/vfs_nosuch vfs_nosuch+0", "p:probe/vfs_nosuch2 vfs_nosuch2+0")}
	if _, err := Plan([]*Request{all}, nil, opts); err == nil || !strings.Contains(err.Error(), "vfs_nosuch") {
		t.Errorf("every event refused: %v", err)
	}
	one := &Request{Point: "vfs_nosuch", Probes: parse("p:probe/vfs_nosuch vfs_nosuch+0")}
	if _, err := Plan([]*Request{one}, nil, Options{Features: opts.Features, Symbols: testKallsyms}); err == nil {
		t.Error("a single refused event was planned")
	}
}
