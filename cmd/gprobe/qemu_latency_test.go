package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/internal/qemu"
	"github.com/gprobe/gprobe/internal/testenv"
)

// gprobe latency for real, on Debian's 6.1 and 6.12 kernels booted under
// qemu (this machine's kernel has neither hist triggers nor synthetic
// events), one boot per kernel running every step. The workload
// (testdata/latency/sleeper.c) forks children that call work(), one
// nanosleep each, or nest(), a recursion: hrtimer_nanosleep is called
// once per work().
//
// Each step ends by listing what tracefs holds (probes, synthetic events,
// dynamic events, instances, triggers): it must be nothing.

// latencyWorkload: two children, each sleeping 10 x 20 ms, 2 x 40 ms and
// 2 x 150 ms: 28 calls in three groups, each in the middle of a log2
// bucket ([16.8, 33.6), [33.6, 67.1) and [134.2, 268.4) ms) with room for
// the guest's timer noise (TCG adds milliseconds, tens on a loaded
// machine), and each percentile's rank well inside a group: the median
// (14th) among the 20 short calls, the 90th percentile (26th) and above
// among the 4 long ones.
const (
	latencyWorkload = "/root/sleeper 2 20000 20000 20000 20000 20000 20000 20000 20000 20000 20000 40000 40000 150000 150000"
	latencyCalls    = 28
	guestLeftEmpty  = "left: k=[] u=[] s=[] d=[] i=[] t=[]"
)

func latencyScript() string {
	return `T=/sys/kernel/tracing
left() { echo "left: k=[$(cat $T/kprobe_events)] u=[$(cat $T/uprobe_events)] s=[$(cat $T/synthetic_events)] d=[$(cat $T/dynamic_events)] i=[$(ls $T/instances)] t=[$(grep -hv '^#' $T/events/*/*/trigger)]"; }
W="` + latencyWorkload + `"
echo "== latency"
gprobe latency --json hrtimer_nanosleep -- $W > /tmp/latency.json; echo "status $?"
left
echo "== record"
gprobe add -q hrtimer_nanosleep 'hrtimer_nanosleep%return'; echo "status $?"
gprobe record -e 'probe:*' -o /tmp/t.out -- $W; echo "status $?"
gprobe analyze --json /tmp/t.out > /tmp/analyze.json; echo "status $?"
gprobe analyze /tmp/t.out
gprobe -q -d 'probe:*'; echo "status $?"
left
echo "== by-comm"
GPROBE_COMM='a, ns_plus1: ~' gprobe latency hrtimer_nanosleep --by comm -- sh -c '/root/sleeper 2 20000; usleep 20000'; echo "status $?"
left
echo "== by-pid"
gprobe latency --by pid --unit ms hrtimer_nanosleep -- /root/sleeper 3 20000; echo "status $?"
left
echo "== fail"
gprobe latency hrtimer_nanosleep -- sh -c '/root/sleeper 1 20000; exit 3'; echo "status $?"
left
echo "== sigint"
gprobe latency hrtimer_nanosleep -- sh -c ': > /tmp/started; exec /root/sleeper 1 20000 5000000' &
P=$!
while [ ! -e /tmp/started ]; do usleep 100000; done
usleep 1000000
kill -INT $P
wait $P; echo "status $?"
killall sleeper 2>/dev/null
left
echo "== uprobe"
gprobe latency -x /root/sleeper work -- /root/sleeper 2 20000 60000; echo "status $?"
left
echo "== nest"
gprobe latency -x /root/sleeper nest -- /root/sleeper 1 -3; echo "status $?"
left
echo "== all"
gprobe latency -a hrtimer_nanosleep -- /root/sleeper 1 20000; echo "status $?"
left
echo "== all-sigint"
gprobe latency -a hrtimer_nanosleep &
P=$!
until grep -qs onmatch $T/instances/gprobe-latency-*/events/gprobe_latency/hrtimer_nanosleep__return/trigger; do usleep 100000; done
usleep 100000
/root/sleeper 1 20000
kill -INT $P
wait $P; echo "status $?"
left
echo "== dmesg"
dmesg | grep -E 'cut here|WARNING:|BUG:|Oops' || true
`
}

