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

// analyzeRequest is what analyze's flags ask.
type analyzeRequest struct {
	cfg  analyze.Config
	out  report.Output
	unit report.Unit
	// parts says how several recordings are reported: "file" or "host"
	// ("" when --by does not say).
	parts string
	all   bool // --all-objects
}

// analyzeFlags reads analyze's flags (but those of --object and --objects).
func analyzeFlags(c *cli.Context) (req analyzeRequest, err error) {
	if req.unit, err = report.ParseUnit(c.String("unit")); err != nil {
		return req, err
	}
	switch {
	case c.Bool("json") && c.Bool("json-lines"):
		return req, errors.New("--json and --json-lines: choose one")
	case c.Bool("json"):
		req.out = report.OutputJSON
	case c.Bool("json-lines"):
		req.out = report.OutputJSONLines
	}
	if req.cfg.MaxListed = c.Int("max-objects"); req.cfg.MaxListed <= 0 {
		return req, fmt.Errorf("--max-objects %d: want at least 1", req.cfg.MaxListed)
	}
	if req.cfg.Latency.By, req.parts, err = analyze.ParseBy(c.String("by")); err != nil {
		return req, err
	}
	if s := c.String("refcount"); s != "" {
		spec, err := refcount.ParseSpec(s)
		if err != nil {
			return req, err
		}
		req.cfg.Refcount, req.cfg.RefSpec = &spec, s
	}
	if p := c.String("probes"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return req, err
		}
		req.cfg.Latency.Definitions = strings.Split(string(b), "\n")
	}
	req.all = c.Bool("all-objects")
	return req, nil
}

func (a *app) analyze(c *cli.Context) int {
	// Past 8 MiB live, collecting at 40% keeps the peak below
	// trace-cmd's at every size.
	gcpace.SwitchAt(8 << 20)
	args := c.Args().Slice()
	if len(args) == 0 {
		args = []string{"trace.out"}
	}
	req, err := analyzeFlags(c)
	if err != nil {
		return a.done("analyze", err)
	}
	paths, err := analyze.Inputs(args)
	if err != nil {
		return a.done("analyze", err)
	}
	if c.IsSet("object") || c.IsSet("objects") {
		return a.analyzeObjects(c, paths, req)
	}
	many := len(args) > 1 || len(paths) != 1 || paths[0] != args[0] || req.parts != ""
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
	if many && req.parts == "host" && req.all && req.out != report.OutputJSONLines {
		return a.done("analyze", errors.New("--all-objects lists the objects of each recording: use --by file or --json-lines"))
	}
	return a.done("analyze", a.analyzeReport(c, req, paths, many))
}

// analyzeReport runs the pass over the recordings at paths: the report of
// each (of each host), the total, and the outputs of the format flags.
func (a *app) analyzeReport(c *cli.Context, req analyzeRequest, paths []string, many bool) error {
	_, _, err := withFormats("analyze", formatInput{c, paths, req.cfg}, many, func(cfg analyze.Config) error {
		if many {
			m := report.NewMany(a.stdout, req.out, cmp.Or(req.parts, "file")+"s", req.unit, cfg.MaxListed)
			return analyze.ReportFiles(m, paths, cfg, req.parts == "host", req.all)
		}
		return analyze.File(paths[0], cfg, func(an *analyze.Analysis) error {
			r := an.Report()
			r.AllObjects = req.all
			return report.Write(a.stdout, r, req.out, req.unit, cfg.MaxListed)
		})
	})
	return err
}

// analyzeObjects runs --object or --objects, alone.
func (a *app) analyzeObjects(c *cli.Context, paths []string, req analyzeRequest) int {
	var alone []string
	for _, f := range formats {
		if f.command == "analyze" {
			alone = append(alone, f.flag)
		}
	}
	for _, f := range append(alone, "json-lines", "all-objects", "by", "probes") {
		if c.IsSet(f) {
			return a.done("analyze", fmt.Errorf("--%s does not go with --object or --objects", f))
		}
	}
	asJSON, unit, spec := req.out == report.OutputJSON, req.unit, req.cfg.Refcount
	if c.IsSet("object") {
		if c.IsSet("objects") || spec != nil {
			return a.done("analyze", errors.New("--object follows every field: give it without --objects or --refcount"))
		}
		addr, err := objtrace.ParseAddr(c.String("object"))
		if err == nil {
			err = analyze.ReportObject(a.stdout, paths, addr, asJSON, unit)
		}
		return a.done("analyze", err)
	}
	n := c.Int("objects")
	if n <= 0 {
		return a.done("analyze", fmt.Errorf("--objects %d: want at least 1", n))
	}
	by, err := objtrace.ParseBy(c.String("rank"))
	if err == nil {
		err = analyze.ReportRanking(a.stdout, paths, objtrace.NewRanker(n, by, spec), asJSON, unit)
	}
	return a.done("analyze", err)
}
