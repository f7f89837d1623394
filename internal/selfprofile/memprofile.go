//go:build memprofile

package selfprofile

import (
	"os"
	"runtime"
	"runtime/pprof"
)

// MemProfile reports whether this build writes GPROBE_MEMPROFILE.
const MemProfile = true

// startMemProfile records every allocation when GPROBE_MEMPROFILE names a
// file, and returns what writes the profile there.
func startMemProfile() (stop func()) {
	p := os.Getenv("GPROBE_MEMPROFILE")
	if p == "" {
		return func() {}
	}
	runtime.MemProfileRate = 1
	return func() {
		if f, err := os.Create(p); err == nil {
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
}
