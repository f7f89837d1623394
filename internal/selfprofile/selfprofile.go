// Package selfprofile profiles a command run, for benchmarking the command
// itself: with GPROBE_CPUPROFILE=FILE its CPU profile, with
// GPROBE_MEMPROFILE=FILE every allocation (live or not) is written to FILE
// in pprof's format.
package selfprofile

import (
	"os"
	"runtime"
	"runtime/pprof"
)

// Run runs run under the profiles the environment asks for and returns
// its status. A profile file that cannot be created is not written.
func Run(run func() int) int {
	if p := os.Getenv("GPROBE_MEMPROFILE"); p != "" {
		runtime.MemProfileRate = 1
		defer func() {
			if f, err := os.Create(p); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	if p := os.Getenv("GPROBE_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil {
			pprof.StartCPUProfile(f)
			defer func() {
				pprof.StopCPUProfile()
				f.Close()
			}()
		}
	}
	return run()
}
