package analyze_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/analyze/report"
	"github.com/gprobe/gprobe/internal/testenv"
)

const tracefs = "/sys/kernel/tracing"

// needTools skips when something the real-recording tests need is missing,
// unless GPROBE_REQUIRE_PERF=1 (CI) makes that fatal.
func needTools(t *testing.T) {
	t.Helper()
	testenv.Tools(t, "trace-cmd", "gcc", "nm", "readelf")
	testenv.Tracefs(t) // mounted here on a fresh machine
}

// cleanupTracefs removes probes and instances whose names carry tag, in
// case record.sh was killed before its own trap ran.
func cleanupTracefs(t *testing.T, tag string) {
	t.Cleanup(func() {
		if ents, err := os.ReadDir(tracefs + "/instances"); err == nil {
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), "gprobe_analyze_"+tag+"_") {
					os.WriteFile(filepath.Join(tracefs, "instances", e.Name(), "tracing_on"), []byte("0"), 0)
					os.Remove(filepath.Join(tracefs, "instances", e.Name()))
				}
			}
		}
		b, _ := os.ReadFile(tracefs + "/uprobe_events")
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 0 {
				continue
			}
			_, ev, _ := strings.Cut(f[0], ":")
			if strings.HasPrefix(ev, "gpa_"+tag+"_") {
				if fh, err := os.OpenFile(tracefs+"/uprobe_events", os.O_WRONLY|os.O_APPEND, 0); err == nil {
					fh.WriteString("-:" + ev + "\n")
					fh.Close()
				}
			}
		}
	})
}

// recording runs testdata/prog/record.sh and returns its output directory;
// with datOnly it writes only v7-zstd.dat and gprobe.dat.
func recording(t *testing.T, name string, calls, objs, leaked, dbl int, bufKB string, datOnly bool) string {
	t.Helper()
	needTools(t)
	tag := fmt.Sprintf("%s%d", name, os.Getpid())
	cleanupTracefs(t, tag)
	dir := filepath.Join(t.TempDir(), tag)
	args := []string{"testdata/prog/record.sh", dir, strconv.Itoa(calls), strconv.Itoa(objs), strconv.Itoa(leaked), strconv.Itoa(dbl)}
	if bufKB != "" {
		args = append(args, bufKB)
	}
	// gprobe record records a second run of the program.
	gprobe := testenv.Gprobe(t)
	for attempt := 1; ; attempt++ {
		cmd := exec.Command("sh", args...)
		cmd.Env = append(os.Environ(), "GPROBE="+gprobe)
		if datOnly {
			cmd.Env = append(cmd.Env, "DAT_ONLY=1")
		}
		out, err := cmd.CombinedOutput()
		if err == nil {
			return dir
		}
		log, _ := os.ReadFile(filepath.Join(dir, "extract.log"))
		rlog, _ := os.ReadFile(filepath.Join(dir, "record.log"))
		// trace-cmd 3.1.6 has once failed to read back the file its own
		// extract had just written ("Cannot allocate memory" from
		// convert): the recording is made again, once.
		if attempt == 1 && strings.Contains(string(log), "trace-cmd: ") {
			t.Logf("record.sh failed in trace-cmd, recording again: %v\n%s", err, log)
			os.RemoveAll(dir)
			continue
		}
		t.Fatalf("record.sh: %v\n%s\n%s\n%s", err, out, log, rlog)
	}
}

