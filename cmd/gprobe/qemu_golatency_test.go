package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/internal/qemu"
	"github.com/gprobe/gprobe/internal/testenv"
)

// gprobe latency on a Go program, in Debian's 6.12 kernel under qemu (this
// machine's kernel has no hist triggers): testdata/goprogs/recurse, built
// static, whose goroutines call main.work (a sleep) once each after
// recursing through main.descend. gprobe probes a Go function's returns on
// its return instructions and keys the calls by goroutine: the program
// lives, where a uretprobe would kill it, and the kernel's count agrees
// with a recording of the same workload.

// goLatencyWorkload: 16 goroutines, 100 deep, then a 20 ms sleep each;
// the program's words go to a file, not into gprobe's report.
const goLatencyWorkload = "/root/recurse 16 100 20000 >> /tmp/recurse.out"

func goLatencyScript() string {
	return `T=/sys/kernel/tracing
left() { echo "left: k=[$(cat $T/kprobe_events)] u=[$(cat $T/uprobe_events)] s=[$(cat $T/synthetic_events)] d=[$(cat $T/dynamic_events)] i=[$(ls $T/instances)] t=[$(grep -hv '^#' $T/events/*/*/trigger)]"; }
W="` + goLatencyWorkload + `"
echo "== go-latency"
gprobe latency --json -x /root/recurse main.work -- sh -c "$W" > /tmp/golatency.json; echo "status $?"
left
echo "== go-text"
gprobe latency -x /root/recurse main.work -- sh -c "$W"; echo "status $?"
left
echo "== go-record"
gprobe -x /root/recurse -q -a main.work -a 'main.work%return'; echo "status $?"
gprobe record -e 'probe_recurse:*' -o /tmp/go.dat -- sh -c "$W"; echo "status $?"
cat /tmp/recurse.out
gprobe analyze --json /tmp/go.dat > /tmp/goanalyze.json; echo "status $?"
gprobe -q -d 'probe_recurse:*'; echo "status $?"
left
echo "== go-descend"
gprobe latency -x /root/recurse main.descend -- /root/recurse 64 300 0; echo "status $?"
left
echo "== dmesg"
dmesg | grep -E 'cut here|WARNING:|BUG:|Oops' || true
`
}

func TestQemuGoLatency(t *testing.T) {
	k := qemu.Linux612
	qemu.Require(t, k)
	bin, err := os.ReadFile(testenv.BuildGo(t, testenv.GoProgram(t, "recurse"), "amd64"))
	if err != nil {
		t.Fatal(err)
	}
	steps, files := runLatencyGuest(t, k, goLatencyScript(), map[string][]byte{"/root/recurse": bin}, "/tmp/golatency.json", "/tmp/goanalyze.json")
	for name, out := range steps {
		// The command's status is gprobe's: 0 is the program exiting 0.
		for _, m := range regexp.MustCompile(`(?m)^status (\d+)$`).FindAllStringSubmatch(out, -1) {
			if m[1] != "0" {
				t.Errorf("step %s failed (status %s):\n%s", name, m[1], out)
			}
		}
	}
	row := func(name string) latency.Result {
		var rep struct {
			Lost    int64            `json:"lost_events"`
			Latency []latency.Result `json:"latency"`
		}
		if err := json.Unmarshal(files[name], &rep); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, files[name])
		}
		if len(rep.Latency) != 1 || rep.Lost != 0 {
			t.Fatalf("%s: want one row, nothing lost:\n%s", name, files[name])
		}
		return rep.Latency[0]
	}
	lat, ana := row("/tmp/golatency.json"), row("/tmp/goanalyze.json")
	t.Logf("latency: %+v\nanalyze: %+v", lat, ana)
	// Each of the 16 goroutines calls main.work once, which sleeps 20 ms
	// by the program's clock. The trace clock of a TCG guest on a busy
	// host can run several percent slower than that between two runs of
	// one boot (its TSC calibrated against a PIT that qemu emulates late):
	// 16 ms is the bound a mispaired call (a few µs) still fails.
	for _, r := range []latency.Result{lat, ana} {
		if r.Count != 16 || r.UnmatchedEntries != 0 || r.UnmatchedReturns != 0 || r.MinNs < 16e6 {
			t.Errorf("%s: %d calls (%d without return, %d without entry), shortest %d ns; want 16 of about 20 ms (16 ms at least), all paired",
				r.EntryEvent, r.Count, r.UnmatchedEntries, r.UnmatchedReturns, r.MinNs)
		}
	}
	if !strings.HasSuffix(lat.ReturnEvent, "main_work__retinsn") || !strings.HasSuffix(ana.ReturnEvent, "main_work__retinsn") {
		t.Errorf("return events %s and %s: want main_work's return instructions", lat.ReturnEvent, ana.ReturnEvent)
	}
	if rows := rowsOf(steps["go-text"]); len(rows) != 1 || !strings.HasPrefix(rows[0], "main.work 16 0 0") {
		t.Errorf("go-text: rows %q:\n%s", rows, steps["go-text"])
	}
	// The recursion under probes on every return instruction: the program
	// lives and says so; the kernel measures each goroutine's innermost
	// call (one timestamp per goroutine, the documented limit).
	d := steps["go-descend"]
	if !strings.Contains(d, "calls 19264\n") || !strings.Contains(d, "status 0\n") {
		t.Errorf("go-descend: the program did not finish:\n%s", d)
	}
	if rows := rowsOf(d); len(rows) != 1 || !strings.HasPrefix(rows[0], "main.descend ") {
		t.Errorf("go-descend: rows %q:\n%s", rows, d)
	}
}
