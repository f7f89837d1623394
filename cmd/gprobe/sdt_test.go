package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

// Debian's python3.11, whose markers are guarded by semaphores.
const python311 = "/usr/bin/python3.11"

// gcScript collects generation 2 N times, then generation 1 M times,
// with automatic collection off, and leaves without finalizing (whose
// collections would fire the marker again). The interpreter's start
// collects generation 0 a few times before the script runs.
const gcScript = `import gc, os, sys
gc.disable()
for i in range(int(sys.argv[1])):
    gc.collect(2)
for i in range(int(sys.argv[2])):
    gc.collect(1)
sys.stdout.flush()
os._exit(0)
`

// TestSDTRecordPython probes python3.11's gc__start marker for real: the
// probe (its semaphore as the uprobe's reference counter) is installed,
// a script collecting a known number of times is recorded with gprobe
// record, and trace-cmd report counts the events and reads each one's
// generation. The same marker probed without its reference counter never
// fires: the interpreter only runs the marker while the kernel holds the
// semaphore up. gprobe analyze pairs each collection's gc__start with its
// gc__done.
func TestSDTRecordPython(t *testing.T) {
	requireRecording(t)
	if _, err := os.Stat(python311); err != nil {
		testenv.Missing(t, "%s (Debian's python3.11-minimal; scripts/provision.sh): %v", python311, err)
	}
	bin := testenv.Gprobe(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "gc.py")
	if err := os.WriteFile(script, []byte(gcScript), 0o644); err != nil {
		t.Fatal(err)
	}
	home := testenv.Home(t) // gprobe remembers python3.11's markers there
	gprobe := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "HOME="+home)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gprobe %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	start := gprobe("-x", python311, "-D", "sdt_python:gc__start")
	if !strings.Contains(start, "(0x") {
		t.Fatalf("gc__start without its semaphore: %s", start)
	}
	t.Cleanup(func() { exec.Command(bin, "-q", "-d", "sdt_python:gc__*").Run() })

	const n2, n1 = 37, 5
	out := filepath.Join(dir, "trace.dat")
	// record installs what add adds (SDT points of python3.11, or
	// definitions), records the script and returns each gc__start's
	// generation and the number of gc__done events.
	record := func(add ...string) (gens []string, dones int) {
		t.Helper()
		gprobe(append([]string{"-x", python311, "add"}, add...)...)
		defer gprobe("-d", "sdt_python:gc__*")
		gprobe("record", "-e", "sdt_python:*", "-o", out, "--", python311, "-S", "-I", script,
			strconv.Itoa(n2), strconv.Itoa(n1))
		rep, err := exec.Command("trace-cmd", "report", "-i", out).CombinedOutput()
		if err != nil {
			t.Fatalf("trace-cmd report: %v\n%s", err, rep)
		}
		for _, m := range regexp.MustCompile(`gc__start:\s+\(4287f3\) arg1=(-?\d+)`).FindAllStringSubmatch(string(rep), -1) {
			gens = append(gens, m[1])
		}
		return gens, strings.Count(string(rep), "gc__done:")
	}

	gens, dones := record("sdt_python:gc__start", "%gc__done")
	count := map[string]int{}
	for _, g := range gens {
		count[g]++
	}
	if count["2"] != n2 || count["1"] != n1 {
		t.Errorf("recorded generations %v, want %d of 2 and %d of 1", count, n2, n1)
	}
	// The script's collections are the last ones, in order.
	if len(gens) < n2+n1 || strings.Join(gens[len(gens)-n2-n1:], "") != strings.Repeat("2", n2)+strings.Repeat("1", n1) {
		t.Errorf("the last %d events: %v", n2+n1, gens)
	}
	// analyze pairs each collection's start and end markers.
	var rep struct {
		Latency []struct {
			Function    string
			ReturnEvent string `json:"return_event"`
			Count       int
		}
	}
	if err := json.Unmarshal([]byte(gprobe("analyze", "--json", out)), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Latency) != 1 || rep.Latency[0].Count != len(gens) || dones != len(gens) || rep.Latency[0].ReturnEvent != "sdt_python:gc__done" {
		t.Errorf("analyze: %+v; %d starts, %d dones", rep, len(gens), dones)
	}
	noSem := regexp.MustCompile(`\(0x[0-9a-f]+\)`).ReplaceAllString(strings.TrimSpace(start), "")
	if g, _ := record(noSem); len(g) != 0 {
		t.Errorf("without the semaphore the marker fired %d times", len(g))
	}
}

