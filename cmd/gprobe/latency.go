package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/report"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/clikit"
	"github.com/gprobe/gprobe/internal/perfprobe"
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
var latencyValueFlags = clikit.ValueFlags((&app{}).latencyCommand().Flags)

func (a *app) latencyCommand() *cli.Command {
	return &cli.Command{
		Name:      "latency",
		Usage:     "a function's latency histogram, counted in the kernel while a command runs (no recording)",
		ArgsUsage: "FUNC [-- CMD ARGS...]",
		Description: "Installs probes on FUNC's entry and return, ties them with hist triggers and a synthetic\n" +
			"event, runs CMD following it and its children (or everything with -a), then prints the\n" +
			"histogram as gprobe analyze prints latency and removes all it installed.",
		Flags:  perfprobe.LatencyFlags(),
		Action: func(c *cli.Context) error { return a.set(a.latency(c)) },
	}
}

// interspersed lets the latency command's flags follow FUNC, as they may
// in perf.
func interspersed(args []string) []string {
	return clikit.Interspersed(args, "latency", latencyValueFlags)
}

func (a *app) latencyFail(err error, status int) int {
	fmt.Fprintf(a.stderr, "gprobe latency: %v\n", err)
	return status
}

func (a *app) latency(c *cli.Context) int {
	fn, command, err := khist.Operands(c.Args().Slice())
	if err != nil {
		return a.latencyFail(err, exitUsage)
	}
	if c.Bool("bootconfig") || c.Bool("boot-report") {
		return a.latencyBoot(c, fn, command)
	}
	unit, err := report.ParseUnit(c.String("unit"))
	if err == nil {
		err = khist.CheckSettings(c.String("by"), command, c.Bool("all"))
	}
	if err != nil {
		return a.latencyFail(err, exitEINVAL)
	}
	sigs, stop := follow.Notify()
	defer stop()

	// Refuse before resolving or creating anything.
	fs, err := khist.Open()
	if err != nil {
		return a.latencyFail(err, perfprobe.LatencyStatus(err))
	}
	reportLeftovers(a.stderr, fs)
	entry, rets, st := a.resolveFunction(c, fn, fs)
	if st != exitOK {
		return st
	}
	res, err := khist.Run(khist.Config{
		Function: fn, Entry: entry, Returns: rets, Key: khist.KeyOf(entry), By: c.String("by"), All: c.Bool("all"), Command: command,
		Signals: sigs, Stdout: termsafe.Raw(a.stdout), Stderr: termsafe.Raw(a.stderr),
	})
	if res != nil {
		if perr := a.printLatency(c, res, unit); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		return a.latencyFail(err, perfprobe.LatencyStatus(err))
	}
	return res.ExitCode
}

// printLatency prints the histograms as analyze prints a recording's
// latency.
func (a *app) printLatency(c *cli.Context, res *khist.Result, unit report.Unit) error {
	return analyze.WriteLog2(a.stdout, "in-kernel histogram", int64(res.Hits), int64(res.Lost), res.Log2(), c.Bool("json"), unit)
}

// resolveFunction resolves FUNC's entry and returns (resolve.Function)
// with the features of fs's kernel (the running one's when fs is nil); a
// FUNC that does not parse is refused before anything is opened.
func (a *app) resolveFunction(c *cli.Context, fn string, fs *tracefs.FS) (entry probe.Probe, rets []probe.Probe, status int) {
	if _, _, err := spec.ParseFunction(fn); err != nil {
		return probe.Probe{}, nil, a.latencyFail(err, exitEINVAL)
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
	if entry, rets, err = resolve.Function(r, fn); err != nil {
		return probe.Probe{}, nil, a.latencyFail(err, perfprobe.ResolveStatus(err))
	}
	return entry, rets, exitOK
}

// latencyBoot is latency --bootconfig (print the boot-time setup measuring
// fn) and --boot-report (read what it counted): record/khist.
func (a *app) latencyBoot(c *cli.Context, fn string, command []string) int {
	if err := khist.CheckBoot(c.Bool("bootconfig"), c.Bool("boot-report"), command, c.Bool("all")); err != nil {
		return a.latencyFail(err, exitUsage)
	}
	by := c.String("by")
	if c.Bool("bootconfig") {
		entry, rets, st := a.resolveFunction(c, fn, nil)
		if st != exitOK {
			return st
		}
		text, err := khist.BootConfigText(entry, rets, by)
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
		return a.latencyFail(err, perfprobe.LatencyStatus(err))
	}
	res, err := khist.BootReport(fs, fn, by)
	if err == nil {
		err = a.printLatency(c, res, unit)
	}
	if err != nil {
		return a.latencyFail(err, perfprobe.LatencyStatus(err))
	}
	return exitOK
}
