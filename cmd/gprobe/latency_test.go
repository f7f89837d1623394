package main

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/internal/testenv"
)

// TestInterspersed: latency's flags may follow FUNC; the command after --
// is left alone, its own flags included.
func TestInterspersed(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"gprobe latency vfs_read --by comm -a -- dd -a", "gprobe latency --by comm -a vfs_read -- dd -a"},
		{"gprobe latency vfs_read -k /v --json --unit=ms -- x", "gprobe latency -k /v --json --unit=ms vfs_read -- x"},
		{"gprobe latency --by pid vfs_read -- x --by y", "gprobe latency --by pid vfs_read -- x --by y"},
		{"gprobe latency vfs_read -x /bin/p", "gprobe latency -x /bin/p vfs_read"},
		{"gprobe -q latency f --by pid", "gprobe -q latency --by pid f"},
		{"gprobe record -e x -- latency f --by pid", "gprobe record -e x -- latency f --by pid"},
		{"gprobe vfs_read latency", "gprobe vfs_read latency"},
	} {
		if got := strings.Join(interspersed(strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	// latencyValueFlags are exactly the command's flags that take a value.
	for _, f := range newApp(nil, nil).latencyCommand().Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			if latencyValueFlags[n] == isBool {
				t.Errorf("flag %s: takes a value %v, in latencyValueFlags %v", n, !isBool, latencyValueFlags[n])
			}
		}
	}
}

// TestLatencyUsage: bad input is one line and a non-zero status, before
// anything is looked at.
func TestLatencyUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"latency"}, exitUsage, "gprobe latency: give the FUNC to measure (gprobe latency FUNC -- CMD ARGS...)"},
		{[]string{"latency", "f", "g", "--", "true"}, exitUsage, `gprobe latency: one FUNC at a time, then -- and the command (have "f g -- true")`},
		{[]string{"latency", "f", "--by", "tid", "--", "true"}, exitEINVAL, `gprobe latency: --by "tid": want comm or pid`},
		{[]string{"latency", "f", "--unit", "s", "--", "true"}, exitEINVAL, `gprobe latency: unknown unit "s" (want ns, us or ms)`},
		{[]string{"latency", "f"}, exitEINVAL, "gprobe latency: nothing to follow: give a command after --, or -a"},
	} {
		r := runGprobe(c.args...)
		if r.Code != c.code || r.Stderr != c.want+"\n" || r.Stdout != "" {
			t.Errorf("%q: %s\nwant status %d and %q", c.args, r, c.code, c.want)
		}
	}
}

// TestLatencyRefuses: this machine's kernel has neither hist triggers nor
// synthetic events: one line, EOPNOTSUPP's status, nothing installed.
func TestLatencyRefuses(t *testing.T) {
	root := testenv.Tracefs(t)
	if _, err := os.Stat(root + "/synthetic_events"); err == nil {
		t.Skip("this kernel has synthetic events")
	}
	before, _ := os.ReadFile(root + "/uprobe_events")
	insts, _ := os.ReadDir(root + "/instances")
	r := runGprobe("latency", "-x", "/bin/true", "main", "--", "true")
	want := "gprobe latency: in-kernel latency histograms need hist triggers (CONFIG_HIST_TRIGGERS) and synthetic events (CONFIG_SYNTH_EVENTS): this kernel has no hist triggers and no synthetic events\n"
	if r.Code != exitEOPNOTSUPP || r.Stderr != want || r.Stdout != "" {
		t.Errorf("%s\nwant status %d and %q", r, exitEOPNOTSUPP, want)
	}
	after, _ := os.ReadFile(root + "/uprobe_events")
	insts2, _ := os.ReadDir(root + "/instances")
	if string(before) != string(after) || !reflect.DeepEqual(insts, insts2) {
		t.Errorf("tracefs changed: uprobe_events %q -> %q, instances %v -> %v", before, after, insts, insts2)
	}
}