// cachedRecording is recording with datOnly, kept under the test cache
// (keyed by the program, record.sh, the kernel and the arguments): a
// million real events take a minute to record.
func cachedRecording(t *testing.T, name string, calls, objs, leaked, dbl int, bufKB string) string {
	t.Helper()
	prog, err1 := os.ReadFile("testdata/prog/refprog.c")
	script, err2 := os.ReadFile("testdata/prog/record.sh")
	release, err3 := os.ReadFile("/proc/sys/kernel/osrelease")
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	root := testenv.Scratch("analyze")
	if root == "" {
		return recording(t, name, calls, objs, leaked, dbl, bufKB, true)
	}
	sum := sha256.Sum256([]byte(fmt.Sprint(string(prog), string(script), string(release), calls, objs, leaked, dbl, bufKB)))
	dir := filepath.Join(root, fmt.Sprintf("%x", sum[:12]))
	if _, err := os.Stat(filepath.Join(dir, "gprobe.dat")); err == nil {
		return dir
	}
	made := recording(t, name, calls, objs, leaked, dbl, bufKB, true)
	if log, _ := os.ReadFile(filepath.Join(made, "record.log")); !strings.Contains(string(log), "no events lost") {
		return made // a busy machine lost events: let the test say so, do not keep it
	}
	tmp, err := os.MkdirTemp(root, ".rec-*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"v7-zstd.dat", "gprobe.dat"} {
		b, err := os.ReadFile(filepath.Join(made, f))
		if err == nil {
			err = os.WriteFile(filepath.Join(tmp, f), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp) // another test process kept the same recording
	}
	return dir
}

// symRange returns [start, end) of a function symbol in the ELF binary.
func symRange(t *testing.T, bin, name string) (uint64, uint64) {
	t.Helper()
	s, _ := testenv.FuncSymbol(t, bin, name)
	return s.Value, s.Value + s.Size
}

// traceCmdCount counts the event lines `trace-cmd report` prints.
func traceCmdCount(t *testing.T, path string) int {
	t.Helper()
	out, err := exec.Command("trace-cmd", "report", path).Output()
	if err != nil {
		t.Fatalf("trace-cmd report %s: %v", path, err)
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, ": obj_") || strings.Contains(l, ": work") {
			n++
		}
	}
	return n
}

// TestRealRecordings records refprog's known behaviour through real
// uprobes and checks that every count is exact in every format trace-cmd
// and the kernel produce.
func TestRealRecordings(t *testing.T) {
	const calls, objs, leaked, dbl = 301, 41, 7, 5
	dir := recording(t, "real", calls, objs, leaked, dbl, "", false)

	files := []string{"v7-zstd.dat", "v7-none.dat", "v6.dat", "gprobe.dat", "trace.txt", "trace-tgid.txt", "trace-noirq.txt", "trace-lat.txt", "trace-pipe.txt", "report.txt"}
	if _, err := os.Stat(filepath.Join(dir, "v7-zlib.dat")); err == nil {
		files = append(files, "v7-zlib.dat")
	}
	w := refprog{calls: calls, objs: objs, leaked: leaked, dbl: dbl}
	w.aLo, w.aHi = symRange(t, filepath.Join(dir, "refprog"), "take_a")
	w.bLo, w.bHi = symRange(t, filepath.Join(dir, "refprog"), "take_b")
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			rep := analyzeFile(t, path)
			w.check(t, rep)
			if strings.HasSuffix(name, ".dat") {
				if n := traceCmdCount(t, path); n != w.events() {
					t.Errorf("trace-cmd report prints %d events, want %d", n, w.events())
				}
			}
		})
	}
	// All of them in one pass: each file's report is the one it has
	// alone, the total their sum.
	t.Run("all", func(t *testing.T) {
		var paths []string
		for _, name := range files {
			paths = append(paths, filepath.Join(dir, name))
		}
		spec := refSpec
		n := 0
		total, err := analyze.RunFiles(paths, analyze.Config{Refcount: &spec}, func(a *analyze.Analysis) error {
			w.check(t, a.Report())
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		r := total.Report()
		k := len(paths)
		rc := r.Refcount
		if n != k || r.Recordings != k || r.Events != int64(k*w.events()) || r.LostEvents != 0 || r.Latency[0].Count != uint64(k*w.work()) ||
			rc.Objects != k*w.objs || rc.Outstanding != k*w.leaked || rc.Underflows != k*w.dbl || rc.UnmatchedPuts != 0 {
			t.Errorf("total over %d files (%d reported): %d events, %d lost, %d calls, refcount %+v", k, n, r.Events, r.LostEvents, r.Latency[0].Count, *rc)
		}
	})
}

// TestLargeRecordingBoundedJSON records a leak hunt of the size users
// reported (850,000 events: 150,000 calls, 150,000 objects of which
// 50,000 stay referenced) and checks that the default JSON report stays
// under 100 KB with exact totals, that JSON lines stream every object, and
// that trace-cmd's v7 zstd file and gprobe record's agree.
func TestLargeRecordingBoundedJSON(t *testing.T) {
	const calls, objs, leaked = 75000, 150000, 50000
	dir := cachedRecording(t, "large", calls, objs, leaked, 0, "65536")
	w := refprog{calls: calls, objs: objs, leaked: leaked}
	gprobe := testenv.Gprobe(t)
	for _, name := range []string{"v7-zstd.dat", "gprobe.dat"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			out, err := exec.Command(gprobe, "analyze", "--json", "--refcount", "get=obj_get,put=obj_put", path).Output()
			if err != nil {
				t.Fatal(err)
			}
			if len(out) >= 100_000 {
				t.Errorf("JSON report is %d bytes, want under 100 KB", len(out))
			}
			var r struct {
				Events     int
				LostEvents int  `json:"lost_events"`
				Uncertain  bool `json:"lost_events_uncertain"`
				Latency    []struct{ Count int }
				Refcount   struct {
					Objects, Outstanding, Underflows int
					LeakSites                        int `json:"leak_sites"`
					Leaks                            []struct{ Count int }
					Sites                            []struct{ Objects int }
				}
			}
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatal(err)
			}
			rc := r.Refcount
			if r.Events != w.events() || r.LostEvents != 0 || r.Uncertain || len(r.Latency) != 1 || r.Latency[0].Count != w.work() ||
				rc.Objects != objs || rc.Outstanding != leaked || rc.Underflows != 0 || rc.LeakSites != 2 || len(rc.Leaks) != 20 ||
				len(rc.Sites) != 2 || rc.Sites[0].Objects+rc.Sites[1].Objects != leaked {
				t.Errorf("%d bytes of JSON: %+v", len(out), r)
			}
			cmd := exec.Command(gprobe, "analyze", "--json-lines", "--refcount", "get=obj_get,put=obj_put", path)
			pipe, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(pipe)
			sc.Buffer(nil, 1<<20)
			lines := 0
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), `{"type":"leak"`) {
					lines++
				}
			}
			if err := cmd.Wait(); err != nil || lines != leaked {
				t.Errorf("json lines: %v, %d leak lines, want %d", err, lines, leaked)
			}
		})
	}
}

