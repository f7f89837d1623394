package clikit

import "github.com/urfave/cli/v2"

// SetIn returns the innermost context of c's lineage where the flag name
// was given on the command line, nil when it was given nowhere. (urfave's
// IsSet looks through the lineage and String then answers from the local
// flag set, so a flag given before a subcommand would read as its empty
// local default.)
func SetIn(c *cli.Context, name string) *cli.Context {
	for _, x := range c.Lineage() {
		for _, n := range x.LocalFlagNames() {
			if n == name {
				return x
			}
		}
	}
	return nil
}

// String is the string flag name as given on this command or any parent
// (a command's flags may come before or after its name), "" when it was
// given nowhere.
func String(c *cli.Context, name string) string {
	if x := SetIn(c, name); x != nil {
		return x.String(name)
	}
	return ""
}

// Bool is String for boolean flags: false when it was given nowhere.
func Bool(c *cli.Context, name string) bool {
	if x := SetIn(c, name); x != nil {
		return x.Bool(name)
	}
	return false
}

// Int is String for int flags: def when it was given nowhere.
func Int(c *cli.Context, name string, def int) int {
	if x := SetIn(c, name); x != nil {
		return x.Int(name)
	}
	return def
}

// Negatable is perf's boolean option name that --no-name turns off: of the
// two, the one given last in args (the command line) wins; def when
// neither is given.
func Negatable(c *cli.Context, args []string, name string, def bool) bool {
	on, off := SetIn(c, name), SetIn(c, "no-"+name)
	switch {
	case on == nil && off == nil:
		return def
	case off == nil:
		return on.Bool(name)
	case on == nil:
		return !off.Bool("no-" + name)
	}
	for i := len(args) - 1; i > 0; i-- {
		switch args[i] {
		case "--" + name:
			return true
		case "--no-" + name:
			return false
		}
	}
	return def
}

// IsCommand reports whether s names one of app's commands, or help.
func IsCommand(app *cli.App, s string) bool {
	if s == "help" {
		return true
	}
	for _, c := range app.Commands {
		if c.HasName(s) {
			return true
		}
	}
	return false
}

// ValueFlags are the names (aliases included) of those of flags that
// take a value: all but boolean flags (Interspersed's valueFlags).
func ValueFlags(flags []cli.Flag) map[string]bool {
	out := map[string]bool{}
	for _, f := range flags {
		if _, isBool := f.(*cli.BoolFlag); !isBool {
			for _, n := range f.Names() {
				out[n] = true
			}
		}
	}
	return out
}
