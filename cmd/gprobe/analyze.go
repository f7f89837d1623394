package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/folded"
	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/perfetto"
	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/analyze/report"
	"github.com/gprobe/gprobe/analyze/timeline"
	"github.com/gprobe/gprobe/analyze/trace"
)

// analyze: latency and refcount reports from a recording (issue 6).

func (a *app) analyzeCommand() *cli.Command {
	return &cli.Command{
		Name:      "analyze",
		Usage:     "latency and refcount reports from a recording",
		ArgsUsage: "[FILE] (trace.dat v6/v7, ftrace text; default trace.out)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "refcount", Usage: "`get=EV[,EV..],put=EV[,EV..][,key=FIELD][,new=EV][,free=EV]`: follow objects by key"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
			&cli.StringFlag{Name: "export-timeline", Usage: "write matched calls as Chrome trace-event JSON to `FILE` (Perfetto)"},
			&cli.StringFlag{Name: "export-perfetto", Usage: "write matched calls (and with --refcount the live objects) as a Perfetto protobuf trace to `FILE`"},
			&cli.StringFlag{Name: "folded", Usage: "write folded stacks of matched calls, weighted by self time in ns, to `FILE` (flamegraph.pl, inferno, speedscope)"},
			&cli.StringFlag{Name: "by", Usage: "split latency by `comm|pid`"},
			&cli.StringFlag{Name: "unit", Value: "us", Usage: "time `unit` of the text report: ns, us or ms"},
			&cli.StringFlag{Name: "probes", Usage: "`FILE` of probe definitions (uprobe_events/kprobe_events lines) to pair entry and return probes"},
			&cli.IntFlag{Name: "max-objects", Value: 20, Usage: "objects listed per section in the text report"},
		},
		Action: func(c *cli.Context) error { return a.set(a.analyze(c)) },
	}
}

func (a *app) analyzeFail(err error) int {
	fmt.Fprintf(a.stderr, "gprobe analyze: %v\n", err)
	if errors.Is(err, fs.ErrNotExist) {
		return exitENOENT
	}
	return exitEINVAL
}

func (a *app) analyze(c *cli.Context) int {
	if c.NArg() > 1 {
		return a.analyzeFail(fmt.Errorf("one recording at a time (got %d)", c.NArg()))
	}
	path := "trace.out"
	if c.NArg() == 1 {
		path = c.Args().First()
	}
	unit, err := report.ParseUnit(c.String("unit"))
	if err != nil {
		return a.analyzeFail(err)
	}
	cfg := analyze.Config{}
	switch by := c.String("by"); by {
	case "", "comm", "pid":
		cfg.Latency.By = by
	default:
		return a.analyzeFail(fmt.Errorf("--by %q: want comm or pid", by))
	}
	if s := c.String("refcount"); s != "" {
		spec, err := refcount.ParseSpec(s)
		if err != nil {
			return a.analyzeFail(err)
		}
		cfg.Refcount, cfg.RefSpec = &spec, s
	}
	if p := c.String("probes"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return a.analyzeFail(err)
		}
		cfg.Latency.Definitions = strings.Split(string(b), "\n")
	}
	rec, err := analyze.Open(path)
	if err != nil {
		return a.analyzeFail(err)
	}
	defer rec.Close()
	var tl *timeline.Writer
	var tlFile *os.File
	if p := c.String("export-timeline"); p != "" {
		tlFile, err = os.Create(p)
		if err != nil {
			return a.analyzeFail(err)
		}
		defer tlFile.Close()
		tl = timeline.New(tlFile)
	}
	var pf *perfetto.Writer
	var pfFile *os.File
	var src trace.Source = rec
	if p := c.String("export-perfetto"); p != "" {
		pfFile, err = os.Create(p)
		if err != nil {
			return a.analyzeFail(err)
		}
		defer pfFile.Close()
		pf = perfetto.New(pfFile, perfetto.Options{Refcount: cfg.Refcount, RefSpec: cfg.RefSpec})
		src = pf.Source(rec)
	}
	var fb *folded.Builder
	var fbFile *os.File
	if p := c.String("folded"); p != "" {
		fbFile, err = os.Create(p)
		if err != nil {
			return a.analyzeFail(err)
		}
		defer fbFile.Close()
		fb = folded.New()
	}
	if tl != nil || fb != nil || pf != nil {
		cfg.OnCall = func(call latency.Call) {
			if tl != nil {
				tl.Call(call)
			}
			if pf != nil {
				pf.Call(call)
			}
			if fb != nil {
				fb.Call(call)
			}
		}
	}
	rep, err := analyze.Run(src, cfg)
	if err != nil {
		return a.analyzeFail(fmt.Errorf("%s: %w", path, err))
	}
	if tl != nil {
		if err := tl.Close(); err != nil {
			return a.analyzeFail(err)
		}
	}
	if pf != nil {
		if err := pf.Close(); err != nil {
			return a.analyzeFail(err)
		}
		if err := pfFile.Close(); err != nil {
			return a.analyzeFail(err)
		}
	}
	if fb != nil {
		if err := fb.Write(fbFile); err != nil {
			return a.analyzeFail(err)
		}
		if err := fbFile.Close(); err != nil {
			return a.analyzeFail(err)
		}
	}
	if c.Bool("json") {
		err = report.JSON(a.stdout, rep)
	} else {
		err = report.Text(a.stdout, rep, unit, c.Int("max-objects"))
	}
	if err != nil {
		return a.analyzeFail(err)
	}
	return exitOK
}
