package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/internal/clikit"
)

// What a new user meets first: --version, perf's option errors with one
// usage block, a help that fits a 100-column terminal, and the command a
// mistyped first operand was meant to be.

// revision and modified are what scripts/build.sh stamps (-X) for the
// builds Go does not stamp itself (from a git worktree, or with
// -buildvcs=false): the tree's commit, and "true" when it had changes.
var revision, modified string

func init() {
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print gprobe's version and the revision it was built from"}
	clikit.Layout(100)
}

// finishCLI completes the command tree newCLIApp builds.
func (a *app) finishCLI(app *cli.App) *cli.App {
	app.Version = clikit.Version(revision, modified)
	clikit.Finish(app, a.usageFailed)
	// The root's first operand: a probe point, or a mistyped command.
	app.Before = func(c *cli.Context) error { a.operand = c.Args().First(); return nil }
	return clikit.FixNames(app)
}

// usageFailed answers a flag urfave/cli could not parse as perf does:
// perf's message (and the flag probably meant), then one usage block, all
// on stderr, and status 129.
func (a *app) usageFailed(c *cli.Context, err error, sub bool) error {
	usage := usageText
	if sub {
		usage = " Usage: " + c.Command.UsageText + "\n"
	}
	clikit.UsageError(a.stderr, c, err, usage)
	a.status = exitUsage
	return err
}

// suggestCommand follows a failed run whose first operand is within a
// small edit distance of a command (clikit.Suggest): a mistyped command
// (gprobe analyse trace.out) is taken as perf probe takes an operand, as
// a probe point (gprobe FUNC), and fails to resolve. The failure's own
// messages stay, the operand may be a probe point after all; the
// suggestion follows them.
func (a *app) suggestCommand() {
	if a.operand == "" || a.isSubcommand(a.operand) {
		return
	}
	if s := clikit.SuggestCommand(a.cliApp(), a.operand); s != "" {
		fmt.Fprintf(a.stderr, "  Did you mean %s? (%s is not a gprobe command: it was taken as a probe point)\n", s, a.operand)
	}
}
