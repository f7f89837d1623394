package target

// SetHost points the running system's description at fixtures (sysfs: the
// kernel's and loaded modules' notes; debugRoot: separate debug files) and
// returns what restores it.
func SetHost(sysfs, debugRoot string) (restore func()) {
	old := host
	host.sysfs, host.debugRoot = sysfs, debugRoot
	return func() { host = old }
}
