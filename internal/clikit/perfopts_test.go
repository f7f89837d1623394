package clikit

import (
	"strings"
	"testing"
)

// testOptions is a small command with perf's kinds of options; each
// call of a callback is recorded as "long=value" ("no-long" when negated).
func testOptions(w *strings.Builder, calls *[]string) *Options {
	rec := func(long string, ok bool) func(string, bool) bool {
		return func(v string, unset bool) bool {
			if unset {
				*calls = append(*calls, "no-"+long)
			} else {
				*calls = append(*calls, long+"="+v)
			}
			return ok
		}
	}
	return &Options{Usage: []string{"cmd [<options>] ARG", "cmd --list"}, W: w, Options: []Option{
		{Short: 'v', Long: "verbose", Help: "more", Set: rec("verbose", true)},
		{Short: 'n', Long: "dry-run", Help: "dry run", Set: rec("dry-run", true)},
		{Short: 'k', Long: "vmlinux", Arg: Value, Argh: "file", Help: "vmlinux pathname", Set: rec("vmlinux", true)},
		{Short: 'D', Long: "definition", Arg: Value, Argh: "DEF", Help: "Show definition.", Exclusive: true, Set: rec("definition", true)},
		{Short: 'd', Long: "del", Arg: Value, Argh: "EVENT", Help: "delete.", Exclusive: true, Set: rec("del", true)},
		{Short: 'F', Long: "funcs", Arg: LastDefault, Default: "!_*", Argh: "[FILTER]", Help: "Show functions.", Exclusive: true, Set: rec("funcs", true)},
		{Long: "max-probes", Arg: Integer, Help: "how many.", Set: rec("max-probes", true)},
		{Long: "no-inlines", Help: "Don't search inlined functions", Set: rec("no-inlines", true)},
		{Short: 'x', Long: "exec", Arg: Value, Argh: "path", Help: "target", Set: rec("exec", false)},
	}}
}