// sdtBinaries are the binaries of the SDT differential table, by name:
// Debian's, and the test program of resolve/sdt built here.
func sdtBinaries(t *testing.T) map[string]string {
	t.Helper()
	bins := map[string]string{
		"python":    python311,
		"libstdc++": "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"libjvm":    "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so",
		"true":      "/usr/bin/true",
	}
	for _, p := range bins {
		if _, err := os.Stat(p); err != nil {
			testenv.Missing(t, "%s (scripts/provision.sh): %v", p, err)
		}
	}
	srcs := []string{"../../resolve/sdt/testdata/sdtprog.c", "../../resolve/sdt/testdata/sdtsem.c"}
	bins["prog-O0"] = testenv.BuildCSources(t, "gcc", srcs, "sdtprog", "-g", "-O0")
	bins["prog-O2"] = testenv.BuildCSources(t, "gcc", srcs, "sdtprog", "-g", "-O2")
	return bins
}

// TestSDTAgainstPerf asks perf probe 6.1 and gprobe the same SDT
// questions, each with its own build-id cache prepared alike (empty, or
// holding python3.11, libstdc++ and libjvm.so added by perf buildid-cache),
// and wants the same stdout, stderr and exit status. The questions whose
// answers differ on purpose (constants fetched as immediates, arm64
// operands, the arguments of an event's markers made consistent) are in
// resolve/sdt's TestDefinitionsMatchPerf.
func TestSDTAgainstPerf(t *testing.T) {
	perf := testenv.RequirePerf(t)
	bins := sdtBinaries(t)
	cached := func(t *testing.T) string {
		h := testenv.Home(t)
		for _, b := range []string{"python", "libstdc++", "libjvm"} {
			if r := perf.CommandIn(h, "buildid-cache", "--add", bins[b]); r.Code != 0 {
				t.Fatal(r)
			}
		}
		return h
	}
	cases := []struct {
		cached bool
		args   []string // "@NAME" is the path of bins[NAME]
	}{
		{false, []string{"-x", "@python", "-D", "sdt_python:function__entry"}},
		{false, []string{"-x", "@python", "-D", "%sdt_python:gc__*"}},
		{false, []string{"-x", "@python", "-D", "sdt_python:*"}},
		{false, []string{"-x", "@python", "-D", "%*"}},
		{false, []string{"-x", "@python", "-D", "%line"}},
		{false, []string{"-x", "@python", "-D", "sdt_python:gc__start", "-D", "sdt_python:gc__done"}},
		{false, []string{"-x", "@python", "-D", "sdt_python:line foo=%ax"}},
		{false, []string{"-x", "@python", "-D", "sdt_python:nosuch"}},
		{false, []string{"-x", "@python", "-D", "%python:line"}},
		{false, []string{"-q", "-x", "@python", "-D", "sdt_python:nosuch"}},
		{false, []string{"-x", "@python", "-D", "sdt_python:line%return"}},
		{false, []string{"-x", "@python", "-D", "sdt_python:line+4"}},
		{false, []string{"-x", "@python", "-n", "-a", "sdt_python:gc__start"}},
		{false, []string{"-x", "@python", "-n", "sdt_python:gc__start"}},
		{false, []string{"-x", "@python", "-n", "-a", "%gc__*"}},
		{false, []string{"-x", "@libstdc++", "-D", "sdt_libstdcxx:*"}},
		{false, []string{"-x", "@libstdc++", "-D", "%throw"}},
		{false, []string{"-x", "@libstdc++", "-n", "-a", "%sdt_libstdcxx:*"}},
		{false, []string{"-x", "@libjvm", "-D", "sdt_hotspot:gc__*"}},
		{false, []string{"-x", "@libjvm", "-D", "sdt_hotspot:method__compile__*"}},
		{false, []string{"-x", "@libjvm", "-D", "%*"}},
		{false, []string{"-x", "@libjvm", "--max-probes", "1", "-D", "sdt_hotspot:gc__*"}},
		{false, []string{"-x", "@true", "-D", "sdt_x:y"}},
		{false, []string{"-x", "@prog-O0", "-D", "%twice"}},
		{false, []string{"-x", "@prog-O2", "-D", "sdt_gprobe_test:mem"}},
		{false, []string{"-x", "@prog-O2", "-D", "sdt_gprobe_test:tick"}},
		{false, []string{"-x", "@prog-O2", "-D", "%noargs"}},
		{false, []string{"-D", "%sdt_python:line"}},
		{false, []string{"--cache", "-l"}},
		{true, []string{"-D", "%sdt_python:line"}},
		{true, []string{"-D", "sdt_python:line"}},
		{true, []string{"-D", "%gc__*"}},
		{true, []string{"-D", "%sdt_libstdcxx:*"}},
		{true, []string{"-D", "%sdt_python:line@/usr/bin/python3.11"}},
		{true, []string{"-D", "%sdt_python:line@571d98"}},
		{true, []string{"-D", "%sdt_python:line@/usr/lib/x86_64-linux-gnu/libstdc++.so.6"}},
		{true, []string{"-D", "%sdt_nosuch:x"}},
		{true, []string{"-D", "%*"}},
		{true, []string{"-n", "-a", "%sdt_python:gc__*"}},
		{true, []string{"-x", "@libstdc++", "-D", "%sdt_python:line"}},
		{true, []string{"--cache", "-l"}},
		{true, []string{"--cache", "-l", "sdt_python:*"}},
		{true, []string{"--cache", "-l", "*throw"}},
	}
	for _, c := range cases {
		var args []string
		for _, a := range c.args {
			if strings.HasPrefix(a, "@") {
				a = bins[a[1:]]
			}
			args = append(args, a)
		}
		hp, hg := testenv.Home(t), testenv.Home(t)
		if c.cached {
			hp, hg = cached(t), cached(t)
		}
		want := perf.ProbeIn(hp, args...)
		t.Setenv("HOME", hg)
		got := runGprobe(args...)
		t.Logf("%s: exit %d, %d stdout lines, stderr %q", strings.Join(c.args, " "), got.Code, strings.Count(got.Stdout, "\n"), firstLine(got.Stderr))
		if !same(want, got) {
			t.Errorf("%s (cached %v):\ngprobe: %s\nperf:   %s", strings.Join(args, " "), c.cached, got, want)
		}
	}
}

