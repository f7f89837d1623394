package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/analyze/parquet"
)

// export: recordings as files that other tools query.

func (a *app) exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write recordings as Parquet, one row per event (DuckDB, Spark, Trino)",
		ArgsUsage: "--parquet OUT.parquet FILE... (trace.dat v6/v7, ftrace text)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "parquet", Usage: "write the events to `OUT.parquet`"},
			&cli.StringFlag{Name: "host", Usage: "`NAME` of the machine the recordings come from (default: this one's)"},
			&cli.IntFlag{Name: "row-group-rows", Value: parquet.DefaultRowGroupRows, Usage: "`ROWS` per row group (what is held in memory)"},
		},
		Action: func(c *cli.Context) error { return a.set(a.export(c)) },
	}
}

func (a *app) exportFail(err error) int {
	fmt.Fprintf(a.stderr, "gprobe export: %v\n", err)
	if errors.Is(err, fs.ErrNotExist) {
		return exitENOENT
	}
	return exitEINVAL
}

func (a *app) export(c *cli.Context) int {
	out := c.String("parquet")
	if out == "" {
		return a.exportFail(errors.New("--parquet OUT.parquet is required"))
	}
	if c.Int("row-group-rows") <= 0 {
		return a.exportFail(fmt.Errorf("--row-group-rows %d: want a positive number", c.Int("row-group-rows")))
	}
	sum, err := parquet.ExportFile(out, c.Args().Slice(), parquet.Options{Host: c.String("host"), RowGroupRows: c.Int("row-group-rows")})
	if err != nil {
		return a.exportFail(err)
	}
	fmt.Fprintf(a.stdout, "%s: %d events, %d columns, %d row groups\n", out, sum.Rows, len(sum.Columns), sum.RowGroups)
	return exitOK
}
