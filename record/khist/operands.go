package khist

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
)

// ErrUsage reports operands or settings of gprobe latency that are wrong
// as given (Operands, CheckSettings): nothing was looked at yet.
var ErrUsage = errors.New("latency usage")

// ErrOperands is the ErrUsage of operands that are missing or too many
// (perf's usage status), as opposed to a setting's value.
var ErrOperands = fmt.Errorf("operands: %w", ErrUsage)

// usageError is an ErrUsage: its message is the text alone.
type usageError struct {
	msg  string
	kind error
}

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Unwrap() error { return e.kind }

// Operands splits gprobe latency's operands: FUNC, then -- and the command
// to follow (none when args stop after FUNC). Its errors wrap ErrOperands.
func Operands(args []string) (fn string, command []string, err error) {
	if len(args) == 0 {
		return "", nil, &usageError{"give the FUNC to measure (gprobe latency FUNC -- CMD ARGS...)", ErrOperands}
	}
	if len(args) > 1 && args[1] != "--" {
		return "", nil, &usageError{fmt.Sprintf("one FUNC at a time, then -- and the command (have %q)", strings.Join(args, " ")), ErrOperands}
	}
	if len(args) > 1 {
		command = args[2:]
	}
	return args[0], command, nil
}

// CheckSettings refuses, before anything is resolved or created, a
// measurement keyed by anything but "", "comm" or "pid", or one that
// follows nothing (no command and not all). Its errors wrap ErrUsage.
func CheckSettings(by string, command []string, all bool) error {
	if by != "" && by != "comm" && by != "pid" {
		return &usageError{fmt.Sprintf("--by %q: want comm or pid", by), ErrUsage}
	}
	if len(command) == 0 && !all {
		return &usageError{"nothing to follow: give a command after --, or -a", ErrUsage}
	}
	return nil
}

// BootConfigText is BootConfig's setup as Extra Boot Config text.
func BootConfigText(entry probe.Probe, rets []probe.Probe, by string) (string, error) {
	c, err := BootConfig(entry, rets, by)
	if err != nil {
		return "", err
	}
	return c.Render()
}

// CheckBoot refuses a boot-time measurement that both prints its setup
// (bootconfig) and reads what it counted (report), or that names a
// command to follow or all (it counts every task from boot). Its errors
// wrap ErrOperands.
func CheckBoot(bootconfig, report bool, command []string, all bool) error {
	switch {
	case bootconfig && report:
		return &usageError{"--bootconfig prints a setup, --boot-report reads it: choose one", ErrOperands}
	case len(command) > 0 || all:
		return &usageError{"a boot-time measurement counts every task from boot: no command or -a", ErrOperands}
	}
	return nil
}
