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
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync/atomic"

	"github.com/gprobe/gprobe/internal/termsafe"
)

func main() {
	tuneGC()
	if p := os.Getenv("GPROBE_CPUPROFILE"); p != "" { // for benchmarking gprobe itself
		if f, err := os.Create(p); err == nil {
			pprof.StartCPUProfile(f)
			st := run(os.Args, os.Stdout, os.Stderr)
			pprof.StopCPUProfile()
			f.Close()
			os.Exit(st)
		}
	}
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run executes gprobe with args (args[0] is the program name) and returns
// the exit status. Exit statuses follow perf probe: 0 success, 129 usage
// errors, 234 (-EINVAL) parse errors of positional definitions, 254
// (-ENOENT) probe points or lines not found.
func run(args []string, stdout, stderr io.Writer) int {
	// On a terminal, control characters in what is printed (names and
	// lines from files gprobe does not control) are shown escaped.
	var flush []*termsafe.Writer
	safe := func(w io.Writer) io.Writer {
		if !isTerminal(w) {
			return w
		}
		t := termsafe.NewWriter(w)
		flush = append(flush, t)
		return t
	}
	st := newApp(safe(stdout), safe(stderr)).run(args)
	for _, t := range flush {
		t.Flush()
	}
	return st
}

// run is main for a, with a panic reported as an internal error.
func (a *app) run(args []string) (status int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(a.stderr, "gprobe: internal error: %v\n", r)
			status = exitInternal
		}
	}()
	return a.main(args)
}

// gcSwitchAt is the live heap above which tuneGC collects at 40%.
var gcSwitchAt atomic.Uint64

func init() { gcSwitchAt.Store(32 << 20) }

// tuneGC keeps Go's default pacing while the live heap is small, and
// collects at 40% once it passes gcSwitchAt (32 MiB unless a command
// lowers it). A warm run answers from the index in tens of milliseconds,
// where early collections would be most of its cost; a cold run's heap is
// mostly short-lived unit decodes, and collecting earlier keeps its peak
// memory well below perf's. The check runs after each collection (a
// finalizer re-armed every cycle) until it switches. It reads the heap
// with ReadMemStats, once per cycle, rather than through runtime/metrics,
// whose initialisation would cost every start.
func tuneGC() {
	type sentinel struct{ _ [16]byte }
	var arm func()
	arm = func() {
		runtime.SetFinalizer(new(sentinel), func(*sentinel) {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > gcSwitchAt.Load() {
				debug.SetGCPercent(40)
				return
			}
			arm()
		})
	}
	arm()
}
