package khist

import (
	"errors"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/emit/bootparam"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
)

// TestBootConfig: the boot-time setup is the session's, in the order the
// kernel needs (the synthetic event before the trigger that fires it, the
// entry's variable before the return's use of it), in the group kprobes.
func TestBootConfig(t *testing.T) {
	e, r := kprobes("vfs_read")
	cfg, err := BootConfig(e, r, "comm")
	if err != nil {
		t.Fatal(err)
	}
	text, err := cfg.Render()
	if err != nil {
		t.Fatal(err)
	}
	want := `ftrace.event.synthetic.gprobe_latency_vfs_read.fields = 'u64 ns_plus1', 'int pid', 'char comm[]'
ftrace.event.synthetic.gprobe_latency_vfs_read.actions = 'hist:keys=comm,ns_plus1.log2:vals=hitcount,ns_plus1:mx=ns_plus1:onmax($mx).save(pid):size=2048', 'hist:keys=comm,ns_plus1.log2:mn=-(ns_plus1):onmax($mn).save(pid):size=2048'
ftrace.event.kprobes.vfs_read.probes = 'vfs_read+0'
ftrace.event.kprobes.vfs_read.actions = 'hist:keys=common_pid.execname:ts0=common_timestamp:size=2048'
ftrace.event.kprobes.vfs_read__return.probes = 'vfs_read%return comm=$comm:string'
ftrace.event.kprobes.vfs_read__return.actions = 'hist:keys=common_pid.execname:size=2048', 'hist:keys=common_pid.execname:lat1=common_timestamp-$ts0+1:onmatch(kprobes.vfs_read).trace(gprobe_latency_vfs_read,$lat1,common_pid,comm):size=2048'
`
	if text != want {
		t.Errorf("got:\n%s\nwant:\n%s", text, want)
	}
	// The same triggers as a run-time session's, but for the group.
	run := (&session{cfg: Config{By: "comm"}, entry: e, ret: r[0], synth: BootSynth("vfs_read")}).triggerSpecs()
	var got []string
	for _, ev := range cfg.Events {
		got = append(got, ev.Actions...)
	}
	for i, tr := range run {
		if strings.ReplaceAll(tr.spec, Group+".", bootparam.BootconfigGroup+".") != got[i] {
			t.Errorf("trigger %d: boot %q, run time %q", i, got[i], tr.spec)
		}
	}

	u := probe.Probe{Kind: probe.Uprobe, Event: "work", Target: probe.Location{Path: "/bin/x", Offset: 0x10}}
	ur := u
	ur.Return, ur.Event = true, "work__return"
	if _, err := BootConfig(u, []probe.Probe{ur}, ""); !errors.Is(err, ErrConfig) {
		t.Errorf("uprobes: %v", err)
	}
	// Probes on the return instructions (a Go function's) are not a
	// kretprobe.
	ri := r[0]
	ri.Return = false
	if _, err := BootConfig(e, []probe.Probe{ri, ri}, ""); !errors.Is(err, ErrConfig) {
		t.Errorf("return-instruction probes: %v", err)
	}
	if _, err := BootConfig(e, r, "cpu"); !errors.Is(err, ErrConfig) {
		t.Errorf("--by cpu: %v", err)
	}
}

// TestBootReportMissing: without the boot-time setup's histograms, the
// report is ErrNoBootReport, saying what to boot with; FUNC@SRC names
// FUNC's entry event.
func TestBootReportMissing(t *testing.T) {
	res, err := BootReport(tracefs.At(t.TempDir()), "vfs_read@fs/read_write.c", "")
	if res != nil || !errors.Is(err, ErrNoBootReport) || !errors.Is(err, tracefs.ErrNotFound) ||
		!strings.HasPrefix(err.Error(), "no boot-time latency measurement of vfs_read here (") ||
		!strings.HasSuffix(err.Error(), "): boot with the config gprobe latency --bootconfig prints") {
		t.Errorf("BootReport = %v, %v", res, err)
	}
}
