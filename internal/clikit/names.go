package clikit

import "github.com/urfave/cli/v2"

// urfave/cli derives a flag's names again, through a regular expression,
// each time it asks for them, and before running a command it looks up
// every flag of the command and its parents once per flag: a tenth of a
// short gprobe run. The wrappers below answer Names from a copy made once;
// every other method is the flag's own. Names are derived on first use:
// most commands never ask about most flags.

type fixedBoolFlag struct {
	*cli.BoolFlag
	names *names
}

type fixedStringFlag struct {
	*cli.StringFlag
	names *names
}

type fixedIntFlag struct {
	*cli.IntFlag
	names *names
}

type fixedStringSliceFlag struct {
	*cli.StringSliceFlag
	names *names
}

func (f fixedBoolFlag) Names() []string        { return f.names.get(f.BoolFlag) }
func (f fixedStringFlag) Names() []string      { return f.names.get(f.StringFlag) }
func (f fixedIntFlag) Names() []string         { return f.names.get(f.IntFlag) }
func (f fixedStringSliceFlag) Names() []string { return f.names.get(f.StringSliceFlag) }

// names holds a flag's names once derived.
type names struct{ list []string }

func (n *names) get(f cli.Flag) []string {
	if n.list == nil {
		n.list = f.Names()
	}
	return n.list
}

// FixNames wraps the flags of app and of all its commands so that each
// derives its names once.
func FixNames(app *cli.App) *cli.App {
	app.Flags = fixNames(app.Flags)
	var walk func([]*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			c.Flags = fixNames(c.Flags)
			walk(c.Subcommands)
		}
	}
	walk(app.Commands)
	return app
}

func fixNames(fs []cli.Flag) []cli.Flag {
	for i, f := range fs {
		switch f := f.(type) {
		case *cli.BoolFlag:
			fs[i] = fixedBoolFlag{f, new(names)}
		case *cli.StringFlag:
			fs[i] = fixedStringFlag{f, new(names)}
		case *cli.IntFlag:
			fs[i] = fixedIntFlag{f, new(names)}
		case *cli.StringSliceFlag:
			fs[i] = fixedStringSliceFlag{f, new(names)}
		}
	}
	return fs
}
