package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/report"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/clikit"
	"github.com/gprobe/gprobe/internal/termsafe"
	"github.com/gprobe/gprobe/record/follow"
	"github.com/gprobe/gprobe/record/khist"
	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/spec"
)

// latency: a function's latency histogram counted in the kernel while a
// command runs, printed as analyze prints a recording's (record/khist).

// latencyValueFlags are the latency command's flags that take a value:
// its flags may follow FUNC (interspersed).
var latencyValueFlags = map[string]bool{"by": true, "unit": true, "k": true, "vmlinux": true, "s": true, "source": true,
	"x": true, "exec": true, "m": true, "module": true, "symfs": true, "target-ns": true, "target": true}

func (a *app) latencyCommand() *cli.Command {
	return &cli.Command{
		Name:      "latency",
		Usage:     "a function's latency histogram, counted in the kernel while a command runs (no recording)",
		ArgsUsage: "FUNC [-- CMD ARGS...]",
		Description: "Installs probes on FUNC's entry and return, ties them with hist triggers and a synthetic\n" +
			"event, runs CMD following it and its children (or everything with -a), then prints the\n" +
			"histogram as gprobe analyze prints latency and removes all it installed.",
		Flags: append(latencyTargetFlags(),
			&cli.StringFlag{Name: "by", Usage: "split the histogram by `comm|pid`"},
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "count every process, not only CMD and its children (without CMD: until Ctrl-C)"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
			&cli.StringFlag{Name: "unit", Value: "us", Usage: "time `unit` of the text report: ns, us or ms"},
			&cli.BoolFlag{Name: "bootconfig", Usage: "print the Extra Boot Config (bootconfig -a) measuring FUNC from boot instead of measuring now"},
			&cli.BoolFlag{Name: "boot-report", Usage: "print what a --bootconfig measurement counted since boot"},
		),
		Action: func(c *cli.Context) error { return a.set(a.latency(c)) },
	}
}

// interspersed lets the latency command's flags follow FUNC, as they may
// in perf.
func interspersed(args []string) []string {
	return clikit.Interspersed(args, "latency", latencyValueFlags)
}

// latencyTargetFlags are the target flags but --no-inlines: latency always
// measures the function itself (an inlined copy has no return to probe).
func latencyTargetFlags() []cli.Flag {
	var out []cli.Flag
	for _, f := range targetFlags() {
		if f.Names()[0] != "no-inlines" {
			out = append(out, f)
		}
	}
	return out
}

func (a *app) latencyFail(err error, status int) int {
	fmt.Fprintf(a.stderr, "gprobe latency: %v\n", err)
	return status
}

// latencyOperands are FUNC and the command after --.
func (a *app) latencyOperands(c *cli.Context) (fn string, command []string, status int) {
	args := c.Args().Slice()
	if len(args) == 0 {
		return "", nil, a.latencyFail(errors.New("give the FUNC to measure (gprobe latency FUNC -- CMD ARGS...)"), exitUsage)
	}
	if len(args) > 1 && args[1] != "--" {
		return "", nil, a.latencyFail(fmt.Errorf("one FUNC at a time, then -- and the command (have %q)", strings.Join(args, " ")), exitUsage)
	}
	if len(args) > 1 {
		command = args[2:]
	}
	return args[0], command, exitOK
}

func (a *app) latency(c *cli.Context) int {
	fn, command, st := a.latencyOperands(c)
	if st != exitOK {
		return st
	}
	if c.Bool("bootconfig") || c.Bool("boot-report") {
		return a.latencyBoot(c, fn, command)
	}
	unit, err := report.ParseUnit(c.String("unit"))
	if err != nil {
		return a.latencyFail(err, exitEINVAL)
	}
	by := c.String("by")
	if by != "" && by != "comm" && by != "pid" {
		return a.latencyFail(fmt.Errorf("--by %q: want comm or pid", by), exitEINVAL)
	}
	if len(command) == 0 && !c.Bool("all") {
		return a.latencyFail(errors.New("nothing to follow: give a command after --, or -a"), exitEINVAL)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, follow.StopSignals...)
	defer signal.Stop(sigs)

	// Refuse before resolving or creating anything.
	fs, err := tracefs.Open()
	if err != nil {
		return a.latencyFail(err, exitErrno(err))
	}
	if err := khist.Supported(fs); err != nil {
		return a.latencyFail(err, exitEOPNOTSUPP)
	}
	reportLeftovers(a.stderr, fs)
	entry, rets, st := a.resolveFunction(c, fn, fs)
	if st != exitOK {
		return st
	}
	res, err := khist.Run(khist.Config{
		Function: fn, Entry: entry, Returns: rets, Key: khist.KeyOf(entry), By: by, All: c.Bool("all"), Command: command,
		Signals: sigs, Stdout: termsafe.Raw(a.stdout), Stderr: termsafe.Raw(a.stderr),
	})
	if res != nil {
		if perr := a.printLatency(c, res, unit); perr != nil && err == nil {
			err = perr
		}
	}
	return a.latencyStatus(res, err)
}