// TestSDTListAgainstPerf: `gprobe list --sdt` prints what `perf list sdt`
// prints for the same build-id cache (events two binaries have name their
// binary), and `-d --cache` removes what `perf probe --cache -d` removes.
func TestSDTListAgainstPerf(t *testing.T) {
	perf := testenv.RequirePerf(t)
	bins := sdtBinaries(t)
	h := testenv.Home(t)
	for _, b := range []string{"python", "libstdc++", "prog-O0", "prog-O2"} {
		if r := perf.CommandIn(h, "buildid-cache", "--add", bins[b]); r.Code != 0 {
			t.Fatal(r)
		}
	}
	t.Setenv("HOME", h)
	for _, q := range [][2][]string{
		{{"list", "sdt"}, {"list", "--sdt"}},
		{{"list", "sdt_gprobe_test:t*"}, {"list", "--sdt", "sdt_gprobe_test:t*"}},
	} {
		want, got := perf.CommandIn(h, q[0]...), runGprobe(q[1]...)
		if !strings.Contains(want.Stdout, got.Stdout) || got.Stdout == "" || got.Code != 0 {
			t.Errorf("gprobe %s:\n%s\nperf %s:\n%s", q[1], got, q[0], want)
		}
	}
	if got := runGprobe("list", "--sdt", "-x", bins["python"], "gc*"); got.Code != 0 ||
		got.Stdout != "  sdt_python:gc__done                                [SDT event]\n  sdt_python:gc__start                               [SDT event]\n" {
		t.Errorf("list --sdt -x python gc*: %s", got)
	}
	// Purge from copies of one cache, then compare what is left.
	hp := testenv.Home(t)
	if out, err := exec.Command("cp", "-a", filepath.Join(h, ".debug"), hp).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	want := perf.CommandIn(hp, "probe", "--cache", "-d", "sdt_gprobe_test:t*")
	got := runGprobe("--cache", "-d", "sdt_gprobe_test:t*")
	if !same(want, got) || !strings.Contains(got.Stderr, "Removed cached event: sdt_gprobe_test:tick=tick") {
		t.Errorf("--cache -d:\ngprobe: %s\nperf:   %s", got, want)
	}
	if want, got := perf.CommandIn(hp, "probe", "--cache", "-l"), perf.CommandIn(h, "probe", "--cache", "-l"); !same(want, got) {
		t.Errorf("left after --cache -d:\ngprobe's: %s\nperf's:   %s", got, want)
	}
}

