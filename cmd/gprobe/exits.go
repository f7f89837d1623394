package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/resolve/spec"
)

// showExits implements --ret-insn -L FUNC: every exit of every instance
// of FUNC, the ones --ret-insn probes and the ones it refuses.
func (a *app) showExits(c *cli.Context, desc string) int {
	const trailer = "  Error: Failed to show exits."
	p, err := spec.ParseProbe(desc)
	if err != nil {
		return a.parseFailed(err, "-L")
	}
	r, st := a.resolverOr(c, a.resolveOptions(c, false), trailer)
	if r == nil {
		return st
	}
	defer r.Close()
	funcs, err := r.Exits(&p.Point)
	if err != nil {
		return a.resolveFailed(c, nil, err, trailer)
	}
	for _, f := range funcs {
		fmt.Fprint(a.stdout, f.String())
	}
	return exitOK
}