func TestQemuLatency(t *testing.T) {
	for _, k := range []*qemu.Kernel{qemu.Linux61, qemu.Linux612} {
		t.Run(k.Release, func(t *testing.T) {
			t.Parallel() // one vCPU each
			qemu.Require(t, k)
			sleeper := testenv.BuildC(t, "gcc", "testdata/latency/sleeper.c", "sleeper", "-static", "-O0", "-g")
			prog, err := os.ReadFile(sleeper)
			if err != nil {
				t.Fatal(err)
			}
			steps, files := runLatencyGuest(t, k, latencyScript(), map[string][]byte{"/root/sleeper": prog}, "/tmp/latency.json", "/tmp/analyze.json")
			checkLatencyAgainstRecord(t, steps, files)
			checkLatencySteps(t, steps)
		})
	}
}

// runLatencyGuest runs a latency script (steps "== NAME", each ending
// with left's listing of tracefs) in a guest of kernel k with files, and
// returns each step's output and the collected files. The guest's script
// must end well, the kernel must not complain (the "dmesg" step), and
// every step must leave tracefs empty.
func runLatencyGuest(t *testing.T, k *qemu.Kernel, script string, files map[string][]byte, collect ...string) (map[string]string, map[string][]byte) {
	t.Helper()
	res, err := qemu.Run(context.Background(), qemu.Options{Kernel: k, Script: script, Files: files, Collect: collect, Timeout: 6 * time.Minute})
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Output)
	}
	t.Logf("guest booted to the script in %v, ran in %v; output:\n%s", res.Boot, res.Elapsed, res.Output)
	if res.Status != 0 {
		t.Fatalf("guest script exit status %d", res.Status)
	}
	steps := guestSteps(res.Output)
	if d := steps["dmesg"]; d != "" {
		t.Errorf("the guest kernel complained:\n%s", d)
	}
	for name, out := range steps {
		if name != "" && name != "dmesg" && !strings.HasSuffix(out, guestLeftEmpty+"\n") {
			t.Errorf("step %s left something in tracefs:\n%s", name, out)
		}
	}
	return steps, res.Files
}

// checkLatencyAgainstRecord: on the same workload in the same boot, gprobe
// latency counts what gprobe record and analyze count, and its
// percentiles are within their bucket's width of analyze's.
func checkLatencyAgainstRecord(t *testing.T, steps map[string]string, files map[string][]byte) {
	for _, s := range []string{"latency", "record"} {
		st := regexp.MustCompile(`(?m)^status (\d+)$`).FindAllStringSubmatch(steps[s], -1)
		for _, m := range st {
			if m[1] != "0" {
				t.Fatalf("step %s failed:\n%s", s, steps[s])
			}
		}
		if len(st) == 0 {
			t.Fatalf("step %s did not run:\n%s", s, steps[s])
		}
	}
	row := func(name string) latency.Result {
		var rep struct {
			Format  string           `json:"format"`
			Lost    int64            `json:"lost_events"`
			Latency []latency.Result `json:"latency"`
		}
		if err := json.Unmarshal(files[name], &rep); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, files[name])
		}
		if len(rep.Latency) != 1 || rep.Latency[0].Function != "hrtimer_nanosleep" || rep.Lost != 0 {
			t.Fatalf("%s: want one hrtimer_nanosleep row, nothing lost:\n%s", name, files[name])
		}
		return rep.Latency[0]
	}
	lat, ana := row("/tmp/latency.json"), row("/tmp/analyze.json")
	t.Logf("latency: %+v\nanalyze: %+v", lat, ana)
	if lat.Count != latencyCalls || ana.Count != latencyCalls || lat.UnmatchedEntries != 0 || lat.UnmatchedReturns != 0 {
		t.Errorf("calls: latency %d, record+analyze %d, want %d each, all matched", lat.Count, ana.Count, latencyCalls)
	}
	var lb, ab uint64
	for _, b := range lat.Histogram {
		lb += b.Count
	}
	for _, b := range ana.Histogram {
		ab += b.Count
	}
	if lb != lat.Count || ab != ana.Count {
		t.Errorf("histograms hold %d and %d calls", lb, ab)
	}
	for _, q := range []struct {
		name     string
		lat, ana uint64
	}{{"p50", lat.P50Ns, ana.P50Ns}, {"p90", lat.P90Ns, ana.P90Ns}, {"p99", lat.P99Ns, ana.P99Ns}, {"p99.9", lat.P999Ns, ana.P999Ns}} {
		width := uint64(1) << (bits.Len64(q.ana) - 1) // of analyze's bucket
		if d := max(q.lat, q.ana) - min(q.lat, q.ana); d >= width {
			t.Errorf("%s: latency %d ns, record+analyze %d ns: %d apart, more than the bucket's %d", q.name, q.lat, q.ana, d, width)
		}
	}
}

