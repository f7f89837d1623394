package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/internal/perfprobe"
)

// analyze: latency and refcount reports from recordings.

func (a *app) analyzeCommand() *cli.Command {
	return &cli.Command{
		Name:      "analyze",
		Usage:     "latency, refcount and object reports from recordings",
		ArgsUsage: "[FILE|DIR...] (trace.dat v6/v7, ftrace text; default trace.out; several files or a directory: a report per file and a total)",
		Flags:     perfprobe.AnalyzeFlags(),
		Action:    func(c *cli.Context) error { return a.set(a.analyze(c)) },
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

func (a *app) analyze(c *cli.Context) int {
	req, err := analyze.ParseRequest(c, c.Args().Slice())
	if err != nil {
		return a.done("analyze", err)
	}
	req.PaceGC()
	return a.done("analyze", req.Run(a.stdout))
}
