package main

import "github.com/urfave/cli/v2"

// record: capture probe events into trace.out (issue 5).

func (a *app) recordCommand() *cli.Command {
	return &cli.Command{Name: "record", Usage: "record probe events into trace.out", Action: func(*cli.Context) error { return a.set(a.notYet("record")) }}
}
