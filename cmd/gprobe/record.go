package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/perfprobe"
	"github.com/gprobe/gprobe/internal/termsafe"
	"github.com/gprobe/gprobe/record"
	"github.com/gprobe/gprobe/record/follow"
)

// record: capture probe events into trace.out.

func (a *app) recordCommand() *cli.Command {
	return &cli.Command{
		Name:      "record",
		Usage:     "record probe events into a trace-cmd compatible trace.out",
		ArgsUsage: "[-- CMD ARGS...]",
		Description: "Enables the installed probe events (or the events named with -e) in a private tracefs\n" +
			"instance, runs CMD following it and its children (or follows -p PID, or everything with -a)\n" +
			"and writes trace.dat v6 (read it with gprobe analyze, trace-cmd report or KernelShark).",
		Flags:  perfprobe.RecordFlags(),
		Action: func(c *cli.Context) error { return a.set(a.record(c)) },
	}
}

func (a *app) record(c *cli.Context) int {
	sigs, stop := follow.Notify()
	defer stop()
	if fs, err := tracefs.Open(); err == nil {
		reportLeftovers(a.stderr, fs)
	}
	cfg := record.Config{
		Events:       c.StringSlice("event"),
		Output:       c.String("output"),
		BufferSizeKB: c.Int("buffer-size"),
		All:          c.Bool("all"),
		PID:          c.Int("pid"),
		Command:      c.Args().Slice(),
		Signals:      sigs,
		Stdout:       termsafe.Raw(a.stdout),
		Stderr:       termsafe.Raw(a.stderr),
	}
	if isTerminal(a.stderr) {
		cfg.Progress = a.stderr
	}
	res, err := record.Run(cfg)
	if err != nil {
		fmt.Fprintf(a.stderr, "gprobe record: %v\n", err)
		return perfprobe.RecordStatus(err)
	}
	fmt.Fprintln(a.stderr, res.Summary())
	return res.ExitCode
}
