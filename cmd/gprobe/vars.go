package main

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/perfprobe"
	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/spec"
	"github.com/urfave/cli/v2"
)

// -V / vars: the variables accessible at a probe point (perf's
// show_available_vars).

func (a *app) varsCommand() *cli.Command {
	return &cli.Command{
		Name: "vars", Usage: "show accessible variables at a probe point (same as -V)", ArgsUsage: "PROBEPOINT",
		Flags: perfprobe.VarsCommandFlags(),
		Action: func(c *cli.Context) error {
			return a.set(a.showVars(c, strings.Join(c.Args().Slice(), " ")))
		},
	}
}

// showVars implements -V: the variables accessible at a probe point, those
// --filter keeps.
func (a *app) showVars(c *cli.Context, desc string) int {
	const trailer = "  Error: Failed to show vars."
	p, err := spec.ParseProbe(desc)
	if err != nil {
		return a.parseFailed(err, "-V")
	}
	if len(p.Args) != 0 {
		// perf's option callback fails: message, then the usage.
		fmt.Fprintln(a.stderr, perfprobe.VarsArgs)
		a.perfOptions(a.stderr).UsageFor(true, "V", true)
		return exitUsage
	}
	filter := a.perf.Filter(cmp.Or(str(c, "filter"), perfprobe.DefaultVarFilter))
	flt, err := spec.ParseFilter(filter)
	if err != nil {
		fmt.Fprintln(a.stderr, err)
		return exitEINVAL
	}
	o := a.resolveOptions(c, true)
	o.Features, _ = tracefs.RunningFeatures()
	r, st := a.resolverOr(c, o, trailer)
	if r == nil {
		return st
	}
	defer r.Close()
	vls, err := r.AvailableVars(&p.Point, resolve.VarsOptions{Externs: boolean(c, "externs"), Range: boolean(c, "range")})
	if err != nil {
		a.unfetched(c, r)
		return a.resolveFailed(c, nil, err, trailer)
	}
	resolve.WriteVars(a.stdout, p.Point.String(), vls, flt.Match)
	return exitOK
}
