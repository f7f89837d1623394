package main

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/record/leftover"
)

// cleanup: remove what gprobe processes that no longer exist left in the
// kernel (record/leftover).

// stopSignals end a recording, a latency measurement or a download the way
// Ctrl-C does, so that what gprobe created is removed: SIGINT, SIGTERM,
// SIGHUP (the terminal or SSH session closed), SIGQUIT and SIGPIPE
// (stdout or stderr closed; without it Go would die at the next write).
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE}

func (a *app) cleanupCommand() *cli.Command {
	return &cli.Command{
		Name:  "cleanup",
		Usage: "remove what gprobe processes that no longer run left in the kernel",
		Description: "Lists, then removes, the tracefs instances, probes, synthetic events and hist triggers\n" +
			"that gprobe record and gprobe latency sessions killed without a chance to clean up (SIGKILL,\n" +
			"a crash) left behind. Sessions still running are never touched.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "only list them"},
			&cli.IntFlag{Name: "pid", Usage: "only what process `PID` left"},
		},
		Action: func(c *cli.Context) error { return a.set(a.cleanup(c)) },
	}
}

func (a *app) cleanup(c *cli.Context) int {
	fs, err := tracefs.Open()
	if err != nil {
		fmt.Fprintf(a.stderr, "gprobe cleanup: %v\n", err)
		return exitErrno(err)
	}
	ls, err := leftover.Find(fs)
	if err != nil {
		fmt.Fprintf(a.stderr, "gprobe cleanup: %v\n", err)
		return exitErrno(err)
	}
	status, found := exitOK, false
	for _, l := range ls {
		if pid := c.Int("pid"); pid != 0 && l.PID != pid {
			continue
		}
		found = true
		if c.Bool("dry-run") {
			fmt.Fprintln(a.stdout, l.Summary())
			continue
		}
		removed, err := leftover.Remove(fs, l)
		for _, o := range removed {
			fmt.Fprintf(a.stdout, "removed %s\n", o)
		}
		if err != nil {
			fmt.Fprintf(a.stderr, "gprobe cleanup: %v\n", err)
			status = 1
		}
	}
	if !found && !boolean(c, "quiet") {
		fmt.Fprintln(a.stderr, "gprobe cleanup: nothing left by gprobe processes that no longer run")
	}
	return status
}

// reportLeftovers prints, on a terminal, one line per gprobe process that
// left something in fs's kernel, before a session starts (scripts ask
// with gprobe cleanup -n: their output stays what it was).
func reportLeftovers(w io.Writer, fs *tracefs.FS) {
	if !isTerminal(w) {
		return
	}
	writeLeftovers(w, fs)
}

func writeLeftovers(w io.Writer, fs *tracefs.FS) {
	ls, err := leftover.Find(fs)
	if err != nil {
		return
	}
	for _, l := range ls {
		fmt.Fprintf(w, "gprobe: %s; gprobe cleanup removes them\n", l.Summary())
	}
}