// TestSDTCacheSharedWithPerf: the markers gprobe remembers when it is
// asked with -x are found by perf without -x (and by gprobe), from the
// same ~/.debug.
func TestSDTCacheSharedWithPerf(t *testing.T) {
	perf := testenv.RequirePerf(t)
	bins := sdtBinaries(t)
	h := testenv.Home(t)
	t.Setenv("HOME", h)
	for _, b := range []string{"python", "prog-O2"} {
		if r := runGprobe("-x", bins[b], "-D", "%*"); r.Code != 0 {
			t.Fatal(r)
		}
	}
	for _, def := range []string{"%sdt_python:line", "%tick", "%sdt_gprobe_test:mem"} {
		want, got := perf.LiveIn(h, "-D", def), runGprobe("-D", def)
		if !same(want, got) || got.Code != 0 {
			t.Errorf("-D %s after gprobe -x:\ngprobe: %s\nperf:   %s", def, got, want)
		}
	}
}

// TestSDTInstalledAgainstPerf adds SDT events for real, with perf and then
// with gprobe, and wants the same report, the same -l listing and the same
// deletion report; everything is removed at the end.
func TestSDTInstalledAgainstPerf(t *testing.T) {
	perf := testenv.RequirePerf(t)
	testenv.Tracefs(t)
	bins := sdtBinaries(t)
	h := testenv.Home(t)
	t.Setenv("HOME", h)
	t.Cleanup(func() { runGprobe("-q", "-d", "sdt_python:*", "-d", "sdt_libstdcxx:*") })
	adds := [][]string{
		{"-x", bins["python"], "-a", "%gc__start", "-a", "sdt_python:gc__done"},
		{"-x", bins["libstdc++"], "-a", "sdt_libstdcxx:*"},
	}
	var perfAdded, perfList, perfDel []result
	for _, a := range adds {
		perfAdded = append(perfAdded, perf.LiveIn(h, a...))
	}
	perfList = append(perfList, perf.LiveIn(h, "-l", "sdt_*"))
	perfDel = append(perfDel, perf.LiveIn(h, "-d", "sdt_python:*", "-d", "sdt_libstdcxx:*"))
	for i, a := range adds {
		if got := runGprobe(a...); !same(perfAdded[i], got) || got.Code != 0 {
			t.Errorf("%s:\ngprobe: %s\nperf:   %s", strings.Join(a, " "), got, perfAdded[i])
		}
	}
	if got := runGprobe("-l", "sdt_*"); !same(perfList[0], got) || strings.Count(got.Stdout, "\n") != 5 {
		t.Errorf("-l:\ngprobe: %s\nperf:   %s", got, perfList[0])
	}
	if got := runGprobe("-d", "sdt_python:*", "-d", "sdt_libstdcxx:*"); !same(perfDel[0], got) {
		t.Errorf("-d:\ngprobe: %s\nperf:   %s", got, perfDel[0])
	}
	if ue, _ := os.ReadFile("/sys/kernel/tracing/uprobe_events"); strings.Contains(string(ue), "sdt_python/") || strings.Contains(string(ue), "sdt_libstdcxx/") {
		t.Errorf("left behind:\n%s", ue)
	}
}

// TestSDTUntrustedCache: a build-id cache another user owns is not read
// (gprobe runs as root): the markers it lists are not found, -v says why,
// and --cache -l refuses it with the reason.
func TestSDTUntrustedCache(t *testing.T) {
	perf := testenv.RequirePerf(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the cache to another user")
	}
	bins := sdtBinaries(t)
	h := testenv.Home(t)
	if r := perf.CommandIn(h, "buildid-cache", "--add", bins["python"]); r.Code != 0 {
		t.Fatal(r)
	}
	t.Setenv("HOME", h)
	if r := runGprobe("-D", "%sdt_python:line"); r.Code != 0 {
		t.Fatalf("the cache as perf made it: %s", r)
	}
	if err := os.Chown(filepath.Join(h, ".debug"), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if r := runGprobe("-D", "%sdt_python:line"); r.Code != exitENOENT || r.Stdout != "" {
		t.Errorf("another user's cache: %s", r)
	}
	if r := runGprobe("-v", "-D", "%sdt_python:line"); !strings.Contains(r.Stderr, "owned by uid 65534") {
		t.Errorf("-v does not say why: %s", r)
	}
	if r := runGprobe("--cache", "-l"); r.Code == 0 || !strings.Contains(r.Stderr, "another user could change it") {
		t.Errorf("--cache -l: %s", r)
	}
	// With -x the binary itself is read; the cache is neither read nor
	// written.
	if r := runGprobe("-x", bins["python"], "-D", "%sdt_python:line"); r.Code != 0 {
		t.Errorf("-x: %s", r)
	}
}
