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

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/sdt"
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
	r := &sdt.Resolver{Options: sdt.Options{Immediates: true}}
	def := func(name string) probe.Probe {
		ps, err := r.Probes(sdt.Point{Group: "sdt_python", Event: name}, python311)
		if err != nil || len(ps) != 1 || !ps[0].Target.HasRefCtr {
			t.Fatalf("%s: %+v %v", name, ps, err)
		}
		return ps[0]
	}
	start, done := def("gc__start"), def("gc__done")
	gprobe := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("gprobe %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { exec.Command(bin, "-q", "-d", "sdt_python:gc__*").Run() })

	const n2, n1 = 37, 5
	out := filepath.Join(dir, "trace.dat")
	// record installs defs, records the script and returns each
	// gc__start's generation and the number of gc__done events.
	record := func(defs ...probe.Probe) (gens []string, dones int) {
		t.Helper()
		for _, d := range defs {
			gprobe("add", d.String())
		}
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

	gens, dones := record(start, done)
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
	noSem := start
	noSem.Target.HasRefCtr = false
	if g, _ := record(noSem); len(g) != 0 {
		t.Errorf("without the semaphore the marker fired %d times", len(g))
	}
}
