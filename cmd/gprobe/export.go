package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/parquet"
)

// export: recordings as files that other tools query.

func (a *app) exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write recordings as Parquet, one row per event (DuckDB, Spark, Trino)",
		ArgsUsage: "--parquet OUT.parquet FILE... (trace.dat v6/v7, ftrace text)",
		Flags: append(formatFlags("export"),
			&cli.StringFlag{Name: "host", Usage: "`NAME` of the machine the recordings come from (default: this one's)"},
			&cli.IntFlag{Name: "row-group-rows", Value: parquet.DefaultRowGroupRows, Usage: "`ROWS` per row group (what is held in memory)"},
		),
		Action: func(c *cli.Context) error { return a.set(a.export(c)) },
	}
}

func (a *app) export(c *cli.Context) int {
	if c.String("parquet") == "" {
		return a.done("export", errors.New("--parquet OUT.parquet is required"))
	}
	if c.Int("row-group-rows") <= 0 {
		return a.done("export", fmt.Errorf("--row-group-rows %d: want a positive number", c.Int("row-group-rows")))
	}
	paths := c.Args().Slice()
	outs, used, err := openFormats("export", formatInput{c: c, paths: paths}, len(paths) > 1)
	if err != nil {
		return a.done("export", err)
	}
	defer outs.Abort()
	_, err = analyze.RunFiles(paths, analyze.Config{Exporters: outs.Exporters()}, nil)
	if err == nil {
		err = outs.Close()
	}
	if err != nil {
		return a.done("export", err)
	}
	for i, f := range used {
		if f.summary != nil {
			fmt.Fprintf(a.stdout, "%s: %s\n", c.String(f.flag), f.summary(outs.Exporters()[i]))
		}
	}
	return exitOK
}
