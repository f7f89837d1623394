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
	r, err := a.open(c, a.resolveOptions(c, false))
	if err != nil {
		fmt.Fprintln(a.stderr, err)
		fmt.Fprintln(a.stderr, trailer)
		return exitENOENT
	}
	defer r.Close()
	funcs, err := r.Exits(&p.Point)
	if err != nil {
		return a.resolveFailed(c, err, trailer)
	}
	for _, f := range funcs {
		fmt.Fprint(a.stdout, f.String())
	}
	return exitOK
}
