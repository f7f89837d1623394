package khist

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/testenv"
)

func kprobes(fn string) (probe.Probe, []probe.Probe) {
	loc := probe.Location{Symbol: fn}
	return probe.Probe{Kind: probe.Kprobe, Group: "probe", Event: fn, Target: loc},
		[]probe.Probe{{Kind: probe.Kprobe, Group: "probe", Event: fn + "__return", Return: true, Target: loc,
			Args: []probe.FetchArg{{Expr: probe.Retval{}}}}}
}

// goProbes are a Go function's entry and return-instruction uprobes as
// the resolver gives them: the pairing fields and an argument each.
func goProbes() (probe.Probe, []probe.Probe) {
	pairing := []probe.FetchArg{
		{Name: "goid", Expr: probe.Mem{Off: 152, Inner: probe.Reg("r14")}, Type: "u64"},
		{Name: "go_sp", Expr: probe.Reg("sp"), Type: "x64"},
	}
	at := func(off uint64) probe.Location { return probe.Location{Path: "/bin/svc", Offset: off} }
	entry := probe.Probe{Kind: probe.Uprobe, Group: "probe_svc", Event: "main_work", Target: at(0x1006),
		Args: append([]probe.FetchArg{{Name: "n", Expr: probe.Reg("bx"), Type: "s64"}}, pairing...)}
	var rets []probe.Probe
	for _, off := range []uint64{0x1050, 0x1090} {
		rets = append(rets, probe.Probe{Kind: probe.Uprobe, Group: "probe_svc", Event: "main_work__retinsn", Target: at(off),
			Args: append([]probe.FetchArg{{Name: "r0", Expr: probe.Reg("ax"), Type: "s64"}}, pairing...)})
	}
	return entry, rets
}

