package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/analyze"
)

// analyze: latency and refcount reports from recordings.

func (a *app) analyzeCommand() *cli.Command {
	return &cli.Command{
		Name:      "analyze",
		Usage:     "latency, refcount and object reports from recordings",
		ArgsUsage: "[FILE|DIR...] (trace.dat v6/v7, ftrace text; default trace.out; several files or a directory: a report per file and a total)",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "refcount", Usage: "follow objects by key: `SPEC` is get=EV[,EV..],put=EV[,EV..][,key=FIELD][,new=EV][,free=EV]"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON (summaries, totals and the --max-objects first objects and sites)"},
			&cli.BoolFlag{Name: "json-lines", Usage: "print JSON lines: every outstanding object, then the report"},
			&cli.BoolFlag{Name: "all-objects", Usage: "list every outstanding object in the text or JSON report (streamed)"},
		}, formatFlags("analyze")...),
			&cli.StringFlag{Name: "by", Usage: "split latency by `comm|pid`; report several recordings by file|host (comma-separated, e.g. host,comm)"},
			&cli.StringFlag{Name: "unit", Value: "us", Usage: "time `unit` of the text report: ns, us or ms"},
			&cli.StringFlag{Name: "probes", Usage: "`FILE` of probe definitions (uprobe_events/kprobe_events lines) to pair entry and return probes"},
			&cli.IntFlag{Name: "max-objects", Value: 20, Usage: "objects and sites listed per section of the text and JSON reports"},
			&cli.StringFlag{Name: "object", Usage: "print every event whose arguments carry the address `ADDR` (kernel) or PID:ADDR (user space), and its life"},
			&cli.IntFlag{Name: "objects", Usage: "rank the `N` objects seen most (addresses in pointer-like arguments, or with --refcount its key)"},
			&cli.StringFlag{Name: "rank", Value: "events", Usage: "rank --objects by `events|lifetime`"},
		),
		Action: func(c *cli.Context) error { return a.set(a.analyze(c)) },
	}
}

// done is command's exit status after err (0 without), which it prints
// as the command's one-line error: ENOENT for a missing file, else EINVAL.
func (a *app) done(command string, err error) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(a.stderr, "gprobe %s: %v\n", command, err)
	if errors.Is(err, fs.ErrNotExist) {
		return exitENOENT
	}
	return exitEINVAL
}

func (a *app) analyze(c *cli.Context) int {
	req, err := analyze.ParseRequest(c, c.Args().Slice())
	if err != nil {
		return a.done("analyze", err)
	}
	req.PaceGC()
	return a.done("analyze", req.Run(a.stdout))
}
