package main

import (
	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/perfprobe"
	"github.com/gprobe/gprobe/resolve"
)

// The kinds perf probe 6.1 does not write: --fprobe (f:), --tracepoint
// (t:) and --event (e:) with -D or -a. See docs/modern-kernels.md.

// dynamicMode reports whether -D/-a define one of those kinds.
func dynamicMode(c *cli.Context) bool {
	return boolean(c, "fprobe") || boolean(c, "tracepoint") || str(c, "event") != ""
}

// resolveDynamic resolves defs in the mode c selects, each a PROBEDEF
// (--fprobe, --tracepoint) or an eprobe's ARGS (--event), into reqs (one
// each), checked with the features of the kernel they are for (a
// vmlinux's own README, else the running kernel's). It prints the failure
// and returns its exit status.
func (a *app) resolveDynamic(c *cli.Context, defs []string, trailer string, reqs []*install.Request) int {
	if str(c, "exec") != "" || str(c, "module") != "" {
		a.errf(c, "--fprobe, --tracepoint and --event probe the kernel (vmlinux), not -x or -m targets.\n%s\n", trailer)
		return exitUsage
	}
	d := resolve.Dynamic{Tracepoint: boolean(c, "tracepoint"), Event: str(c, "event"), Format: str(c, "format")}
	dd, err := d.Parse(defs)
	if text, st, ok := perfprobe.DynamicFailure(err, d.Event != "", trailer); ok {
		a.errf(c, "%s\n", text)
		return st
	} else if err != nil {
		return a.parseFailed(err, "-D")
	}
	host, hostKnown := tracefs.RunningFeatures()
	o := a.resolveOptions(c, true)
	o.Features, o.ImageFeatures, o.KernelBTFArgs = host, true, boolean(c, "kernel-btf-args")
	r, err := a.open(c, o)
	if err != nil {
		a.errf(c, "%v\n%s\n", err, trailer)
		return exitENOENT
	}
	defer r.Close()
	dps, err := dd.ResolveChecked(r, host, hostKnown)
	if text, refused := perfprobe.Refused(err, trailer); refused {
		a.errf(c, "%s\n", text)
		return exitEINVAL
	} else if err != nil {
		return a.resolveFailed(c, r, err, trailer)
	}
	for i, dp := range dps {
		reqs[i].Point, reqs[i].Args, reqs[i].Probes = dp.Point, dp.Args, []probe.Probe{dp.Probe}
	}
	return exitOK
}

// showDynamic is -D in the dynamic modes.
func (a *app) showDynamic(c *cli.Context, defs []string) int {
	reqs := make([]*install.Request, len(defs))
	for i := range reqs {
		reqs[i] = &install.Request{}
	}
	if st := a.resolveDynamic(c, defs, perfprobe.AddTrailer, reqs); st != exitOK {
		return st
	}
	var all []probe.Probe
	for _, r := range reqs {
		all = append(all, r.Probes...)
	}
	return a.printProbes(c, all, perfprobe.AddTrailer)
}
