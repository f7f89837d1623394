// Package selfprofile profiles a command run, for benchmarking the command
// itself: with GPROBE_CPUPROFILE=FILE its CPU profile, and in a program
// built with the memprofile tag (go build -tags memprofile), with
// GPROBE_MEMPROFILE=FILE every allocation (live or not), written to FILE in
// pprof's format.
//
// The allocation profile is left out of other builds because a program
// that can write one has Go sample an allocation every 512 KiB from its
// first, recording the stack of each: every record walks the stack through
// the program's pclntab and faults in pages of it (64 KiB around each),
// about a tenth of a short run's read-only resident set. Without a reader
// of the profile, the linker has the runtime turn the sampling off as it
// starts.
package selfprofile

import (
	"os"
	"runtime/pprof"
)

// Run runs run under the profiles the environment asks for and returns
// its status. A profile file that cannot be created is not written.
func Run(run func() int) int {
	defer startMemProfile()()
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
