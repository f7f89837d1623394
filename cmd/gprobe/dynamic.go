package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/spec"
)

// The kinds perf probe 6.1 does not write: --fprobe (f:), --tracepoint
// (t:) and --event (e:) with -D or -a. See docs/modern-kernels.md.

func dynamicFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "fprobe", Usage: "define fprobe events (f:): 'FUNC [ARGS]' at a function's entry, 'FUNC%return [ARGS]' at its return"},
		&cli.BoolFlag{Name: "tracepoint", Usage: "define tracepoint probes (t:): 'TRACEPOINT [ARGS]', C expressions on the tracepoint's parameters"},
		&cli.StringFlag{Name: "event", Usage: "define an event probe (e:) on the trace event `SYSTEM/EVENT`; -D/-a give its ARGS ('FIELD[:TYPE] (STRUCT)FIELD->MEMBER ... [if FILTER]')"},
		&cli.StringFlag{Name: "format", Usage: "the --event's format description `FILE` (events/SYSTEM/EVENT/format), for another machine"},
		&cli.BoolFlag{Name: "kernel-btf-args", Usage: "write arguments in the kernel's BTF syntax (count, file->f_pos) for the kernel to resolve, instead of $argN fetches"},
	}
}

// dynamicMode reports whether -D/-a define one of those kinds.
func dynamicMode(c *cli.Context) bool {
	return boolean(c, "fprobe") || boolean(c, "tracepoint") || str(c, "event") != ""
}

// resolveDynamic resolves defs in the mode c selects, each a PROBEDEF
// (--fprobe, --tracepoint) or an eprobe's ARGS (--event), into one request
// each, checked with the features of the kernel they are for (a vmlinux's
// own README, else the running kernel's). It prints the failure and
// returns its exit status.
func (a *app) resolveDynamic(c *cli.Context, defs []string, trailer string) ([]*install.Request, int) {
	if str(c, "exec") != "" || str(c, "module") != "" {
		a.errf(c, "--fprobe, --tracepoint and --event probe the kernel (vmlinux), not -x or -m targets.\n%s\n", trailer)
		return nil, exitUsage
	}
	var specs []*spec.Probe
	var ev probe.EventID
	format := ""
	if e := str(c, "event"); e != "" {
		sys, name, ok := strings.Cut(e, "/")
		if !ok {
			sys, name, ok = strings.Cut(e, ":")
		}
		if !ok || sys == "" || name == "" || strings.ContainsAny(e, " \t") {
			a.errf(c, "--event %q: want SYSTEM/EVENT (sched/sched_switch).\n%s\n", e, trailer)
			return nil, exitUsage
		}
		ev = probe.EventID{System: sys, Name: name}
		var err error
		if format, err = eventFormat(c, ev); err != nil {
			a.errf(c, "%v\n%s\n", err, trailer)
			return nil, exitENOENT
		}
	} else {
		for _, d := range defs {
			p, err := spec.ParseProbeOpts(d, spec.Options{EntryValues: true})
			if err != nil {
				return nil, a.parseFailed(err, "-D")
			}
			specs = append(specs, p)
		}
	}
	t, err := a.openTarget(c, true)
	if err != nil {
		a.errf(c, "%v\n%s\n", err, trailer)
		return nil, exitENOENT
	}
	defer t.Close()
	host, hostKnown := tracefs.RunningFeatures()
	feat, known := t.Features()
	if !known {
		feat, known = host, hostKnown
	}
	r, err := t.Resolver(a.tune(resolve.Options{
		MaxProbes:      maxProbes(c),
		Features:       host,
		TargetFeatures: &feat,
		KernelBTFArgs:  boolean(c, "kernel-btf-args"),
		Warn:           a.warnFunc(c),
		SourcePrefix:   str(c, "source"),
	}))
	if err != nil {
		a.errf(c, "%v\n%s\n", err, trailer)
		return nil, exitENOENT
	}
	var reqs []*install.Request
	for i, d := range defs {
		var p probe.Probe
		req := &install.Request{}
		switch {
		case ev.System != "":
			p, err = r.Eprobe(ev, format, strings.Fields(d))
			req.Point, req.Args = "event "+ev.System+"/"+ev.Name, strings.Fields(d)
		case boolean(c, "tracepoint"):
			p, err = r.Tprobe(specs[i])
			req.Point, req.Args = "tracepoint "+specs[i].Point.String(), argsAsWritten(specs[i])
		default:
			p, err = r.Fprobe(specs[i])
			req.Point, req.Args = specs[i].Point.String(), argsAsWritten(specs[i])
		}
		if err != nil {
			return nil, a.resolveFailedOn(c, t, err, trailer)
		}
		// Nothing is printed or written that the kernel would refuse.
		if err := install.CheckDefinition(p, r.Arch(), feat, known); err != nil {
			a.errf(c, "The kernel would refuse this definition: %v\n%s\n", err, trailer)
			return nil, exitEINVAL
		}
		req.Probes = []probe.Probe{p}
		reqs = append(reqs, req)
	}
	return reqs, exitOK
}

func argsAsWritten(p *spec.Probe) []string {
	var out []string
	for _, x := range p.Args {
		out = append(out, x.String())
	}
	return out
}

// showDynamic is -D in the dynamic modes.
func (a *app) showDynamic(c *cli.Context, defs []string) int {
	reqs, st := a.resolveDynamic(c, defs, "  Error: Failed to add events.")
	if st != exitOK {
		return st
	}
	if boolean(c, "bootconfig") {
		var all []probe.Probe
		for _, r := range reqs {
			all = append(all, r.Probes...)
		}
		return a.printBootconfig(c, all)
	}
	for _, r := range reqs {
		for _, p := range r.Probes {
			fmt.Fprintln(a.stdout, p.String())
		}
	}
	return exitOK
}

// eventFormat reads the --event's format: --format FILE, else the running
// kernel's tracefs.
func eventFormat(c *cli.Context, ev probe.EventID) (string, error) {
	if f := str(c, "format"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("--format: %w", err)
		}
		return string(b), nil
	}
	fs, err := tracefs.Open()
	if err != nil {
		return "", fmt.Errorf("--event %s/%s: %w (give its format file with --format)", ev.System, ev.Name, err)
	}
	b, err := fs.EventFormat(ev.System, ev.Name)
	if err != nil {
		return "", fmt.Errorf("--event %s/%s: no such event on this kernel (%w)", ev.System, ev.Name, err)
	}
	return string(b), nil
}