// printLatency prints the histograms as analyze prints a recording's
// latency.
func (a *app) printLatency(c *cli.Context, res *khist.Result, unit report.Unit) error {
	rep := analyze.Log2Report("in-kernel histogram", int64(res.Hits), int64(res.Lost), res.Log2())
	out := report.OutputText
	if c.Bool("json") {
		out = report.OutputJSON
	}
	return report.Write(a.stdout, rep, out, unit, 0)
}

// latencyStatus is the status of a measurement: the command's, or the
// error's.
func (a *app) latencyStatus(res *khist.Result, err error) int {
	switch {
	case err == nil:
		return res.ExitCode
	case errors.Is(err, khist.ErrConfig):
		return a.latencyFail(err, exitEINVAL)
	case errors.Is(err, khist.ErrUnsupported):
		return a.latencyFail(err, exitEOPNOTSUPP)
	}
	return a.latencyFail(err, exitErrno(err))
}

// resolveFunction resolves FUNC's entry and returns as add resolves
// PROBEDEFs: one entry probe, at the function itself (inlined copies have
// no return to probe), and its return probe, or a Go function's probes
// on its return instructions.
func (a *app) resolveFunction(c *cli.Context, fn string, fs *tracefs.FS) (entry probe.Probe, rets []probe.Probe, status int) {
	fail := func(err error) (probe.Probe, []probe.Probe, int) {
		return probe.Probe{}, nil, a.latencyFail(err, exitEINVAL)
	}
	entrySpec, retSpec, err := spec.ParseFunction(fn)
	if err != nil {
		return fail(err)
	}
	o := a.resolveOptions(c, true)
	o.NoInlines, o.MaxProbes = true, 1
	if fs != nil {
		o.Features = fs.Features()
	} else {
		o.Features, _ = tracefs.RunningFeatures()
	}
	r, err := a.open(c, o)
	if err != nil {
		return probe.Probe{}, nil, a.latencyFail(err, exitENOENT)
	}
	defer r.Close()
	var got [2][]probe.Probe
	for i, sp := range []*spec.Probe{entrySpec, retSpec} {
		ps, err := r.Probes(sp)
		if err != nil {
			msg := err.Error()
			var re *resolve.Error
			if errors.As(err, &re) && re.Msg != "" {
				msg = re.Msg
			}
			msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
			return probe.Probe{}, nil, a.latencyFail(fmt.Errorf("%s: %s", fn, msg), resolveStatus(err))
		}
		if len(ps) != 1 && (i == 0 || len(ps) == 0 || ps[0].Return) {
			return fail(fmt.Errorf("%q is at %d places; latency needs one function", fn, len(ps)))
		}
		got[i] = ps
	}
	return got[0][0], got[1], exitOK
}

// latencyBoot is latency --bootconfig (print the boot-time setup measuring
// fn) and --boot-report (read what it counted): record/khist.
func (a *app) latencyBoot(c *cli.Context, fn string, command []string) int {
	switch {
	case c.Bool("bootconfig") && c.Bool("boot-report"):
		return a.latencyFail(errors.New("--bootconfig prints a setup, --boot-report reads it: choose one"), exitUsage)
	case len(command) > 0 || c.Bool("all"):
		return a.latencyFail(errors.New("a boot-time measurement counts every task from boot: no command or -a"), exitUsage)
	}
	by := c.String("by")
	if c.Bool("bootconfig") {
		entry, rets, st := a.resolveFunction(c, fn, nil)
		if st != exitOK {
			return st
		}
		cfg, err := khist.BootConfig(entry, rets, by)
		var text string
		if err == nil {
			text, err = cfg.Render()
		}
		if err != nil {
			return a.latencyFail(err, exitEINVAL)
		}
		fmt.Fprint(a.stdout, text)
		return exitOK
	}
	unit, err := report.ParseUnit(c.String("unit"))
	if err != nil {
		return a.latencyFail(err, exitEINVAL)
	}
	fs, err := tracefs.Open()
	if err != nil {
		return a.latencyFail(err, exitErrno(err))
	}
	name, _, _ := strings.Cut(fn, "@")
	res, err := khist.BootReport(fs, name, by)
	if err != nil {
		return a.latencyFail(err, exitENOENT)
	}
	if err := a.printLatency(c, res, unit); err != nil {
		return a.latencyFail(err, exitErrno(err))
	}
	return exitOK
}
