package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/folded"
	"github.com/gprobe/gprobe/analyze/parquet"
	"github.com/gprobe/gprobe/analyze/perfetto"
	"github.com/gprobe/gprobe/analyze/timeline"
)

// formats are the files analyze and export write for other tools: a flag
// of the command that names the file, and the analyze.Exporter that
// writes it. A new format is a package implementing analyze.Exporter and
// a row here.
var formats = []format{
	{command: "analyze", flag: "export-timeline", usage: "write matched calls as Chrome trace-event JSON to `FILE` (Perfetto)",
		open: func(w io.Writer, _ formatInput) (analyze.Exporter, error) { return timeline.New(w), nil }},
	{command: "analyze", flag: "export-perfetto", oneRecording: true,
		usage: "write matched calls (and with --refcount the live objects) as a Perfetto protobuf trace to `FILE`",
		open: func(w io.Writer, in formatInput) (analyze.Exporter, error) {
			return perfetto.New(w, perfetto.Options{Refcount: in.cfg.Refcount, RefSpec: in.cfg.RefSpec}), nil
		}},
	{command: "analyze", flag: "folded", usage: "write folded stacks of matched calls, weighted by self time in ns, to `FILE` (flamegraph.pl, inferno, speedscope)",
		open: func(w io.Writer, _ formatInput) (analyze.Exporter, error) { return folded.NewWriter(w), nil }},
	{command: "export", flag: "parquet", usage: "write the events to `OUT.parquet`",
		flags: func() []cli.Flag {
			return []cli.Flag{
				&cli.StringFlag{Name: "host", Usage: "`NAME` of the machine the recordings come from (default: this one's)"},
				&cli.IntFlag{Name: "row-group-rows", Value: parquet.DefaultRowGroupRows, Usage: "`ROWS` per row group (what is held in memory)"},
			}
		},
		open: func(w io.Writer, in formatInput) (analyze.Exporter, error) {
			if n := in.c.Int("row-group-rows"); n <= 0 {
				return nil, fmt.Errorf("--row-group-rows %d: want a positive number", n)
			}
			return parquet.New(w, in.paths, parquet.Options{Host: in.c.String("host"), RowGroupRows: in.c.Int("row-group-rows")})
		},
		summary: func(e analyze.Exporter) string {
			s := e.(*parquet.Writer).Summary()
			return fmt.Sprintf("%d events, %d columns, %d row groups", s.Rows, len(s.Columns), s.RowGroups)
		}},
}

type format struct {
	// command offers the format; flag names its output file.
	command, flag, usage string
	// flags, when set, are the format's own flags, after flag.
	flags func() []cli.Flag
	// oneRecording: the format holds the calls of one recording only.
	oneRecording bool
	open         func(io.Writer, formatInput) (analyze.Exporter, error)
	// summary, when set, is what export prints of a written file.
	summary func(analyze.Exporter) string
}

// formatInput is what an exporter is made from: the command's flags, the
// recordings of the pass and the analyses' settings.
type formatInput struct {
	c     *cli.Context
	paths []string
	cfg   analyze.Config
}

// formatFlags are the flags of command's formats.
func formatFlags(command string) []cli.Flag {
	var out []cli.Flag
	for _, f := range formats {
		if f.command == command {
			out = append(out, &cli.StringFlag{Name: f.flag, Usage: f.usage})
			if f.flags != nil {
				out = append(out, f.flags()...)
			}
		}
	}
	return out
}

// withFormats runs pass with the exporters of the format flags of command
// given in in.c (in cfg.Exporters), then puts their files in place; many
// says whether the pass reads several recordings. It returns the formats
// written and their exporters.
func withFormats(command string, in formatInput, many bool, pass func(analyze.Config) error) ([]format, []analyze.Exporter, error) {
	var outs analyze.Outputs
	defer outs.Abort()
	var used []format
	for _, f := range formats {
		if f.command != command || in.c.String(f.flag) == "" {
			continue
		}
		if f.oneRecording && many {
			return nil, nil, fmt.Errorf("--%s writes one recording's calls: give one file", f.flag)
		}
		if err := outs.Create(in.c.String(f.flag), func(w io.Writer) (analyze.Exporter, error) { return f.open(w, in) }); err != nil {
			return nil, nil, err
		}
		used = append(used, f)
	}
	in.cfg.Exporters = outs.Exporters()
	if err := pass(in.cfg); err != nil {
		return nil, nil, err
	}
	return used, outs.Exporters(), outs.Close()
}
