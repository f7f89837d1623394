package clikit

import (
	"fmt"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestLineage: a flag given before or after the subcommand's name reads
// the same (the innermost given wins; an int given nowhere is the default
// asked for, not the flag's own); a negatable pair answers with the one
// given last.
func TestLineage(t *testing.T) {
	flags := func() []cli.Flag {
		return []cli.Flag{&cli.StringFlag{Name: "x"}, &cli.BoolFlag{Name: "q"}, &cli.IntFlag{Name: "n", Value: 5},
			&cli.BoolFlag{Name: "demangle", Value: true}, &cli.BoolFlag{Name: "no-demangle"}}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"p", "sub"}, `"" false 128 true`},
		{[]string{"p", "-x", "/bin/a", "-q", "-n", "3", "sub"}, `"/bin/a" true 3 true`},
		{[]string{"p", "sub", "-x", "/bin/b", "-n", "4"}, `"/bin/b" false 4 true`},
		{[]string{"p", "-x", "/bin/a", "-n", "3", "sub", "-x", "/bin/b", "-n", "4"}, `"/bin/b" false 4 true`},
		{[]string{"p", "sub", "--no-demangle"}, `"" false 128 false`},
		{[]string{"p", "--no-demangle", "sub", "--demangle"}, `"" false 128 true`},
		{[]string{"p", "--demangle", "sub", "--no-demangle"}, `"" false 128 false`},
	} {
		var got string
		app := &cli.App{Flags: flags(), Commands: []*cli.Command{{Name: "sub", Flags: flags(), Action: func(c *cli.Context) error {
			got = fmt.Sprintf("%q %v %d %v", String(c, "x"), Bool(c, "q"), Int(c, "n", 128), Negatable(c, tc.args, "demangle", true))
			return nil
		}}}}
		if err := app.Run(tc.args); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%v: %s, want %s", tc.args, got, tc.want)
		}
	}
}

// TestIsCommand: a command by name or alias, and help.
func TestIsCommand(t *testing.T) {
	app := &cli.App{Commands: []*cli.Command{{Name: "record", Aliases: []string{"rec"}}}}
	for s, want := range map[string]bool{"record": true, "rec": true, "help": true, "recrod": false, "": false} {
		if got := IsCommand(app, s); got != want {
			t.Errorf("IsCommand(%q) = %v", s, got)
		}
	}
}

// TestValueFlags: every name of a flag with a value, no boolean's.
func TestValueFlags(t *testing.T) {
	got := ValueFlags([]cli.Flag{&cli.StringFlag{Name: "vmlinux", Aliases: []string{"k"}}, &cli.BoolFlag{Name: "all", Aliases: []string{"a"}},
		&cli.IntFlag{Name: "max-probes"}, &cli.StringSliceFlag{Name: "add", Aliases: []string{"a2"}}})
	if fmt.Sprint(got) != "map[a2:true add:true k:true max-probes:true vmlinux:true]" {
		t.Errorf("%v", got)
	}
}
