package analyze

import (
	"errors"
	"fmt"
	"io"

	"github.com/gprobe/gprobe/analyze/folded"
	"github.com/gprobe/gprobe/analyze/parquet"
	"github.com/gprobe/gprobe/analyze/perfetto"
	"github.com/gprobe/gprobe/analyze/timeline"
)

// FlagValues are a command line's values by flag name, what the
// workflows of gprobe analyze and gprobe export read (urfave/cli's
// *cli.Context is one).
type FlagValues interface {
	String(name string) string
	Int(name string) int
	Bool(name string) bool
	IsSet(name string) bool
}

// Format is a file analyze and export write for other tools: a flag of
// the command that names the file, and the Exporter that writes it. A
// new format is a package implementing Exporter and a row of Formats.
type Format struct {
	// Command offers the format; Flag names its output file.
	Command, Flag, Usage string
	// Options are the format's own flags, after Flag.
	Options []FormatOption
	// OneRecording: the format holds the calls of one recording only.
	OneRecording bool
	open         func(io.Writer, FormatInput) (Exporter, error)
	// summary, when set, is what export prints of a written file.
	summary func(Exporter) string
}

// FormatOption is a format's own flag: a number (Int, Default its
// default) or a string (no default).
type FormatOption struct {
	Name, Usage string
	Int         bool
	Default     int
}

// FormatInput is what an exporter is made from: the command's flags, the
// recordings of the pass and the analyses' settings.
type FormatInput struct {
	Flags  FlagValues
	Paths  []string
	Config Config
}

// Formats are the output formats of analyze and export, in the order
// their flags are offered.
var Formats = []Format{
	{Command: "analyze", Flag: "export-timeline", Usage: "write matched calls as Chrome trace-event JSON to `FILE` (Perfetto)",
		open: func(w io.Writer, _ FormatInput) (Exporter, error) { return timeline.New(w), nil }},
	{Command: "analyze", Flag: "export-perfetto", OneRecording: true,
		Usage: "write matched calls (and with --refcount the live objects) as a Perfetto protobuf trace to `FILE`",
		open: func(w io.Writer, in FormatInput) (Exporter, error) {
			return perfetto.New(w, perfetto.Options{Refcount: in.Config.Refcount, RefSpec: in.Config.RefSpec}), nil
		}},
	{Command: "analyze", Flag: "folded", Usage: "write folded stacks of matched calls, weighted by self time in ns, to `FILE` (flamegraph.pl, inferno, speedscope)",
		open: func(w io.Writer, _ FormatInput) (Exporter, error) { return folded.NewWriter(w), nil }},
	{Command: "export", Flag: "parquet", Usage: "write the events to `OUT.parquet`",
		Options: []FormatOption{
			{Name: "host", Usage: "`NAME` of the machine the recordings come from (default: this one's)"},
			{Name: "row-group-rows", Int: true, Default: parquet.DefaultRowGroupRows, Usage: "`ROWS` per row group (what is held in memory)"},
		},
		open: func(w io.Writer, in FormatInput) (Exporter, error) {
			if n := in.Flags.Int("row-group-rows"); n <= 0 {
				return nil, fmt.Errorf("--row-group-rows %d: want a positive number", n)
			}
			return parquet.New(w, in.Paths, Scan, parquet.Options{Host: in.Flags.String("host"), RowGroupRows: in.Flags.Int("row-group-rows")})
		},
		summary: func(e Exporter) string {
			s := e.(*parquet.Writer).Summary()
			return fmt.Sprintf("%d events, %d columns, %d row groups", s.Rows, len(s.Columns), s.RowGroups)
		}},
}

// WithFormats runs pass with the exporters of the format flags of
// command given in in.Flags (in the Config's Exporters), then puts their
// files in place; many says whether the pass reads several recordings.
// It returns the formats written and their exporters.
func WithFormats(command string, in FormatInput, many bool, pass func(Config) error) ([]Format, []Exporter, error) {
	var outs Outputs
	defer outs.Abort()
	var used []Format
	for _, f := range Formats {
		if f.Command != command || in.Flags.String(f.Flag) == "" {
			continue
		}
		if f.OneRecording && many {
			return nil, nil, fmt.Errorf("--%s writes one recording's calls: give one file", f.Flag)
		}
		if err := outs.Create(in.Flags.String(f.Flag), func(w io.Writer) (Exporter, error) { return f.open(w, in) }); err != nil {
			return nil, nil, err
		}
		used = append(used, f)
	}
	in.Config.Exporters = outs.Exporters()
	if err := pass(in.Config); err != nil {
		return nil, nil, err
	}
	return used, outs.Exporters(), outs.Close()
}

// Export is gprobe export: the recordings at paths written in the formats
// whose flags f gives (--parquet is required), and a line per file
// written to w.
func Export(w io.Writer, f FlagValues, paths []string) error {
	if f.String("parquet") == "" {
		return errors.New("--parquet OUT.parquet is required")
	}
	used, exps, err := WithFormats("export", FormatInput{Flags: f, Paths: paths}, len(paths) > 1, func(cfg Config) error {
		_, err := RunFiles(paths, cfg, nil)
		return err
	})
	if err != nil {
		return err
	}
	for i, ft := range used {
		if ft.summary != nil {
			fmt.Fprintf(w, "%s: %s\n", f.String(ft.Flag), ft.summary(exps[i]))
		}
	}
	return nil
}
