package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/spec"
	"github.com/urfave/cli/v2"
)

// -V / vars: the variables accessible at a probe point (perf's
// show_available_vars).

// defaultVarFilter is perf's DEFAULT_VAR_FILTER.
const defaultVarFilter = "!__k???tab_* & !__crc_*"

func varsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "externs", Usage: "show external variables too"},
		&cli.BoolFlag{Name: "range", Usage: "show variables' location ranges in scope (with -V only)"},
		&cli.StringFlag{Name: "filter", Usage: "variable name `FILTER` (default \"" + defaultVarFilter + "\")"},
	}
}

func (a *app) varsCommand() *cli.Command {
	return &cli.Command{
		Name: "vars", Usage: "show accessible variables at a probe point (same as -V)", ArgsUsage: "PROBEPOINT",
		Flags: append(targetFlags(), append(varsFlags(), &cli.IntFlag{Name: "max-probes", Value: 128})...),
		Action: func(c *cli.Context) error {
			return a.set(a.showVars(c, strings.Join(c.Args().Slice(), " ")))
		},
	}
}

func (a *app) showVars(c *cli.Context, desc string) int {
	const trailer = "  Error: Failed to show vars."
	p, err := spec.ParseProbe(desc)
	if err != nil {
		return a.parseFailed(err, "-V")
	}
	if len(p.Args) != 0 {
		// perf's option callback fails: message, then the usage.
		fmt.Fprintln(a.stderr, "  Error: '--vars' doesn't accept arguments.")
		fmt.Fprintln(a.stderr)
		fmt.Fprint(a.stderr, usageText)
		return exitUsage
	}
	filter := defaultVarFilter
	if f := str(c, "filter"); f != "" {
		filter = f
	}
	flt, err := spec.ParseFilter(filter)
	if err != nil {
		fmt.Fprintf(a.stderr, "Filter parse error at %s\n", filter)
		return exitEINVAL
	}
	o := a.resolveOptions(c, true)
	o.Features, _ = tracefs.RunningFeatures()
	r, err := a.open(c, o)
	if err != nil {
		fmt.Fprintln(a.stderr, err)
		fmt.Fprintln(a.stderr, trailer)
		return exitENOENT
	}
	defer r.Close()
	vls, err := r.AvailableVars(&p.Point, resolve.VarsOptions{Externs: boolean(c, "externs"), Range: boolean(c, "range")})
	if err == nil && len(vls) == 0 {
		err = &resolve.Error{Err: resolve.ErrNotFound}
	}
	if err != nil {
		// perf: not found → "Failed to find the address", any other
		// failure → "Debuginfo analysis failed."; no DWARF at all ends
		// before the search, with open_debuginfo's message alone.
		msg := "Debuginfo analysis failed."
		switch {
		case errors.Is(err, resolve.ErrNoDebugInfo):
			msg = ""
		case errors.Is(err, resolve.ErrNotFound):
			msg = "Failed to find the address of " + p.Point.String()
		}
		var re *resolve.Error
		switch {
		case msg == "":
		case errors.As(err, &re):
			re.Msg = strings.TrimPrefix(re.Msg+"\n"+msg, "\n")
		default:
			err = &resolve.Error{Msg: err.Error() + "\n" + msg, Err: err}
		}
		a.unfetched(c, r)
		return a.resolveFailed(c, err, trailer)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Available variables at %s\n", p.Point.String())
	for _, vl := range vls {
		fmt.Fprintf(&b, "\t@<%s+%d>\n", vl.Symbol, vl.Offset)
		n := 0
		for _, v := range vl.Vars {
			name := v[strings.IndexByte(v, '\t')+1:]
			if flt.Match(name) {
				fmt.Fprintf(&b, "\t\t%s\n", v)
				n++
			}
		}
		if n == 0 {
			b.WriteString("\t\t(No matched variables)\n")
		}
	}
	fmt.Fprint(a.stdout, b.String())
	return exitOK
}

// intFlag returns an int flag set on this command or any parent, or the
// nearest default.
func intFlag(c *cli.Context, name string) int {
	if x := setIn(c, name); x != nil {
		return x.Int(name)
	}
	return c.Int(name)
}
