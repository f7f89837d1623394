package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/perfprobe"
	"github.com/gprobe/gprobe/record/leftover"
)

// cleanup: remove what gprobe processes that no longer exist left in the
// kernel (record/leftover).

func (a *app) cleanupCommand() *cli.Command {
	return &cli.Command{
		Name:  "cleanup",
		Usage: "remove what gprobe processes that no longer run left in the kernel",
		Description: "Lists, then removes, the tracefs instances, probes, synthetic events and hist triggers\n" +
			"that gprobe record and gprobe latency sessions killed without a chance to clean up (SIGKILL,\n" +
			"a crash) left behind. Sessions still running are never touched.",
		Flags:  perfprobe.CleanupFlags(),
		Action: func(c *cli.Context) error { return a.set(a.cleanup(c)) },
	}
}

func (a *app) cleanup(c *cli.Context) int {
	fs, err := tracefs.Open()
	if err != nil {
		fmt.Fprintf(a.stderr, "gprobe cleanup: %v\n", err)
		return exitErrno(err)
	}
	found, err := leftover.Clean(fs, leftover.CleanOptions{PID: c.Int("pid"), DryRun: c.Bool("dry-run")}, a.stdout)
	if err != nil {
		fmt.Fprintf(a.stderr, "gprobe cleanup: %v\n", err)
		if !found { // Find failed
			return exitErrno(err)
		}
		return 1
	}
	if !found && !boolean(c, "quiet") {
		fmt.Fprintln(a.stderr, "gprobe cleanup: nothing left by gprobe processes that no longer run")
	}
	return exitOK
}

// reportLeftovers prints, on a terminal, what gprobe processes that no
// longer run left in fs's kernel, before a session starts (scripts ask
// with gprobe cleanup -n: their output stays what it was).
func reportLeftovers(w io.Writer, fs *tracefs.FS) {
	if isTerminal(w) {
		leftover.Report(w, fs)
	}
}
