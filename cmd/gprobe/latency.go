package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/report"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/record/khist"
	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/spec"
)

// latency: a function's latency histogram counted in the kernel while a
// command runs, printed as analyze prints a recording's (record/khist).

// latencyValueFlags are the latency command's flags that take a value:
// its flags may follow FUNC (interspersed).
var latencyValueFlags = map[string]bool{"by": true, "unit": true, "k": true, "vmlinux": true, "s": true, "source": true,
	"x": true, "exec": true, "m": true, "module": true}

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

// interspersed moves the latency command's positional arguments (FUNC)
// after its flags, so that flags may follow FUNC as they may in perf;
// what follows "--" (the command) is left as it is.
func interspersed(args []string) []string {
	at := -1
	for i, arg := range args[1:] {
		if arg == "latency" {
			at = i + 1
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "--" {
			return args
		}
	}
	if at < 0 {
		return args
	}
	out := append([]string{}, args[:at+1]...)
	var pos []string
	rest := args[at+1:]
	for i := 0; i < len(rest); i++ {
		arg := rest[i]
		if arg == "--" {
			return append(append(out, pos...), rest[i:]...)
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			pos = append(pos, arg)
			continue
		}
		out = append(out, arg)
		name := strings.TrimLeft(arg, "-")
		if latencyValueFlags[name] && !strings.Contains(arg, "=") && i+1 < len(rest) {
			i++
			out = append(out, rest[i])
		}
	}
	return append(out, pos...)
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

func (a *app) latency(c *cli.Context) int {
	args := c.Args().Slice()
	if len(args) == 0 {
		return a.latencyFail(errors.New("give the FUNC to measure (gprobe latency FUNC -- CMD ARGS...)"), exitUsage)
	}
	fn, command := args[0], args[1:]
	if c.Bool("bootconfig") || c.Bool("boot-report") {
		return a.latencyBoot(c, fn, command)
	}
	if len(command) > 0 {
		if command[0] != "--" {
			return a.latencyFail(fmt.Errorf("one FUNC at a time, then -- and the command (have %q)", strings.Join(args, " ")), exitUsage)
		}
		command = command[1:]
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
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)

	// Refuse before resolving or creating anything.
	fs, err := tracefs.Open()
	if err != nil {
		return a.latencyFail(err, exitErrno(err))
	}
	if err := khist.Supported(fs); err != nil {
		return a.latencyFail(err, exitEOPNOTSUPP)
	}
	entry, ret, st := a.resolveFunction(c, fn, fs)
	if st != exitOK {
		return st
	}
	res, err := khist.Run(khist.Config{
		Function: fn, Entry: entry, Return: ret, By: by, All: c.Bool("all"), Command: command,
		Signals: sigs, Stdout: a.stdout, Stderr: a.stderr,
	})
	if res != nil {
		if perr := a.printLatency(c, fn, res, unit); perr != nil && err == nil {
			err = perr
		}
	}
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

// resolveFunction resolves FUNC's entry and return as add resolves
// PROBEDEFs: one probe each, at the function itself (inlined copies have
// no return to probe).
func (a *app) resolveFunction(c *cli.Context, fn string, fs *tracefs.FS) (entry, ret probe.Probe, status int) {
	fail := func(err error) (probe.Probe, probe.Probe, int) {
		return probe.Probe{}, probe.Probe{}, a.latencyFail(err, exitEINVAL)
	}
	var specs [2]*spec.Probe
	for i, def := range []string{fn, fn + "%return"} {
		p, err := spec.ParseProbe(def)
		if err != nil {
			return fail(fmt.Errorf("%q: %v", fn, err))
		}
		pt := p.Point
		if !pt.HasFunction || pt.IsAbs || pt.Line != 0 || pt.Offset != 0 || pt.HasLazy || len(p.Args) > 0 || pt.Event != "" {
			return fail(fmt.Errorf("%q: want a function name (FUNC or FUNC@SRC)", fn))
		}
		specs[i] = p
	}
	t, err := a.openTarget(c, true)
	if err != nil {
		return probe.Probe{}, probe.Probe{}, a.latencyFail(err, exitENOENT)
	}
	defer t.Close()
	feat, _ := tracefs.RunningFeatures()
	if fs != nil {
		feat = fs.Features()
	}
	r, err := t.Resolver(a.tune(resolve.Options{NoInlines: true, MaxProbes: 1, Features: feat, Warn: a.warnFunc(c), SourcePrefix: str(c, "source")}))
	if err != nil {
		return probe.Probe{}, probe.Probe{}, a.latencyFail(err, exitENOENT)
	}
	var got [2]probe.Probe
	for i, sp := range specs {
		ps, err := r.Probes(sp)
		if err != nil {
			msg := err.Error()
			var re *resolve.Error
			if errors.As(err, &re) && re.Msg != "" {
				msg = re.Msg
			}
			msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
			return probe.Probe{}, probe.Probe{}, a.latencyFail(fmt.Errorf("%s: %s", fn, msg), resolveStatus(err))
		}
		if len(ps) != 1 {
			return fail(fmt.Errorf("%q is at %d places; latency needs one function", fn, len(ps)))
		}
		got[i] = ps[0]
	}
	return got[0], got[1], exitOK
}

// printLatency prints the histograms as analyze prints a recording's
// latency.
func (a *app) printLatency(c *cli.Context, fn string, res *khist.Result, unit report.Unit) error {
	var ls []latency.Log2
	for _, r := range res.Rows {
		l := latency.Log2{Function: fn, Group: r.Group, EntryEvent: res.EntryEvent, ReturnEvent: res.ReturnEvent,
			Entries: r.Entries, Returns: r.Returns, Uncertain: res.Lost > 0}
		for i, b := range r.Buckets {
			l.Buckets[i] = latency.Log2Bucket(b)
		}
		ls = append(ls, l)
	}
	rep := analyze.Log2Report("in-kernel histogram", int64(res.Hits), int64(res.Lost), ls)
	if c.Bool("json") {
		return report.JSON(a.stdout, rep)
	}
	return report.Text(a.stdout, rep, unit, 0)
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
		entry, ret, st := a.resolveFunction(c, fn, nil)
		if st != exitOK {
			return st
		}
		cfg, err := khist.BootConfig(entry, ret, by)
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
	if err := a.printLatency(c, fn, res, unit); err != nil {
		return a.latencyFail(err, exitErrno(err))
	}
	return exitOK
}
