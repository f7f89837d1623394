package perfprobe

import (
	"strings"
	"testing"

	"github.com/gprobe/gprobe/resolve/spec"
	"github.com/urfave/cli/v2"
)

// testFlags are a command's flags: perf's, and one of its own.
func testFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "vmlinux", Aliases: []string{"k"}},
		&cli.StringFlag{Name: "exec", Aliases: []string{"x"}},
		&cli.StringFlag{Name: "module", Aliases: []string{"m"}},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}},
		&cli.StringSliceFlag{Name: "definition", Aliases: []string{"D"}},
		&cli.StringSliceFlag{Name: "add", Aliases: []string{"a"}},
		&cli.StringSliceFlag{Name: "del", Aliases: []string{"d"}},
		&cli.BoolFlag{Name: "list", Aliases: []string{"l"}},
		&cli.BoolFlag{Name: "funcs", Aliases: []string{"F"}},
		&cli.StringFlag{Name: "filter"},
		&cli.StringFlag{Name: "line", Aliases: []string{"L"}},
		&cli.StringFlag{Name: "vars", Aliases: []string{"V"}},
		&cli.BoolFlag{Name: "ret-insn"},
		&cli.BoolFlag{Name: "bootconfig"},
		&cli.StringFlag{Name: "target-ns"},
	}
}

// TestParse: what perf accepts runs from the canonical options with
// what its callbacks record; what it refuses ends with perf's first words
// and status.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		args   []string
		run    string // the arguments to run, or the start of the report
		status int
		check  func(*State) bool
	}{
		{[]string{"-D", "vfs_read", "-D", "vfs_write x"}, "--definition=vfs_read --definition=vfs_write x", 0,
			func(st *State) bool { return len(st.Events) == 2 && st.Events[1] == "vfs_write x" }},
		{[]string{"-a", "f", "g", "x"}, "--add=f g x", 0, func(st *State) bool { return st.Events[1] == "g x " }},
		{[]string{"/bin/true", "main"}, "/bin/true main", 0, func(st *State) bool { return st.FirstPath && st.Events[0] == "main " }},
		{[]string{"-vv", "-L", "f:1-3"}, "--verbose --verbose --line=f:1-3", 0, func(st *State) bool { return st.Verbose == 2 && st.Line == "f:1-3" }},
		{[]string{"-F", "--filter", "a*"}, "--funcs --filter=a*", 0, func(st *State) bool { return st.Filter("") == spec.OrFilters([]string{DefaultFuncFilter, "a*"}) }},
		{[]string{"-l"}, "--list", 0, func(st *State) bool { return st.Filter("x") == "*" }},
		{[]string{"-L", "f%return", "--ret-insn"}, "--line=f%return --ret-insn", 0, nil},
		{[]string{"-D", "X", "Y"}, "  Error: another command except --add is set.", StatusUsage, nil},
		{[]string{"-q", "-v", "-D", "f"}, "  Error: -v and -q are exclusive.", StatusEINVAL, nil},
		{[]string{"-l", "-x", "/bin/true"}, "  Error: Don't use --list with --exec.", StatusEINVAL, nil},
		{[]string{"-D", "f", "-x", "/bin/true"}, "  Error: -x/-m must follow the probe definitions.", StatusEINVAL, nil},
		{[]string{"-x", "/bin/true", "--bootconfig", "-D", "f"}, "  Error: --bootconfig doesn't support uprobes.", StatusEINVAL, nil},
		{[]string{"/bin/true"}, "  Error: -x/-m must follow the probe definitions.", StatusEINVAL, nil},
		{[]string{"-k", "/nonexist", "-D", "f"}, "Invalid file: /nonexist", StatusEINVAL, nil},
		{[]string{"-x", "no-such-binary-here", "-D", "f"}, "Failed to get the absolute path of no-such-binary-here: No such file or directory", StatusUsage, nil},
		{[]string{"-V", "f", "-D", "g"}, " Error: switch `D' cannot be used with switch `V'", StatusUsage, nil},
		{[]string{"-V", "f x"}, VarsArgs + "\n\n Usage: gprobe [<options>] 'PROBEDEF'", StatusUsage, nil},
		{[]string{}, "\n Usage: gprobe [<options>] 'PROBEDEF'", StatusUsage, nil},
		{[]string{"f%foo"}, "", 256 - 95, nil}, // ENOTSUP
		{[]string{"-x", "/bin/true", "-D", "f"}, "--exec=/bin/true --definition=f", 0, nil},
		{[]string{"--target-ns", "1", "-x", "/in/its/namespace", "-D", "f"}, "--target-ns=1 --exec=/in/its/namespace --definition=f", 0, nil},
		{[]string{"-x", "/in/its/namespace", "-D", "f", "--target-ns", "1"}, "--exec=/in/its/namespace --definition=f --target-ns=1", 0, nil},
		{[]string{"-a", "p:g/e /bin/sh:0x10 x=%ax"}, "--add=p:g/e /bin/sh:0x10 x=%ax", 0, nil}, // the command's own (Raw)
		{[]string{"p:g/e", "/bin/sh:0x10"}, "p:g/e /bin/sh:0x10", 0, nil},
	} {
		var w strings.Builder
		p := &Parser{Flags: testFlags(), W: &w, LineFunc: []string{"ret-insn"}, Modes: []string{"ret-insn"},
			Raw: func(d string) bool { return strings.HasPrefix(d, "p:") }, Namespace: []string{"target-ns"}}
		run, st, status, done := p.Parse(append([]string{"gprobe"}, c.args...))
		if c.status == 0 {
			if done || strings.Join(run[1:], " ") != c.run || (c.check != nil && !c.check(st)) {
				t.Errorf("%q: run %q, status %d, done %v, state %+v, printed %q", c.args, run, status, done, st, w.String())
			}
			continue
		}
		if !done || status != c.status || !strings.Contains(w.String(), c.run) {
			t.Errorf("%q: status %d, done %v, printed %q; want %d and %q", c.args, status, done, w.String(), c.status, c.run)
		}
	}
}

// TestUsageText: perf's usage lines, for gprobe, without the options.
func TestUsageText(t *testing.T) {
	u := UsageText()
	if !strings.HasPrefix(u, " Usage: gprobe [<options>] 'PROBEDEF' ['PROBEDEF' ...]\n    or: ") || strings.Contains(u, "--vmlinux") {
		t.Errorf("%q", u)
	}
}

// TestFirstTarget: a first absolute path is a module (.ko) or a binary,
// only when the parse said so.
func TestFirstTarget(t *testing.T) {
	for _, c := range []struct {
		st                 *State
		exec, module, rest string
	}{
		{nil, "", "", "/bin/zsh zfree"},
		{&State{}, "", "", "/bin/zsh zfree"},
		{&State{FirstPath: true}, "/bin/zsh", "", "zfree"},
	} {
		exec, module, rest := c.st.FirstTarget([]string{"/bin/zsh", "zfree"})
		if exec != c.exec || module != c.module || strings.Join(rest, " ") != c.rest {
			t.Errorf("%+v: %q %q %q", c.st, exec, module, rest)
		}
	}
	if exec, module, rest := (&State{FirstPath: true}).FirstTarget([]string{"/lib/m.ko", "f"}); exec != "" || module != "/lib/m.ko" || len(rest) != 1 {
		t.Errorf(".ko: %q %q %q", exec, module, rest)
	}
}