// latencyRow matches a text report's row: FUNCTION [GROUP] COUNT NO-RETURN
// NO-ENTRY and the times.
var latencyRow = regexp.MustCompile(`(?m)^\s+(\S+)\s+(?:(.+?)\s+)?(\d+)\s+(\d+)\s+(\d+)(?:\s+[\d.]+){7}$`)

// rowsOf returns the report's rows as "FUNCTION GROUP COUNT NORET NOENTRY".
func rowsOf(out string) []string {
	var rows []string
	for _, m := range latencyRow.FindAllStringSubmatch(out, -1) {
		if m[1] == "FUNCTION" {
			continue
		}
		f := []string{m[1], m[2], m[3], m[4], m[5]}
		if m[2] == "" {
			f = append(f[:1], f[2:]...)
		}
		rows = append(rows, strings.Join(f, " "))
	}
	return rows
}

func checkLatencySteps(t *testing.T, steps map[string]string) {
	for _, c := range []struct {
		step   string
		status int
		rows   []string // FUNCTION GROUP COUNT NO-RETURN NO-ENTRY; a group "*" is any pid
	}{
		{"by-comm", 0, []string{"hrtimer_nanosleep a, ns_plus1: ~ 2 0 0", "hrtimer_nanosleep usleep 1 0 0"}},
		{"by-pid", 0, []string{"hrtimer_nanosleep * 1 0 0", "hrtimer_nanosleep * 1 0 0", "hrtimer_nanosleep * 1 0 0"}},
		{"fail", 3, []string{"hrtimer_nanosleep 1 0 0"}},
		// Interrupted in the child's second sleep: its entry has no return.
		{"sigint", 143, []string{"hrtimer_nanosleep 1 1 0"}},
		{"uprobe", 0, []string{"work 4 0 0"}},
		// nest(3): the innermost call is measured; the two outer ones
		// found the thread's timestamp taken (the documented limit).
		{"nest", 0, []string{"nest 1 2 2"}},
	} {
		out := steps[c.step]
		if !strings.Contains(out, fmt.Sprintf("status %d\n", c.status)) {
			t.Errorf("%s: want status %d:\n%s", c.step, c.status, out)
		}
		if !strings.HasPrefix(out, "in-kernel histogram: ") || !strings.Contains(out, ", 0 lost, complete\n") {
			t.Errorf("%s: no report header:\n%s", c.step, out)
		}
		got := rowsOf(out)
		if len(got) != len(c.rows) {
			t.Errorf("%s: rows %q, want %q:\n%s", c.step, got, c.rows, out)
			continue
		}
		for i, w := range c.rows {
			re := "^" + strings.ReplaceAll(regexp.QuoteMeta(w), `\*`, `\d+`) + "$"
			if !regexp.MustCompile(re).MatchString(got[i]) {
				t.Errorf("%s: row %q, want %q:\n%s", c.step, got[i], w, out)
			}
		}
	}
	// Every process: the workload's call and whatever else slept; without
	// a command, until SIGINT.
	for step, status := range map[string]string{"all": "status 0\n", "all-sigint": "status 130\n"} {
		rows := rowsOf(steps[step])
		if len(rows) != 1 || !strings.HasPrefix(rows[0], "hrtimer_nanosleep ") || !strings.Contains(steps[step], status) {
			t.Errorf("%s: rows %q, want one and %s:\n%s", step, rows, status, steps[step])
		} else if n, _ := strconv.Atoi(strings.Fields(rows[0])[1]); n < 1 {
			t.Errorf("%s: no call counted:\n%s", step, steps[step])
		}
	}
}
