package perfprobe

import (
	"strings"
	"testing"
)

// TestMisplaced: each extension where it applies, and where it does not.
func TestMisplaced(t *testing.T) {
	for flags, want := range map[string]string{
		"boot definition":            "",
		"bootconfig definition":      "",
		"boot":                       "--boot prints definitions: use it with -D",
		"bootconfig add":             "--bootconfig prints definitions: use it with -D",
		"boot bootconfig definition": "--boot and --bootconfig: choose one",
		"ret-insn":                   "--ret-insn goes with -D, -a or -L",
		"ret-insn line":              "",
		"ret-insn add":               "",
		"ret-insn operands":          "",
		"cache":                      "--cache goes with -l or -d: gprobe adds no probes to perf's probe cache",
		"cache list":                 "",
		"cache del":                  "",
		"":                           "",
	} {
		set := strings.Fields(flags)
		on := func(n string) bool { return strings.Contains(" "+flags+" ", " "+n+" ") }
		if got := Misplaced(on, len(set) > 0 && set[len(set)-1] == "operands"); got != want {
			t.Errorf("%q: %q, want %q", flags, got, want)
		}
	}
}
