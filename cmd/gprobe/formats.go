package main

import (
	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/analyze"
)

// formatFlags are the flags of command's output formats (analyze.Formats).
func formatFlags(command string) []cli.Flag {
	var out []cli.Flag
	for _, f := range analyze.Formats {
		if f.Command != command {
			continue
		}
		out = append(out, &cli.StringFlag{Name: f.Flag, Usage: f.Usage})
		for _, o := range f.Options {
			if o.Int {
				out = append(out, &cli.IntFlag{Name: o.Name, Value: o.Default, Usage: o.Usage})
			} else {
				out = append(out, &cli.StringFlag{Name: o.Name, Usage: o.Usage})
			}
		}
	}
	return out
}
