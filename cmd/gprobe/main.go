// Command gprobe is a perf-probe compatible tool: it resolves probe points
// through DWARF into kprobe/uprobe event definitions.
//
//	gprobe -k vmlinux -L do_sys_open            # probe-able source lines
//	gprobe -k vmlinux -D 'do_sys_open:9'        # kprobe_events definition(s)
//
// The root command takes perf probe's flags; subcommands are aliases and
// the later capabilities (add, record, analyze).
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/gprobe/gprobe/internal/gcpace"
	"github.com/gprobe/gprobe/internal/selfprofile"
	"github.com/gprobe/gprobe/internal/stackwarm"
	"github.com/gprobe/gprobe/internal/termsafe"
)

func main() {
	stackwarm.Grow(stackSize)
	gcpace.Start()
	os.Exit(selfprofile.Run(func() int { return run(os.Args, os.Stdout, os.Stderr) }))
}

// stackSize is the stack a short command's deepest call chain needs
// (resolving a user binary's probe point: under 64 KiB), made at once
// rather than by the runtime's doublings deep in the chain (stackwarm).
const stackSize = 64 << 10

// run executes gprobe with args (args[0] is the program name) and returns
// the exit status. Exit statuses follow perf probe: 0 success, 129 usage
// errors, 234 (-EINVAL) parse errors of positional definitions, 254
// (-ENOENT) probe points or lines not found.
func run(args []string, stdout, stderr io.Writer) int {
	// On a terminal, control characters in what is printed (names and
	// lines from files gprobe does not control) are shown escaped.
	out, flushOut := termsafe.Guard(stdout)
	errw, flushErr := termsafe.Guard(stderr)
	defer flushErr()
	defer flushOut()
	return newApp(out, errw).run(args)
}

// run is main for a, with a panic reported as an internal error, and a
// failure whose first operand is a mistyped command answered with the
// command (see suggestCommand).
func (a *app) run(args []string) (status int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(a.stderr, "gprobe: internal error: %v\n", r)
			status = exitInternal
		}
	}()
	status = a.main(args)
	if status != exitOK {
		a.suggestCommand()
	}
	return status
}
