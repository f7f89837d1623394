package main

import (
	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/internal/perfprobe"
)

// export: recordings as files that other tools query.

func (a *app) exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write recordings as Parquet, one row per event (DuckDB, Spark, Trino)",
		ArgsUsage: "--parquet OUT.parquet FILE... (trace.dat v6/v7, ftrace text)",
		Flags:     perfprobe.FormatFlags("export"),
		Action: func(c *cli.Context) error {
			return a.set(a.done("export", analyze.Export(a.stdout, c, c.Args().Slice())))
		},
	}
}
