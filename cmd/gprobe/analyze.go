package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/folded"
	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/objtrace"
	"github.com/gprobe/gprobe/analyze/perfetto"
	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/analyze/report"
	"github.com/gprobe/gprobe/analyze/timeline"
	"github.com/gprobe/gprobe/analyze/trace"
)

// analyze: latency and refcount reports from recordings.

func (a *app) analyzeCommand() *cli.Command {
	return &cli.Command{
		Name:      "analyze",
		Usage:     "latency, refcount and object reports from recordings",
		ArgsUsage: "[FILE|DIR...] (trace.dat v6/v7, ftrace text; default trace.out; several files or a directory: a report per file and a total)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "refcount", Usage: "`get=EV[,EV..],put=EV[,EV..][,key=FIELD][,new=EV][,free=EV]`: follow objects by key"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON (summaries, totals and the --max-objects first objects and sites)"},
			&cli.BoolFlag{Name: "json-lines", Usage: "print JSON lines: every outstanding object, then the report"},
			&cli.BoolFlag{Name: "all-objects", Usage: "list every outstanding object in the text or JSON report (streamed)"},
			&cli.StringFlag{Name: "export-timeline", Usage: "write matched calls as Chrome trace-event JSON to `FILE` (Perfetto)"},
			&cli.StringFlag{Name: "export-perfetto", Usage: "write matched calls (and with --refcount the live objects) as a Perfetto protobuf trace to `FILE`"},
			&cli.StringFlag{Name: "folded", Usage: "write folded stacks of matched calls, weighted by self time in ns, to `FILE` (flamegraph.pl, inferno, speedscope)"},
			&cli.StringFlag{Name: "by", Usage: "split latency by `comm|pid`; report several recordings by file|host (comma-separated, e.g. host,comm)"},
			&cli.StringFlag{Name: "unit", Value: "us", Usage: "time `unit` of the text report: ns, us or ms"},
			&cli.StringFlag{Name: "probes", Usage: "`FILE` of probe definitions (uprobe_events/kprobe_events lines) to pair entry and return probes"},
			&cli.IntFlag{Name: "max-objects", Value: 20, Usage: "objects and sites listed per section of the text and JSON reports"},
			&cli.StringFlag{Name: "object", Usage: "print every event whose arguments carry the address `ADDR` (kernel) or PID:ADDR (user space), and its life"},
			&cli.IntFlag{Name: "objects", Usage: "rank the `N` objects seen most (addresses in pointer-like arguments, or with --refcount its key)"},
			&cli.StringFlag{Name: "rank", Value: "events", Usage: "rank --objects by `events|lifetime`"},
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
	// Past 8 MiB live, collecting at 40% keeps the peak below
	// trace-cmd's at every size.
	gcSwitchAt.Store(8 << 20)
	args := c.Args().Slice()
	if len(args) == 0 {
		args = []string{"trace.out"}
	}
	unit, err := report.ParseUnit(c.String("unit"))
	if err != nil {
		return a.analyzeFail(err)
	}
	out := report.OutputText
	switch {
	case c.Bool("json") && c.Bool("json-lines"):
		return a.analyzeFail(errors.New("--json and --json-lines: choose one"))
	case c.Bool("json"):
		out = report.OutputJSON
	case c.Bool("json-lines"):
		out = report.OutputJSONLines
	}
	max := c.Int("max-objects")
	if max <= 0 {
		return a.analyzeFail(fmt.Errorf("--max-objects %d: want at least 1", max))
	}
	cfg := analyze.Config{MaxListed: max}
	parts := ""
	if by := c.String("by"); by != "" {
		for _, b := range strings.Split(by, ",") {
			switch {
			case (b == "comm" || b == "pid") && cfg.Latency.By == "":
				cfg.Latency.By = b
			case (b == "file" || b == "host") && parts == "":
				parts = b
			default:
				return a.analyzeFail(fmt.Errorf("--by %q: want comm or pid, file or host, or one of each", by))
			}
		}
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
	if parts == "" {
		parts = "file"
	}
	if many && parts == "host" && c.Bool("all-objects") && out != report.OutputJSONLines {
		return a.analyzeFail(errors.New("--all-objects lists the objects of each recording: use --by file or --json-lines"))
	}
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
	wrap := func(src trace.Source) trace.Source { return src }
	if p := c.String("export-perfetto"); p != "" {
		if many {
			return a.analyzeFail(errors.New("--export-perfetto writes one recording's calls: give one file"))
		}
		pfFile, err = os.Create(p)
		if err != nil {
			return a.analyzeFail(err)
		}
		defer pfFile.Close()
		pf = perfetto.New(pfFile, perfetto.Options{Refcount: cfg.Refcount, RefSpec: cfg.RefSpec})
		wrap = pf.Source
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
	write := func(r *report.Report) error {
		r.AllObjects = c.Bool("all-objects")
		switch out {
		case report.OutputJSON:
			return report.JSON(a.stdout, r)
		case report.OutputJSONLines:
			return report.JSONLines(a.stdout, r, "report")
		}
		return report.Text(a.stdout, r, unit, max)
	}
	if many {
		err = a.analyzeMany(paths, cfg, out, parts, unit, max, c.Bool("all-objects"))
	} else {
		err = analyzeOne(paths[0], cfg, wrap, write)
	}
	if err != nil {
		return a.analyzeFail(err)
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
	return exitOK
}

// analyzeObjects runs --object or --objects, alone.
func (a *app) analyzeObjects(c *cli.Context, paths []string, spec *refcount.Spec, unit report.Unit, out report.Output) int {
	for _, f := range []string{"export-timeline", "export-perfetto", "folded", "json-lines", "all-objects", "by", "probes"} {
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

// analyzeOne reports one recording, read through wrap (which may watch
// the events, as the Perfetto writer does).
func analyzeOne(path string, cfg analyze.Config, wrap func(trace.Source) trace.Source, write func(*report.Report) error) error {
	rec, err := analyze.Open(path)
	if err != nil {
		return err
	}
	defer rec.Close()
	an, err := analyze.Analyze(wrap(rec), cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return write(an.Report())
}

// analyzeMany reports each recording (or host) and the total, in one pass
// over the files.
func (a *app) analyzeMany(paths []string, cfg analyze.Config, out report.Output, parts string, unit report.Unit, max int, all bool) error {
	m := report.NewMany(a.stdout, out, parts+"s", unit, max)
	hosts := map[string]*analyze.Total{}
	var order []string
	total, err := analyze.RunFiles(paths, cfg, func(an *analyze.Analysis) error {
		if parts == "host" {
			h, ok := hosts[an.Host]
			if !ok {
				h = analyze.NewTotal(cfg)
				hosts[an.Host] = h
				order = append(order, an.Host)
			}
			h.Add(an)
		}
		r := an.Report()
		r.AllObjects = all
		return m.Recording(r)
	})
	if err != nil {
		return err
	}
	for _, h := range order {
		if err := m.Host(hosts[h].Report()); err != nil {
			return err
		}
	}
	return m.Total(total.Report())
}
