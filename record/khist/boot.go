package khist

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gprobe/gprobe/emit/bootparam"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
)

// A function's latency from the first instruction of boot: the session's
// probes, synthetic event and triggers written as Extra Boot Config
// (emit/bootparam), applied by the kernel at core_initcall_sync, before
// any user-space process. The differences from a session:
//
//   - the probes are in the group kprobes (the only group whose events
//     boot-time tracing defines), the return probe written FUNC%return;
//   - the synthetic event comes first: a hist trigger naming it fails
//     unless it is defined (trace_boot: Failed to apply hist trigger);
//     then the entry's triggers, which define ts0, then the return's;
//   - everything is in the top-level instance and counts every task: no
//     pid filters, nothing follows a command;
//   - nothing is removed: the histograms stay readable (BootReport)
//     until the triggers are removed by hand.
//
// The events are not enabled: a hist trigger counts its event's hits
// whether the event is enabled or not (the kernel feeds triggers through
// a scratch buffer), and the trace buffer stays free for other events.

// BootSynth is the synthetic event of a boot-time measurement of the
// function whose entry probe is the event entry.
func BootSynth(entry string) string { return "gprobe_latency_" + entry }

// BootConfig is the boot-time setup measuring the latency of the function
// whose entry and return probes (a kprobe and one kretprobe, as resolved)
// are given, keyed by by ("", "comm" or "pid"). Its event names are
// entry's event, that event with "__return", and BootSynth's.
func BootConfig(entry probe.Probe, rets []probe.Probe, by string) (*bootparam.Config, error) {
	if by != "" && by != "comm" && by != "pid" {
		return nil, fmt.Errorf("%w: --by %q: want comm or pid", ErrConfig, by)
	}
	entry, rets, err := probePair(entry, rets, "")
	if err != nil {
		return nil, err
	}
	if entry.Kind != probe.Kprobe || len(rets) != 1 || !rets[0].Return {
		return nil, fmt.Errorf("%w: boot-time tracing measures a kprobe and its kretprobe, not %s events", ErrConfig, entry.Kind)
	}
	ret := rets[0]
	g := bootparam.BootconfigGroup
	entry.Group, ret.Group = g, g
	ret.Event = entry.Event + "__return"
	synth := BootSynth(entry.Event)
	trig := triggerSpecs(by, "", g, entry.Event, ret.Event, synth)
	actions := func(file string) []string {
		var out []string
		for _, t := range trig {
			if t.file == file {
				out = append(out, t.spec)
			}
		}
		return out
	}
	c := &bootparam.Config{Events: []bootparam.Event{
		{System: "synthetic", Name: synth, Fields: synthFields, Actions: actions(eventFile("synthetic", synth))},
		{System: g, Name: entry.Event, Probes: []probe.Probe{entry}, Actions: actions(eventFile(g, entry.Event))},
		{System: g, Name: ret.Event, Probes: []probe.Probe{ret}, Actions: actions(eventFile(g, ret.Event))},
	}}
	if _, err := c.Render(); err != nil {
		return nil, err
	}
	return c, nil
}

// ErrNoBootReport: what BootReport reads is not there, or is not what a
// BootConfig setup counts.
var ErrNoBootReport = errors.New("no boot-time latency measurement")

// BootReport reads what a BootConfig setup counted since boot, for the
// function fn (FUNC[@SRC], as measured: the entry event is FUNC's name)
// and the key by it was written with, from root's top-level histograms.
// It removes nothing. Its errors wrap ErrNoBootReport.
func BootReport(root *tracefs.FS, fn, by string) (*Result, error) {
	entry, _, _ := strings.Cut(fn, "@")
	res, err := bootReport(root, entry, by)
	if err != nil {
		return nil, &textError{err.Error(), errors.Join(err, ErrNoBootReport)}
	}
	return res, nil
}

func bootReport(root *tracefs.FS, entry, by string) (*Result, error) {
	g := bootparam.BootconfigGroup
	ret := entry + "__return"
	trig := triggerSpecs(by, "", g, entry, ret, BootSynth(entry))
	hists := map[string]string{}
	for _, t := range trig {
		if _, ok := hists[t.file]; ok {
			continue
		}
		text, err := root.ReadFile(histFile(t.file))
		if err != nil {
			return nil, fmt.Errorf("no boot-time latency measurement of %s here (%w): boot with the config gprobe latency --bootconfig prints", entry, err)
		}
		hists[t.file] = string(text)
	}
	res := &Result{Function: entry, EntryEvent: g + ":" + entry, ReturnEvent: g + ":" + ret}
	if err := counted(trig, hists, by, res); err != nil {
		if strings.Contains(err.Error(), "tables for") {
			return nil, fmt.Errorf("%w (was the config written with another --by?)", err)
		}
		return nil, err
	}
	return res, nil
}
