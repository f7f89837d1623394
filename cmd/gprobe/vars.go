package main

import "github.com/urfave/cli/v2"

// -V / vars: the variables accessible at a probe point (issue 3).

func (a *app) varsCommand() *cli.Command {
	return &cli.Command{Name: "vars", Usage: "show accessible variables", Action: func(*cli.Context) error { return a.set(a.notYet("vars")) }}
}

func (a *app) showVars(c *cli.Context, spec string) int { return a.notYet("-V") }
