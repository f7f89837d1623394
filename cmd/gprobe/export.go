package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/analyze"
)

// export: recordings as files that other tools query.

func (a *app) exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write recordings as Parquet, one row per event (DuckDB, Spark, Trino)",
		ArgsUsage: "--parquet OUT.parquet FILE... (trace.dat v6/v7, ftrace text)",
		Flags:     formatFlags("export"),
		Action:    func(c *cli.Context) error { return a.set(a.export(c)) },
	}
}

func (a *app) export(c *cli.Context) int {
	if c.String("parquet") == "" {
		return a.done("export", errors.New("--parquet OUT.parquet is required"))
	}
	paths := c.Args().Slice()
	used, exps, err := withFormats("export", formatInput{c: c, paths: paths}, len(paths) > 1, func(cfg analyze.Config) error {
		_, err := analyze.RunFiles(paths, cfg, nil)
		return err
	})
	if err != nil {
		return a.done("export", err)
	}
	for i, f := range used {
		if f.summary != nil {
			fmt.Fprintf(a.stdout, "%s: %s\n", c.String(f.flag), f.summary(exps[i]))
		}
	}
	return exitOK
}
