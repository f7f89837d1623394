package clikit

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// OptionError words an error of urfave/cli's flag parsing (the standard
// library's flag package) as perf's parse-options does, the line perf
// prints before its usage: "  Error: unknown option `x'" (perf then
// prints a blank line; unknown is x), " Error: option `x' expects a
// numerical value" (or "takes no value", "requires a value"); a
// one-letter name is a "switch". Errors perf has no words for keep the
// flag package's.
func OptionError(err error) (msg, unknown string) {
	text := err.Error()
	opt := func(name, what string) string {
		name = strings.TrimLeft(name, "-")
		if len(name) == 1 {
			return " Error: switch `" + name + "' " + what
		}
		return " Error: option `" + name + "' " + what
	}
	if name, ok := strings.CutPrefix(text, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		if len(name) == 1 {
			return "  Error: unknown switch `" + name + "'", name
		}
		return "  Error: unknown option `" + name + "'", name
	}
	if name, ok := strings.CutPrefix(text, "flag needs an argument: "); ok {
		return opt(name, "requires a value"), ""
	}
	if rest, ok := strings.CutPrefix(text, "invalid boolean value "); ok {
		if _, after, ok := strings.Cut(rest, " for "); ok {
			name, _, _ := strings.Cut(after, ":")
			return opt(name, "takes no value"), ""
		}
	}
	if rest, ok := strings.CutPrefix(text, "invalid value "); ok {
		if _, after, ok := strings.Cut(rest, " for flag "); ok {
			name, _, _ := strings.Cut(after, ":")
			return opt(name, "expects a numerical value"), ""
		}
	}
	return " Error: " + text, ""
}

// UsageError writes to w what perf prints for a flag it could not parse
// (OptionError), with the flag of c's command an unknown one was probably
// meant to be, then usage.
func UsageError(w io.Writer, c *cli.Context, err error, usage string) {
	msg, unknown := OptionError(err)
	fmt.Fprintln(w, msg)
	if unknown != "" {
		var names []string
		for _, f := range c.Command.VisibleFlags() {
			names = append(names, f.Names()[0])
		}
		if s := Suggest(unknown, names); len(unknown) > 1 && s != "" {
			fmt.Fprintf(w, "  Did you mean --%s?\n", s)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, usage)
}