// TestProbePair: kernel functions get a kprobe and a kretprobe, in
// Group, the return fetching the comm; anything but an entry and a return
// of one kind is refused.
func TestProbePair(t *testing.T) {
	e, r := kprobes("hrtimer_nanosleep")
	e2, r2, err := probePair(e, r, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e2.String(), "p:gprobe_latency/hrtimer_nanosleep hrtimer_nanosleep+0"; got != want {
		t.Errorf("entry %q, want %q", got, want)
	}
	if got, want := r2[0].String(), "r:gprobe_latency/hrtimer_nanosleep__return hrtimer_nanosleep+0 comm=$comm:string"; got != want {
		t.Errorf("return %q, want %q", got, want)
	}
	// A Go function: plain probes on the return instructions, by goroutine.
	ge, gr := goProbes()
	ge2, gr2, err := probePair(ge, gr, "goid")
	if err != nil {
		t.Fatal(err)
	}
	got := []string{ge2.String()}
	for _, p := range gr2 {
		got = append(got, p.String())
	}
	if want := []string{
		"p:gprobe_latency/main_work /bin/svc:0x1006 goid=+152(%r14):u64",
		"p:gprobe_latency/main_work__retinsn /bin/svc:0x1050 goid=+152(%r14):u64 comm=$comm:string",
		"p:gprobe_latency/main_work__retinsn /bin/svc:0x1090 goid=+152(%r14):u64 comm=$comm:string",
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("Go probes:\n got %q\nwant %q", got, want)
	}
	if KeyOf(ge) != "goid" || KeyOf(e) != "" {
		t.Errorf("keys: Go %q, C %q", KeyOf(ge), KeyOf(e))
	}
	u := probe.Probe{Kind: probe.Uprobe, Event: "work", Target: probe.Location{Path: "/bin/x", Offset: 0x10}}
	mixed := append([]probe.Probe{gr[0]}, r...)
	other := gr[1]
	other.Event = "main_work__tailcall"
	for _, c := range []struct {
		entry probe.Probe
		rets  []probe.Probe
		key   string
	}{
		{r[0], []probe.Probe{e}, ""}, {e, []probe.Probe{e, e}, ""}, {u, r, ""}, {e, nil, ""},
		{ge, mixed, "goid"}, {ge, []probe.Probe{gr[0], other}, "goid"}, {ge, gr, "nosuch"}, {ge, append(r, r...), ""},
	} {
		if _, _, err := probePair(c.entry, c.rets, c.key); !errors.Is(err, ErrConfig) {
			t.Errorf("%s and %d returns, key %q: %v", c.entry.String(), len(c.rets), c.key, err)
		}
	}
}

// TestTriggerSpecs: the triggers the kernel gets, for each grouping.
func TestTriggerSpecs(t *testing.T) {
	s := &session{synth: "gprobe_latency_42", entry: probe.Probe{Event: "f"}, ret: probe.Probe{Event: "f__return"}}
	common := []trigger{
		{"events/gprobe_latency/f/trigger", "hist:keys=common_pid.execname:ts0=common_timestamp:size=2048", roleEntryHits},
		{"events/gprobe_latency/f__return/trigger", "hist:keys=common_pid.execname:size=2048", roleReturnHits},
		{"events/gprobe_latency/f__return/trigger", "hist:keys=common_pid.execname:lat1=common_timestamp-$ts0+1:onmatch(gprobe_latency.f).trace(gprobe_latency_42,$lat1,common_pid,comm):size=2048", roleNone},
	}
	for by, synth := range map[string][]trigger{
		"": {
			{"events/synthetic/gprobe_latency_42/trigger", "hist:keys=ns_plus1.log2:vals=hitcount,ns_plus1:mx=ns_plus1:onmax($mx).save(pid):size=128", roleSums},
			{"events/synthetic/gprobe_latency_42/trigger", "hist:keys=ns_plus1.log2:mn=-(ns_plus1):onmax($mn).save(pid):size=128", roleMins},
		},
		"comm": {
			{"events/synthetic/gprobe_latency_42/trigger", "hist:keys=comm,ns_plus1.log2:vals=hitcount,ns_plus1:mx=ns_plus1:onmax($mx).save(pid):size=2048", roleSums},
			{"events/synthetic/gprobe_latency_42/trigger", "hist:keys=comm,ns_plus1.log2:mn=-(ns_plus1):onmax($mn).save(pid):size=2048", roleMins},
		},
		"pid": {
			{"events/synthetic/gprobe_latency_42/trigger", "hist:keys=pid,ns_plus1.log2:vals=hitcount,ns_plus1:mx=ns_plus1:onmax($mx).save(pid):size=2048", roleSums},
			{"events/synthetic/gprobe_latency_42/trigger", "hist:keys=pid,ns_plus1.log2:mn=-(ns_plus1):onmax($mn).save(pid):size=2048", roleMins},
		},
	} {
		s.cfg.By = by
		if got, want := s.triggerSpecs(), append(synth, common...); !reflect.DeepEqual(got, want) {
			t.Errorf("--by %v:\n got %v\nwant %v", by, got, want)
		}
	}
	// A Go function: ts0 per goroutine, hits per thread.
	s = &session{cfg: Config{Key: "goid"}, synth: "gprobe_latency_42", entry: probe.Probe{Event: "main_work"}, ret: probe.Probe{Event: "main_work__retinsn"}}
	want := []trigger{
		{"events/synthetic/gprobe_latency_42/trigger", "hist:keys=ns_plus1.log2:vals=hitcount,ns_plus1:mx=ns_plus1:onmax($mx).save(pid):size=128", roleSums},
		{"events/synthetic/gprobe_latency_42/trigger", "hist:keys=ns_plus1.log2:mn=-(ns_plus1):onmax($mn).save(pid):size=128", roleMins},
		{"events/gprobe_latency/main_work/trigger", "hist:keys=goid:ts0=common_timestamp:size=2048", roleNone},
		{"events/gprobe_latency/main_work/trigger", "hist:keys=common_pid.execname:size=2048", roleEntryHits},
		{"events/gprobe_latency/main_work__retinsn/trigger", "hist:keys=common_pid.execname:size=2048", roleReturnHits},
		{"events/gprobe_latency/main_work__retinsn/trigger", "hist:keys=goid:lat1=common_timestamp-$ts0+1:onmatch(gprobe_latency.main_work).trace(gprobe_latency_42,$lat1,common_pid,comm):size=2048", roleNone},
	}
	if got := s.triggerSpecs(); !reflect.DeepEqual(got, want) {
		t.Errorf("Go:\n got %v\nwant %v", got, want)
	}
	if got := synthDefinition("gprobe_latency_42"); got != "gprobe_latency_42 u64 ns_plus1; int pid; char comm[]" {
		t.Errorf("synthetic event %q", got)
	}
}

// TestConfig: contradictory settings are refused before anything is looked at.
func TestConfig(t *testing.T) {
	e, r := kprobes("f")
	for _, c := range []Config{
		{Function: "f", Entry: e, Returns: r, By: "tid", Command: []string{"true"}},
		{Function: "f", Entry: e, Returns: r},
		{Function: "f", Entry: e, Returns: r, All: true},
		{Entry: e, Returns: r, Command: []string{"true"}},
	} {
		if _, err := Run(c); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// fakeTracefs is a directory with the files Supported and the probe writes
// look at; writes to it succeed as to ordinary files.
func fakeTracefs(t *testing.T, readme string) string {
	dir := t.TempDir()
	for name, text := range map[string]string{"README": readme, "synthetic_events": "", "uprobe_events": "", "kprobe_events": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "instances"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSupported: the kernel must document hist triggers and have
// synthetic_events; this machine's kernel (built without either) is
// refused with both named.
func TestSupported(t *testing.T) {
	if err := Supported(tracefs.At(fakeTracefs(t, "      hist trigger\t- If set, ...\n"))); err != nil {
		t.Errorf("hist triggers and synthetic events: %v", err)
	}
	if err := Supported(tracefs.At(fakeTracefs(t, "nothing\n"))); !errors.Is(err, ErrUnsupported) || !strings.HasSuffix(err.Error(), "this kernel has no hist triggers") {
		t.Errorf("no hist triggers: %v", err)
	}
	root := testenv.Tracefs(t)
	if _, err := os.Stat(filepath.Join(root, "synthetic_events")); err == nil {
		t.Skip("this kernel has synthetic events")
	}
	if err := Supported(tracefs.At(root)); !errors.Is(err, ErrUnsupported) || strings.Count(err.Error(), "\n") > 0 {
		t.Errorf("this kernel: %v", err)
	}
}

// TestCounted reads what Linux 6.1 and 6.12 counted for the session's
// triggers (testdata: the sleeper workload of cmd/gprobe's guest test, the
// triggers written as the session writes them): plain, by a comm holding
// the separators, by pid, and a recursive function (uprobes), whose
// nested calls show as unmatched.
func TestCounted(t *testing.T) {
	type want struct {
		groups                 map[string]uint64 // calls per group
		entries, returns, hits uint64
	}
	cases := []struct {
		name, by, fn string
		want         want
	}{
		{"plain", "", "hrtimer_nanosleep", want{map[string]uint64{"": 12}, 12, 12, 24}},
		{"comm", "comm", "hrtimer_nanosleep", want{map[string]uint64{"a, ns_plus1: ~": 4}, 4, 4, 8}},
		{"pid", "pid", "hrtimer_nanosleep", want{nil, 4, 4, 8}},
		{"nest", "", "nest", want{map[string]uint64{"": 2}, 5, 5, 10}},
	}
	for _, k := range []string{"linux61", "linux612"} {
		for _, c := range cases {
			s := &session{cfg: Config{By: c.by}, synth: "gprobe_latency_1", entry: probe.Probe{Event: c.fn}, ret: probe.Probe{Event: c.fn + "__return"}}
			trigs := s.triggerSpecs()
			hists := map[string]string{}
			for _, tr := range trigs {
				part := "synth"
				switch {
				case strings.Contains(tr.file, "__return"):
					part = "return"
				case !strings.Contains(tr.file, "synthetic"):
					part = "entry"
				}
				b, err := os.ReadFile(filepath.Join("testdata", k+"-"+c.name+"-"+part+".hist"))
				if err != nil {
					t.Fatal(err)
				}
				hists[tr.file] = string(b)
			}
			var res Result
			if err := counted(trigs, hists, c.by, &res); err != nil {
				t.Errorf("%s %s: %v", k, c.name, err)
				continue
			}
			var entries, returns, calls uint64
			groups := map[string]uint64{}
			for _, r := range res.Rows {
				entries += r.Entries
				returns += r.Returns
				var n, lo, hi uint64
				for i, b := range r.Buckets {
					if b.Count == 0 {
						continue
					}
					if lo == 0 {
						lo = b.MinNs
					}
					hi = b.MaxNs
					// A bucket's calls are within its bounds, their sum
					// between count times the least and the largest.
					if bits.Len64(b.MinNs) != i || bits.Len64(b.MaxNs) != i || b.MinNs > b.MaxNs || b.SumNs < b.Count*b.MinNs || b.SumNs > b.Count*b.MaxNs {
						t.Errorf("%s %s: group %q bucket %d: %+v", k, c.name, r.Group, i, b)
					}
					n += b.Count
				}
				// The workload sleeps 100 us at least.
				if n > 0 && (lo < 100000 || hi < lo) {
					t.Errorf("%s %s: group %q from %d to %d ns", k, c.name, r.Group, lo, hi)
				}
				groups[r.Group] += n
				calls += n
			}
			w := c.want
			if w.groups == nil { // by pid: two children, two calls each
				if len(groups) != 2 {
					t.Errorf("%s %s: groups %v", k, c.name, groups)
				}
				for g, n := range groups {
					if n != 2 || strings.Trim(g, "0123456789") != "" {
						t.Errorf("%s %s: group %q has %d calls", k, c.name, g, n)
					}
				}
			} else if !reflect.DeepEqual(groups, w.groups) {
				t.Errorf("%s %s: calls by group %v, want %v", k, c.name, groups, w.groups)
			}
			if entries != w.entries || returns != w.returns || res.Hits != w.hits || res.Lost != 0 {
				t.Errorf("%s %s: %d entries, %d returns, %d hits, %d lost; want %d, %d, %d, 0", k, c.name, entries, returns, res.Hits, res.Lost, w.entries, w.returns, w.hits)
			}
		}
	}
}

// TestSetupFailureRemovesAll: when setup fails half-way (here: the
// instance has no pid filter files, as no kernel would), what was created
// is removed again, in the kernel's order: the instance, the synthetic
// event, the return probe, the entry probe.
func TestSetupFailureRemovesAll(t *testing.T) {
	dir := fakeTracefs(t, "      hist trigger\t- If set, ...\n")
	at := probe.Location{Path: "/bin/true", Offset: 0x10}
	_, err := Run(Config{
		Function: "work", Command: []string{"true"}, Tracefs: dir,
		Entry:   probe.Probe{Kind: probe.Uprobe, Group: "probe_true", Event: "work", Target: at},
		Returns: []probe.Probe{{Kind: probe.Uprobe, Group: "probe_true", Event: "work__return", Return: true, Target: at}},
	})
	if !errors.Is(err, tracefs.ErrNotFound) {
		t.Fatalf("setup in a fake tracefs: %v", err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	synth := fmt.Sprintf("gprobe_latency_%d", os.Getpid())
	if got, want := read("synthetic_events"), synthDefinition(synth)+"\n!"+synth+"\n"; got != want {
		t.Errorf("synthetic_events:\n%s\nwant\n%s", got, want)
	}
	want := "p:gprobe_latency/work /bin/true:0x10\n" +
		"r:gprobe_latency/work__return /bin/true:0x10 comm=$comm:string\n" +
		"-:gprobe_latency/work__return\n" +
		"-:gprobe_latency/work\n"
	if got := read("uprobe_events"); got != want {
		t.Errorf("uprobe_events:\n%s\nwant\n%s", got, want)
	}
	if ents, err := os.ReadDir(filepath.Join(dir, "instances")); err != nil || len(ents) != 0 {
		t.Errorf("instances left: %v, %v", ents, err)
	}
}

// TestRefusesBeforeCreating: on this machine's kernel (no hist triggers,
// no synthetic events) a session refuses before it installs anything.
func TestRefusesBeforeCreating(t *testing.T) {
	root := testenv.Tracefs(t)
	if _, err := os.Stat(filepath.Join(root, "synthetic_events")); err == nil {
		t.Skip("this kernel has synthetic events")
	}
	before, _ := os.ReadFile(filepath.Join(root, "uprobe_events"))
	at := probe.Location{Path: "/bin/true", Offset: 0x10}
	_, err := Run(Config{
		Function: "work", Command: []string{"true"},
		Entry:   probe.Probe{Kind: probe.Uprobe, Event: "work", Target: at},
		Returns: []probe.Probe{{Kind: probe.Uprobe, Event: "work__return", Return: true, Target: at}},
	})
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Run: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(root, "uprobe_events"))
	insts, _ := os.ReadDir(filepath.Join(root, "instances"))
	for _, in := range insts {
		if strings.HasPrefix(in.Name(), "gprobe-latency-") {
			t.Errorf("instance %s created", in.Name())
		}
	}
	if string(before) != string(after) {
		t.Errorf("uprobe_events changed:\n%s\n->\n%s", before, after)
	}
}
