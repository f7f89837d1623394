package main

import "github.com/urfave/cli/v2"

// analyze: latency and refcount reports from a recording (issue 6).

func (a *app) analyzeCommand() *cli.Command {
	return &cli.Command{Name: "analyze", Usage: "latency and refcount reports from a recording", Action: func(*cli.Context) error { return a.set(a.notYet("analyze")) }}
}
