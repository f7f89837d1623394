package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gprobe/gprobe/internal/qemu"
	"github.com/gprobe/gprobe/internal/testenv"
)

// gprobe latency hung up on, on Debian's 6.12 kernel under qemu (hist
// triggers and synthetic events: this machine's kernel has neither):
// SIGHUP and SIGQUIT end it as SIGINT does, with everything it installed
// removed; SIGKILL leaves it all, which gprobe cleanup then finds (by the
// ledger, and again by names alone with the ledger deleted) and removes.

func hangupScript() string {
	return `T=/sys/kernel/tracing
left() { echo "left: k=[$(cat $T/kprobe_events)] u=[$(cat $T/uprobe_events)] s=[$(cat $T/synthetic_events)] d=[$(cat $T/dynamic_events)] i=[$(ls $T/instances)] t=[$(grep -hv '^#' $T/events/*/*/trigger)]"; }
# start: gprobe latency in the background on a sleeper in its second,
# long sleep, with its triggers set.
start() {
	rm -f /tmp/started
	gprobe latency hrtimer_nanosleep -- sh -c ': > /tmp/started; exec /root/sleeper 1 20000 5000000' &
	P=$!
	while [ ! -e /tmp/started ]; do usleep 100000; done
	until grep -qs onmatch $T/instances/gprobe-latency-$P/events/gprobe_latency/hrtimer_nanosleep__return/trigger; do usleep 100000; done
	usleep 1000000
}
for SIG in HUP QUIT; do
	echo "== sig$SIG"
	start
	kill -$SIG $P
	wait $P; echo "status $?"
	killall sleeper 2>/dev/null
	ls /run/gprobe
	left
done
for HOW in ledger names; do
	echo "== kill-$HOW"
	start
	kill -KILL $P
	wait $P; echo "status $?"
	killall sleeper 2>/dev/null
	echo "pid $P"
	[ $HOW = names ] && rm /run/gprobe/$P
	gprobe cleanup -n; echo "status $?"
	gprobe cleanup; echo "status $?"
	ls /run/gprobe
	left
done
echo "== nothing"
gprobe cleanup; echo "status $?"
echo "== dmesg"
dmesg | grep -E 'cut here|WARNING:|BUG:|Oops' || true
`
}

func TestQemuLatencyHangup(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a kernel under qemu")
	}
	k := qemu.Linux612
	qemu.Require(t, k)
	sleeper := testenv.BuildC(t, "gcc", "testdata/latency/sleeper.c", "sleeper", "-static", "-O0", "-g")
	prog, err := os.ReadFile(sleeper)
	if err != nil {
		t.Fatal(err)
	}
	res, err := qemu.Run(context.Background(), qemu.Options{
		Kernel:  k,
		Script:  hangupScript(),
		Files:   map[string][]byte{"/root/sleeper": prog},
		Timeout: 5 * time.Minute,
	})
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
	for _, sig := range []string{"HUP", "QUIT"} {
		out := steps["sig"+sig]
		// The command got SIGTERM (143); its long sleep's entry has no
		// return.
		if !strings.Contains(out, "status 143\n") {
			t.Errorf("SIG%s: want status 143:\n%s", sig, out)
		}
		if rows := rowsOf(out); len(rows) != 1 || rows[0] != "hrtimer_nanosleep 1 1 0" {
			t.Errorf("SIG%s: rows %q, want the one measured call:\n%s", sig, rows, out)
		}
		if !strings.HasSuffix(out, "\n"+guestLeftEmpty+"\n") {
			t.Errorf("SIG%s left something (ledger or tracefs):\n%s", sig, out)
		}
	}
	for _, how := range []string{"ledger", "names"} {
		out := steps["kill-"+how]
		m := regexp.MustCompile(`(?m)^pid (\d+)$`).FindStringSubmatch(out)
		if m == nil || !strings.Contains(out, "status 137\n") {
			t.Fatalf("kill-%s: no SIGKILLed gprobe:\n%s", how, out)
		}
		pid := m[1]
		// What -n lists: by the ledger, the process and everything; by
		// names, the process's instance (with its triggers) and
		// synthetic event, and the probes apart.
		want := fmt.Sprintf("gprobe latency (pid %s, no longer running) left kprobe gprobe_latency/hrtimer_nanosleep, kprobe gprobe_latency/hrtimer_nanosleep__return, synthetic event gprobe_latency_%s, instance gprobe-latency-%s, 5 hist triggers\n", pid, pid, pid)
		if how == "names" {
			want = fmt.Sprintf("gprobe latency (pid %s, no longer running) left instance gprobe-latency-%s, synthetic event gprobe_latency_%s, 5 hist triggers\n", pid, pid, pid) +
				"probes of gprobe latency that no running gprobe uses: kprobe gprobe_latency/hrtimer_nanosleep, kprobe gprobe_latency/hrtimer_nanosleep__return\n"
		}
		if !strings.Contains(out, want+"status 0\n") {
			t.Errorf("kill-%s: cleanup -n should list\n%s:\n%s", how, want, out)
		}
		for _, removed := range []string{"instance gprobe-latency-" + pid, "synthetic event gprobe_latency_" + pid,
			"kprobe gprobe_latency/hrtimer_nanosleep\n", "kprobe gprobe_latency/hrtimer_nanosleep__return\n"} {
			if !strings.Contains(out, "removed "+removed) {
				t.Errorf("kill-%s: cleanup did not remove %s:\n%s", how, removed, out)
			}
		}
		if n := strings.Count(out, "removed trigger "); n < 5 {
			t.Errorf("kill-%s: %d triggers removed, want 5:\n%s", how, n, out)
		}
		if !strings.HasSuffix(out, "status 0\n"+guestLeftEmpty+"\n") {
			t.Errorf("kill-%s: cleanup failed or left something:\n%s", how, out)
		}
	}
	if out := steps["nothing"]; out != "gprobe cleanup: nothing left by gprobe processes that no longer run\nstatus 0\n" {
		t.Errorf("cleanup with nothing to do:\n%s", out)
	}
}
