//go:build !memprofile

package selfprofile

// MemProfile reports whether this build writes GPROBE_MEMPROFILE.
const MemProfile = false

func startMemProfile() (stop func()) { return func() {} }
