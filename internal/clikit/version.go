package clikit

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is a program's --version line: the main module's version, the
// VCS revision it was built from, and the Go release, as in
// "(devel), revision 75118e6d… (modified), go1.26.8". The revision is
// Go's stamp (vcs.revision, vcs.modified); where Go stamps none (a build
// in a git worktree, or with -buildvcs=false), revision and modified
// ("true" for a tree with changes) stand in, as a linker's -X may set
// them; else it is "unknown".
func Version(revision, modified string) string {
	v, mod := "(devel)", modified == "true"
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				mod = s.Value == "true"
			}
		}
	}
	if revision == "" {
		revision = "unknown"
	} else if mod {
		revision += " (modified)"
	}
	return fmt.Sprintf("%s, revision %s, %s", v, revision, runtime.Version())
}
