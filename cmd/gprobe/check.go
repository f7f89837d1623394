package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/perfprobe"
	"github.com/gprobe/gprobe/resolve/portability"
)

// check: one probe list against many kernels (resolve/portability).

// exitUnresolved is check's status when a point resolves on no kernel.
const exitUnresolved = 1

func (a *app) checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "resolve a probe list against many kernels and print where each point resolves",
		ArgsUsage: "KERNEL...",
		Description: "Each KERNEL is a vmlinux with DWARF, a vmlinux with only symbols and .BTF, or a raw BTF file\n" +
			"(a saved /sys/kernel/btf/vmlinux). Per point and kernel: ok, inlined, clone, missing, arg-missing,\n" +
			"field-moved or line-moved, with the number of sites. Exits 1 when a point resolves on no kernel.",
		Flags:  perfprobe.CheckFlags(),
		Action: func(c *cli.Context) error { return a.set(a.check(c)) },
	}
}

func (a *app) check(c *cli.Context) int {
	if c.NArg() == 0 {
		fmt.Fprintln(a.stderr, "gprobe check: give the KERNEL files to check the probe list against")
		return exitUsage
	}
	req := portability.Request{Probes: c.String("probes"), Kernels: c.Args().Slice(), OutDir: c.String("out"), JSON: c.Bool("json"),
		Options: portability.Options{MaxProbes: c.Int("max-probes"), Jobs: c.Int("jobs")}}
	if feat, known := tracefs.RunningFeatures(); known {
		req.Options.Features = &feat
	}
	bad, err := req.Run(a.stdout, a.stderr)
	if err != nil {
		fmt.Fprintf(a.stderr, "gprobe check: %v\n", err)
		if errors.Is(err, portability.ErrBadProbeList) {
			return exitEINVAL
		}
		return exitENOENT
	}
	for _, s := range bad {
		fmt.Fprintf(a.stderr, "gprobe check: %q resolves on no kernel\n", s)
	}
	if len(bad) > 0 {
		return exitUnresolved
	}
	return exitOK
}
