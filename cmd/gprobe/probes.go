package main

import "github.com/urfave/cli/v2"

// Installing, listing and deleting probe events (issue 4).

func (a *app) addCommand() *cli.Command {
	return &cli.Command{Name: "add", Usage: "add probe events to tracefs", Action: func(*cli.Context) error { return a.set(a.notYet("add")) }}
}

func (a *app) delCommand() *cli.Command {
	return &cli.Command{Name: "del", Usage: "delete probe events", Action: func(*cli.Context) error { return a.set(a.notYet("del")) }}
}

func (a *app) listCommand() *cli.Command {
	return &cli.Command{Name: "list", Usage: "list probe events", Action: func(*cli.Context) error { return a.set(a.notYet("list")) }}
}

// rootProbes handles the root flags -a, -d, -l and a bare PROBEDEF.
func (a *app) rootProbes(c *cli.Context) int { return a.notYet("installing probes") }