// refprog is what testdata/prog/refprog.c does for given arguments.
type refprog struct {
	calls, objs, leaked, dbl int
	// Address ranges of take_a and take_b, when the binary is at hand.
	aLo, aHi, bLo, bHi uint64
}

func (w refprog) work() int {
	n := 0
	for i := 0; i < w.calls; i++ {
		n += i%3 + 1
	}
	return n
}

func (w refprog) events() int {
	return 2*w.work() + w.leaked*3 + w.dbl*3 + (w.objs-w.leaked-w.dbl)*4
}

var refSpec = func() refcount.Spec {
	s, err := refcount.ParseSpec("get=obj_get,put=obj_put")
	if err != nil {
		panic(err)
	}
	return s
}()

func analyzeFile(t *testing.T, path string) *report.Report {
	t.Helper()
	rec, err := analyze.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	spec := refSpec
	rep, err := analyze.Run(rec, analyze.Config{Refcount: &spec, RefSpec: "get=obj_get,put=obj_put"})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// check asserts every count of the report.
func (w refprog) check(t *testing.T, rep *report.Report) {
	t.Helper()
	if rep.Events != int64(w.events()) || rep.LostEvents != 0 || rep.Truncated {
		t.Errorf("events %d lost %d truncated %v, want %d 0 false", rep.Events, rep.LostEvents, rep.Truncated, w.events())
	}
	checkLatency(t, rep, w.work())
	rc := rep.Refcount
	if rc.Objects != w.objs || rc.Outstanding != w.leaked || rc.Underflows != w.dbl || rc.UseAfterPut != 0 || rc.Reused != 0 || rc.UnmatchedPuts != 0 || rc.Uncertain != 0 {
		t.Errorf("refcount %+v, want objects %d outstanding %d underflows %d and no other finding", *rc, w.objs, w.leaked, w.dbl)
	}
	var counts []int
	inA, inB := 0, 0
	for _, s := range rc.Sites {
		counts = append(counts, s.Objects)
		f := strings.Fields(s.Site)
		if len(f) != 2 || f[0] != "obj_get" || !strings.HasPrefix(f[1], "site=0x") {
			t.Fatalf("site %q, want obj_get site=0x...", s.Site)
		}
		a, err := strconv.ParseUint(f[1][7:], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case w.aHi == 0:
		case a >= w.aLo && a < w.aHi:
			inA += s.Objects
		case a >= w.bLo && a < w.bHi:
			inB += s.Objects
		default:
			t.Errorf("site %#x is neither in take_a nor take_b", a)
		}
	}
	if want := []int{(w.leaked + 1) / 2, w.leaked / 2}; fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("objects per leak site %v, want %v", counts, want)
	}
	if w.aHi != 0 && (inA != (w.leaked+1)/2 || inB != w.leaked/2) {
		t.Errorf("leaks by site: take_a %d take_b %d, want %d %d", inA, inB, (w.leaked+1)/2, w.leaked/2)
	}
	for _, l := range rc.Leaks {
		if l.Count != 1 || len(l.History) != 3 || l.FirstTS > l.LastTS {
			t.Errorf("leak %+v: want count 1 after get, get, put", l)
		}
	}
	if len(rc.UnderflowObjects) != w.dbl {
		t.Errorf("%d underflow objects listed, want %d", len(rc.UnderflowObjects), w.dbl)
	}
	for _, u := range rc.UnderflowObjects {
		if u.Count != -1 {
			t.Errorf("underflow object %+v: want count -1", u)
		}
	}
	// The text report renders and names the leak sites.
	var sb strings.Builder
	if err := report.Text(&sb, rep, report.Unit{Name: "us", Ns: 1000}, 5); err != nil || !strings.Contains(sb.String(), "LEAKS BY SITE") {
		t.Errorf("text report: %v\n%s", err, sb.String())
	}
}

