package clikit

import (
	"flag"
	"io"
	"testing"
)

// TestOptionError: the flag package's errors, as perf words them (perf
// probe 6.1: "perf probe --bogus", "-Z", "--max-probes x", "--dry-run=1").
func TestOptionError(t *testing.T) {
	for args, want := range map[string]string{
		"--bogus":        "  Error: unknown option `bogus'|bogus",
		"-Z":             "  Error: unknown switch `Z'|Z",
		"--max-probes=x": " Error: option `max-probes' expects a numerical value|",
		"-n=x":           " Error: switch `n' expects a numerical value|",
		"--unit":         " Error: option `unit' requires a value|",
		"--dry-run=2":    " Error: option `dry-run' takes no value|",
		"---x":           " Error: bad flag syntax: ---x|",
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Int("max-probes", 0, "")
		fs.Int("n", 0, "")
		fs.String("unit", "", "")
		fs.Bool("dry-run", false, "")
		err := fs.Parse([]string{args})
		if err == nil {
			t.Fatalf("%s parsed", args)
		}
		msg, unknown := OptionError(err)
		if got := msg + "|" + unknown; got != want {
			t.Errorf("%s: %q\nwant %q", args, got, want)
		}
	}
}
