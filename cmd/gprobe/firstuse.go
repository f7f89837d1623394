package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

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
	app.Version = version()
	app.OnUsageError = a.usageFailed
	// The root's first operand: a probe point, or a mistyped command.
	app.Before = func(c *cli.Context) error { a.operand = c.Args().First(); return nil }
	for _, c := range app.Commands {
		c.OnUsageError = a.usageFailed
		if c.UsageText == "" {
			c.UsageText = strings.TrimSpace("gprobe " + c.Name + " [options] " + c.ArgsUsage)
		}
	}
	return clikit.FixNames(app)
}

// version is the module's version, the VCS revision of the build (Go's
// stamp, else scripts/build.sh's) and the Go release.
func version() string {
	v, rev, mod := "(devel)", revision, modified == "true"
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				mod = s.Value == "true"
			}
		}
	}
	if rev == "" {
		rev = "unknown"
	} else if mod {
		rev += " (modified)"
	}
	return fmt.Sprintf("%s, revision %s, %s", v, rev, runtime.Version())
}

// usageFailed answers a flag urfave/cli could not parse as perf does: the
// error perf words it with (and the flag it was probably meant to be),
// then one usage block, all on stderr, and status 129.
func (a *app) usageFailed(c *cli.Context, err error, sub bool) error {
	msg, unknown := clikit.OptionError(err)
	fmt.Fprintln(a.stderr, msg)
	if unknown != "" {
		var names []string
		for _, f := range c.Command.VisibleFlags() {
			names = append(names, f.Names()[0])
		}
		if s := clikit.Suggest(unknown, names); len(unknown) > 1 && s != "" {
			fmt.Fprintf(a.stderr, "  Did you mean --%s?\n", s)
		}
		fmt.Fprintln(a.stderr)
	}
	if sub {
		fmt.Fprintf(a.stderr, " Usage: %s\n", c.Command.UsageText)
	} else {
		fmt.Fprint(a.stderr, usageText)
	}
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
	var names []string
	for _, c := range a.cliApp().Commands {
		names = append(names, c.Name)
	}
	if s := clikit.Suggest(a.operand, names); s != "" {
		fmt.Fprintf(a.stderr, "  Did you mean %s? (%s is not a gprobe command: it was taken as a probe point)\n", s, a.operand)
	}
}
