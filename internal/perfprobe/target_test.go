package perfprobe

import (
	"fmt"
	"os"
	"testing"

	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/emit/probe"
)

// TestTarget: -x and -m before the first-path target; --target's process
// executable only without -x, -m, -k; the mount namespace's process.
func TestTarget(t *testing.T) {
	for _, c := range []struct {
		t    Target
		want string
	}{
		{Target{}, `"" "" false false 0 {  "" false 0 false}`},
		{Target{Exec: "/bin/a", FirstExec: "/bin/b"}, `"/bin/a" "" false true 0 {  "/bin/a" false 0 false}`},
		{Target{FirstExec: "/bin/b"}, `"/bin/b" "" false true 0 {  "/bin/b" true 0 false}`},
		{Target{FirstModule: "/m.ko"}, `"" "/m.ko" false false 0 { /m.ko "" false 0 false}`},
		{Target{TargetPID: "12"}, `"" "" true true 12 {  "" false 12 true}`},
		{Target{TargetPID: "12", TargetNS: "34", Vmlinux: "/k"}, `"" "" false false 34 {/k  "" false 34 false}`},
		{Target{TargetNS: "x"}, `"" "" false false -1 {  "" false -1 false}`},
		{Target{TargetNS: "0"}, `"" "" false false -1 {  "" false -1 false}`},
	} {
		o := c.t.Options()
		got := fmt.Sprintf("%q %q %v %v %d {%s %s %q %v %d %v}", c.t.ExecPath(), c.t.ModulePath(), c.t.ProcessExec(), c.t.User(), c.t.MountNS(),
			o.Vmlinux, o.Module, o.Exec, o.ExecAsGiven, o.MountNS, o.ProcessExec)
		if got != c.want {
			t.Errorf("%+v:\n%s\nwant %s", c.t, got, c.want)
		}
	}
}

// TestPoints: kernel places no vmlinux knows are named through the
// running kernel's symbols; a place without a symbol stays an address.
func TestPoints(t *testing.T) {
	p := Target{Vmlinux: "/nonexistent/vmlinux"}.Points()
	if _, ok := p.Kernel.(install.RunningSymbols); !ok {
		t.Fatalf("Kernel = %T, want install.RunningSymbols", p.Kernel)
	}
	k := &probe.Probe{Kind: probe.Kprobe, Target: probe.Location{Address: 0x1234}}
	if got := p.PointOf(k); got != "0x1234" {
		t.Errorf("PointOf(%+v) = %q", k.Target, got)
	}
}

// TestParseOptions: entry values after FUNC%return on a kernel and in a
// Go program (this test binary is one), not in another user binary.
func TestParseOptions(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for tg, want := range map[Target]bool{{}: true, {Vmlinux: "/k"}: true, {Exec: "/bin/true"}: false, {FirstExec: "/bin/true"}: false,
		{Exec: self}: true, {TargetPID: "1"}: false} {
		if got := tg.ParseOptions().EntryValues; got != want {
			t.Errorf("%+v: EntryValues %v, want %v", tg, got, want)
		}
	}
}
