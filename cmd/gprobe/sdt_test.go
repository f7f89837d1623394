package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

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
// semaphore up.
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
	ps, err := r.Probes(sdt.Point{Group: "sdt_python", Event: "gc__start"}, python311)
	if err != nil || len(ps) != 1 || !ps[0].Target.HasRefCtr {
		t.Fatalf("%+v %v", ps, err)
	}
	withSem := ps[0].String()
	noSem := ps[0]
	noSem.Target.HasRefCtr = false
	gprobe := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("gprobe %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { exec.Command(bin, "-q", "-d", "sdt_python:gc__start").Run() })

	record := func(def string, n2, n1 int) []string {
		t.Helper()
		gprobe("add", def)
		defer gprobe("-d", "sdt_python:gc__start")
		out := filepath.Join(dir, "trace.dat")
		gprobe("record", "-e", "sdt_python:gc__start", "-o", out, "--", python311, "-S", "-I", script,
			strconv.Itoa(n2), strconv.Itoa(n1))
		rep, err := exec.Command("trace-cmd", "report", "-i", out).CombinedOutput()
		if err != nil {
			t.Fatalf("trace-cmd report: %v\n%s", err, rep)
		}
		var gens []string
		for _, m := range regexp.MustCompile(`gc__start:\s+\(4287f3\) arg1=(-?\d+)`).FindAllStringSubmatch(string(rep), -1) {
			gens = append(gens, m[1])
		}
		return gens
	}

	const n2, n1 = 37, 5
	gens := record(withSem, n2, n1)
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
	if g := record(noSem.String(), n2, n1); len(g) != 0 {
		t.Errorf("without the semaphore the marker fired %d times", len(g))
	}
}