// TestPerfParse: accepted command lines give the callbacks perf's
// callbacks get, in order, and the canonical spelling; refused ones give
// perf's words (parse-options.c), usage and option help.
func TestPerfParse(t *testing.T) {
	for _, c := range []struct {
		args      []string
		calls     string // the callbacks, space-separated
		canonical string
		operands  string
	}{
		{[]string{"-nv", "-kvm", "-Dfoo", "bar", "-n"}, "dry-run= verbose= vmlinux=vm definition=foo", "--dry-run --verbose --vmlinux=vm --definition=foo", "bar -n"},
		{[]string{"-k", "-n", "--defin=x"}, "vmlinux=-n definition=x", "--vmlinux=-n --definition=x", ""},
		{[]string{"-F"}, "funcs=!_*", "--funcs", ""},
		{[]string{"-F", "vfs_*", "op"}, "funcs=vfs_*", "--funcs", "op"},
		{[]string{"-F", "-n"}, "funcs=!_* dry-run=", "--funcs --dry-run", ""},
		{[]string{"--funcs=a*", "--", "-x"}, "funcs=a*", "--funcs", "-x"},
		{[]string{"--no-dry-run", "--inlines", "--no-no-inlines"}, "no-dry-run no-no-inlines no-no-inlines", "--dry-run=false --no-inlines=false --no-inlines=false", ""},
		{[]string{"--max-probes", "12", "--max-probes=", "-D", "a", "-D", "b"}, "max-probes=12 max-probes= definition=a definition=b", "--max-probes=12 --max-probes= --definition=a --definition=b", ""},
		{[]string{"--verb", "--dr"}, "verbose= dry-run=", "--verbose --dry-run", ""},
	} {
		var w strings.Builder
		var calls []string
		p, ok := testOptions(&w, &calls).Parse(c.args)
		if !ok || w.Len() != 0 || strings.Join(calls, " ") != c.calls || strings.Join(p.Canonical, " ") != c.canonical || strings.Join(p.Operands, " ") != c.operands {
			t.Errorf("%q: ok %v, calls %q, canonical %q, operands %q, printed %q\nwant calls %q, canonical %q, operands %q",
				c.args, ok, calls, p.Canonical, p.Operands, w.String(), c.calls, c.canonical, c.operands)
		}
	}
	usage := "\n Usage: cmd [<options>] ARG\n    or: cmd --list\n\n"
	helpD := "    -D, --definition <DEF>\n                          Show definition.\n"
	helpF := "    -F, --funcs <[FILTER]>\n                          Show functions.\n"
	helpX := "    -x, --exec <path>     target\n"
	all := usage + helpD + "    -d, --del <EVENT>     delete.\n" + helpF + "    -k, --vmlinux <file>  vmlinux pathname\n" +
		"    -n, --dry-run         dry run\n    -v, --verbose         more\n" + helpX +
		"        --max-probes <n>  how many.\n        --no-inlines      Don't search inlined functions\n\n"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-D", "a", "-F"}, " Error: switch `F' cannot be used with switch `D'" + usage + helpF + helpD},
		{[]string{"--funcs", "-D", "a"}, " Error: switch `D' cannot be used with switch `F'" + usage + helpD + helpF},
		{[]string{"-F", "--definition", "a"}, " Error: option `definition' cannot be used with funcs" + usage + helpD + helpF},
		{[]string{"-k"}, " Error: switch `k' requires a value" + usage + "    -k, --vmlinux <file>  vmlinux pathname\n"},
		{[]string{"--vmlinux"}, " Error: option `vmlinux' requires a value" + usage + "    -k, --vmlinux <file>  vmlinux pathname\n"},
		{[]string{"--max-probes", "1x"}, " Error: option `max-probes' expects a numerical value" + usage + "        --max-probes <n>  how many.\n"},
		{[]string{"--dry-run=1"}, " Error: option `dry-run' takes no value" + usage},
		{[]string{"--no-vmlinux=x"}, " Error: option `no-vmlinux' takes no value" + usage},
		{[]string{"--d", "x"}, " Error: Ambiguous option: d (could be --definition or --del)\n" + usage + "    -n, --dry-run         dry run\n" + helpD + "    -d, --del <EVENT>     delete.\n"},
		{[]string{"-nZ"}, "  Error: unknown switch `Z'\n" + all},
		{[]string{"--bogus"}, "  Error: unknown option `bogus'\n" + all},
		{[]string{"-verbose"}, " Error: did you mean `--verbose` (with two dashes ?)\n"},
		{[]string{"-nerbose"}, "  Error: unknown switch `e'\n" + all},
		{[]string{"-x", "prog"}, usage + helpX},
	} {
		var w strings.Builder
		var calls []string
		if _, ok := testOptions(&w, &calls).Parse(c.args); ok || w.String() != c.want {
			t.Errorf("%q: ok %v, printed\n%s\nwant\n%s", c.args, ok, w.String(), c.want)
		}
	}
	var w strings.Builder
	testOptions(&w, new([]string)).WriteUsage("another command except --add is set.\n")
	if w.String() != "  Error: another command except --add is set.\n\n"+all {
		t.Errorf("WriteUsage:\n%s", w.String())
	}
}

// TestPerfParseExactName: an option named exactly "no-X" is taken over the
// negation of an earlier option X (perf has no such pair; gprobe's
// --no-cache is not perf's negated --cache); a negation without such an
// option still negates.
func TestPerfParseExactName(t *testing.T) {
	var w strings.Builder
	o := &Options{W: &w, Options: []Option{{Long: "cache"}, {Long: "no-cache"}, {Long: "demangle"}}}
	p, ok := o.Parse([]string{"--no-cache", "--no-demangle", "--cache"})
	if got := strings.Join(p.Canonical, " "); !ok || got != "--no-cache --demangle=false --cache" {
		t.Errorf("ok %v, canonical %q, printed %q", ok, got, w.String())
	}
}
