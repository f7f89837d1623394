package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/objtrace"
	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/analyze/report"
	"github.com/gprobe/gprobe/internal/gcpace"
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

// failIn prints err as command's one-line error and returns its status:
// ENOENT for a missing file, else EINVAL.
func (a *app) failIn(command string, err error) int {
	fmt.Fprintf(a.stderr, "gprobe %s: %v\n", command, err)
	if errors.Is(err, fs.ErrNotExist) {
		return exitENOENT
	}
	return exitEINVAL
}

func (a *app) analyzeFail(err error) int { return a.failIn("analyze", err) }

// analyzeFlags reads the analyses' flags: their configuration, the
// report's format and how several recordings are reported ("file" or
// "host", "" when not said).
func analyzeFlags(c *cli.Context) (cfg analyze.Config, out report.Output, parts string, err error) {
	switch {
	case c.Bool("json") && c.Bool("json-lines"):
		return cfg, out, "", errors.New("--json and --json-lines: choose one")
	case c.Bool("json"):
		out = report.OutputJSON
	case c.Bool("json-lines"):
		out = report.OutputJSONLines
	}
	if cfg.MaxListed = c.Int("max-objects"); cfg.MaxListed <= 0 {
		return cfg, out, "", fmt.Errorf("--max-objects %d: want at least 1", cfg.MaxListed)
	}
	if cfg.Latency.By, parts, err = analyze.ParseBy(c.String("by")); err != nil {
		return cfg, out, "", err
	}
	if s := c.String("refcount"); s != "" {
		spec, err := refcount.ParseSpec(s)
		if err != nil {
			return cfg, out, "", err
		}
		cfg.Refcount, cfg.RefSpec = &spec, s
	}
	if p := c.String("probes"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return cfg, out, "", err
		}
		cfg.Latency.Definitions = strings.Split(string(b), "\n")
	}
	return cfg, out, parts, nil
}

func (a *app) analyze(c *cli.Context) int {
	// Past 8 MiB live, collecting at 40% keeps the peak below
	// trace-cmd's at every size.
	gcpace.SwitchAt(8 << 20)
	args := c.Args().Slice()
	if len(args) == 0 {
		args = []string{"trace.out"}
	}
	unit, err := report.ParseUnit(c.String("unit"))
	if err != nil {
		return a.analyzeFail(err)
	}
	cfg, out, parts, err := analyzeFlags(c)
	if err != nil {
		return a.analyzeFail(err)
	}
	paths, err := analyze.Inputs(args)
	if err != nil {
		return a.analyzeFail(err)
	}
	if c.IsSet("object") || c.IsSet("objects") {
		return a.analyzeObjects(c, paths, cfg.Refcount, unit, out)
	}
	many := len(args) > 1 || len(paths) != 1 || paths[0] != args[0] || parts != ""
	if !many {
		// One recording: the objects' store and index live outside Go's
		// heap, which holds the metadata and buffers, nearly all live to
		// the end, so a collection before 16 MiB frees little and costs
		// a small recording more than its analysis (the collector's
		// first touch of its own memory: ~3 ms on a virtual machine, for
		// a trace-cmd zstd file's 2 MB of inflated formats). Many files
		// leave each one's state behind: Go's pacing stays.
		debug.SetGCPercent(400)
	}
	all := c.Bool("all-objects")
	if many && parts == "host" && all && out != report.OutputJSONLines {
		return a.analyzeFail(errors.New("--all-objects lists the objects of each recording: use --by file or --json-lines"))
	}
	outs, _, err := openFormats("analyze", formatInput{c, paths, cfg}, many)
	if err != nil {
		return a.analyzeFail(err)
	}
	defer outs.Abort()
	cfg.Exporters = outs.Exporters()
	max := cfg.MaxListed
	if many {
		m := report.NewMany(a.stdout, out, cmp.Or(parts, "file")+"s", unit, max)
		err = analyze.ReportFiles(m, paths, cfg, parts == "host", all)
	} else {
		err = analyze.File(paths[0], cfg, func(an *analyze.Analysis) error {
			r := an.Report()
			r.AllObjects = all
			return report.Write(a.stdout, r, out, unit, max)
		})
	}
	if err == nil {
		err = outs.Close()
	}
	if err != nil {
		return a.analyzeFail(err)
	}
	return exitOK
}

// analyzeObjects runs --object or --objects, alone.
func (a *app) analyzeObjects(c *cli.Context, paths []string, spec *refcount.Spec, unit report.Unit, out report.Output) int {
	var alone []string
	for _, f := range formats {
		if f.command == "analyze" {
			alone = append(alone, f.flag)
		}
	}
	for _, f := range append(alone, "json-lines", "all-objects", "by", "probes") {
		if c.IsSet(f) {
			return a.analyzeFail(fmt.Errorf("--%s does not go with --object or --objects", f))
		}
	}
	asJSON := out == report.OutputJSON
	if c.IsSet("object") {
		if c.IsSet("objects") || spec != nil {
			return a.analyzeFail(errors.New("--object follows every field: give it without --objects or --refcount"))
		}
		addr, err := objtrace.ParseAddr(c.String("object"))
		if err != nil {
			return a.analyzeFail(err)
		}
		t := objtrace.NewTracer(addr)
		w := report.NewObjectTrace(a.stdout, addr, asJSON, unit)
		if err := analyze.TraceObject(paths, t, w.Hit); err != nil {
			return a.analyzeFail(err)
		}
		if err := w.Close(t.Summary()); err != nil {
			return a.analyzeFail(err)
		}
		return exitOK
	}
	n := c.Int("objects")
	if n <= 0 {
		return a.analyzeFail(fmt.Errorf("--objects %d: want at least 1", n))
	}
	by, err := objtrace.ParseBy(c.String("rank"))
	if err != nil {
		return a.analyzeFail(err)
	}
	r := objtrace.NewRanker(n, by, spec)
	if err := analyze.RankObjects(paths, r); err != nil {
		return a.analyzeFail(err)
	}
	if err := report.Ranking(a.stdout, r.Ranking(), asJSON, unit); err != nil {
		return a.analyzeFail(err)
	}
	return exitOK
}