func checkLatency(t *testing.T, rep *report.Report, work int) {
	t.Helper()
	if len(rep.Latency) != 1 {
		t.Fatalf("latency rows %+v, want one (work)", rep.Latency)
	}
	l := rep.Latency[0]
	if l.Function != "work" || !strings.HasSuffix(l.EntryEvent, "work") || !strings.HasSuffix(l.ReturnEvent, "work__return") {
		t.Errorf("pair %s %s -> %s", l.Function, l.EntryEvent, l.ReturnEvent)
	}
	if l.Count != uint64(work) || l.UnmatchedEntries != 0 || l.UnmatchedReturns != 0 {
		t.Errorf("work: count %d unmatched %d/%d, want %d 0/0", l.Count, l.UnmatchedEntries, l.UnmatchedReturns, work)
	}
	if !(l.MinNs <= l.P50Ns && l.P50Ns <= l.P90Ns && l.P90Ns <= l.P99Ns && l.P99Ns <= l.P999Ns && l.P999Ns <= l.MaxNs && l.MinNs <= l.MeanNs && l.MeanNs <= l.MaxNs) {
		t.Errorf("statistics out of order: %+v", l)
	}
	var sum uint64
	for i, b := range l.Histogram {
		sum += b.Count
		if b.HighNs != 2*b.LowNs && !(b.LowNs == 0 && b.HighNs == 1) {
			t.Errorf("bucket %d [%d,%d) is not a power-of-two range", i, b.LowNs, b.HighNs)
		}
		if i > 0 && l.Histogram[i-1].HighNs != b.LowNs {
			t.Errorf("bucket %d does not continue bucket %d", i, i-1)
		}
	}
	if sum != l.Count || l.Histogram[0].LowNs > l.MinNs || l.Histogram[len(l.Histogram)-1].HighNs <= l.MaxNs {
		t.Errorf("histogram %+v does not cover the %d calls in [%d, %d]", l.Histogram, l.Count, l.MinNs, l.MaxNs)
	}
}

// TestOverrunCounted records into a ring buffer far too small for the run,
// read only once the run is over (trace-cmd extract), so the kernel
// overwrites most events: the report's lost_events is the buffer's overrun
// count (the pages mark none of it), and with the events read it accounts
// for every event the program made: the count is exact, not uncertain.
func TestOverrunCounted(t *testing.T) {
	const calls, objs, leaked = 5000, 5000, 100
	dir := recording(t, "overrun", calls, objs, leaked, 0, "64", true)
	w := refprog{calls: calls, objs: objs, leaked: leaked}
	rep := analyzeFile(t, filepath.Join(dir, "v7-zstd.dat"))
	l := rep.Lost
	if l.BufferOverrun == 0 || rep.LostEvents != max(l.Markers, l.BufferOverrun)+l.BufferDropped+l.ProbeMissed || rep.LostEvents != rep.StatsLost {
		t.Errorf("lost_events %d, parts %+v, kernel stats %d", rep.LostEvents, l, rep.StatsLost)
	}
	if rep.Events+rep.LostEvents != int64(w.events()) {
		t.Errorf("%d events read + %d lost, the program made %d", rep.Events, rep.LostEvents, w.events())
	}
	if rep.LostUncertain {
		t.Errorf("the kernel counted every loss, yet the count is marked uncertain")
	}
}
