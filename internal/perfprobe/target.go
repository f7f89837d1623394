package perfprobe

import (
	"cmp"
	"strconv"

	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/spec"
	"github.com/gprobe/gprobe/resolve/target"
)

// Target is what a command line names to probe: -k, -x, -m, --target-ns
// and --target as given, and perf's first-path target (an absolute path
// before the definitions, State.FirstPath: a .ko file a module, anything
// else a binary whose path is used as given).
type Target struct {
	Vmlinux, Exec, Module, TargetNS, TargetPID string
	FirstExec, FirstModule                     string
}

// ExecPath is the user binary probed: -x, else the path before the
// definitions.
func (t Target) ExecPath() string { return cmp.Or(t.Exec, t.FirstExec) }

// ModulePath is the module probed: -m, else the .ko path before the
// definitions.
func (t Target) ModulePath() string { return cmp.Or(t.Module, t.FirstModule) }

// ProcessExec reports whether the binary probed is the executable of
// --target's process: --target without -x, -m or -k.
func (t Target) ProcessExec() bool {
	return t.TargetPID != "" && t.ExecPath() == "" && t.ModulePath() == "" && t.Vmlinux == ""
}

// User reports whether a user binary is probed: -x, the path before the
// definitions, or --target's process's executable.
func (t Target) User() bool { return t.ExecPath() != "" || t.ProcessExec() }

// MountNS is the process whose mount namespace --target-ns (else
// --target) names: 0 without either, -1 when the value is not a process
// id (target.Open refuses it).
func (t Target) MountNS() int {
	v := cmp.Or(t.TargetNS, t.TargetPID)
	if v == "" {
		return 0
	}
	pid, err := strconv.Atoi(v)
	if err != nil || pid <= 0 {
		return -1
	}
	return pid
}

// ParseOptions are the PROBEDEF grammar's options for what t names: the
// variables after FUNC%return are entry values on a kernel, the results
// and arguments at the return instructions in a Go program; perf refuses
// them elsewhere.
func (t Target) ParseOptions() spec.Options {
	return spec.Options{EntryValues: !t.User() || t.ExecPath() != "" && resolve.IsGoProgram(t.ExecPath())}
}

// Options are the target.Options of what t names; the caller adds how to
// open it (BTF, symfs, caches, debuginfod, reports).
func (t Target) Options() target.Options {
	return target.Options{Vmlinux: t.Vmlinux, Exec: t.ExecPath(), Module: t.ModulePath(),
		ExecAsGiven: t.FirstExec != "" && t.Exec == "", MountNS: t.MountNS(), ProcessExec: t.ProcessExec()}
}

// Points maps installed probes back to probe points for -l and the report
// of -a: through -k's vmlinux or the running kernel's debuginfo, else
// through /proc/kallsyms (install.RunningSymbols, read when a kernel
// probe needs it).
func (t Target) Points() *resolve.Points {
	p := resolve.NewPoints(t.Vmlinux)
	p.Kernel = install.RunningSymbols{}
	return p
}
