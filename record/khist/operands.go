package khist

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
)

// ErrUsage reports operands or settings of gprobe latency that are wrong
// as given (Operands, CheckSettings): nothing was looked at yet.
var ErrUsage = errors.New("latency usage")

// ErrOperands is the ErrUsage of operands that are missing or too many
// (perf's usage status), as opposed to a setting's value.
var ErrOperands = fmt.Errorf("operands: %w", ErrUsage)

// textError is an error whose message is the text alone, of the kind it
// wraps (ErrUsage, ErrOperands, ErrUnsupported).
type textError struct {
	msg  string
	kind error
}

func (e *textError) Error() string { return e.msg }
func (e *textError) Unwrap() error { return e.kind }

// Operands splits gprobe latency's operands: FUNC, then -- and the command
// to follow (none when args stop after FUNC). Its errors wrap ErrOperands.
func Operands(args []string) (fn string, command []string, err error) {
	if len(args) == 0 {
		return "", nil, &textError{"give the FUNC to measure (gprobe latency FUNC -- CMD ARGS...)", ErrOperands}
	}
	if len(args) > 1 && args[1] != "--" {
		return "", nil, &textError{fmt.Sprintf("one FUNC at a time, then -- and the command (have %q)", strings.Join(args, " ")), ErrOperands}
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
		return &textError{fmt.Sprintf("--by %q: want comm or pid", by), ErrUsage}
	}
	if len(command) == 0 && !all {
		return &textError{"nothing to follow: give a command after --, or -a", ErrUsage}
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
		return &textError{"--bootconfig prints a setup, --boot-report reads it: choose one", ErrOperands}
	case len(command) > 0 || all:
		return &textError{"a boot-time measurement counts every task from boot: no command or -a", ErrOperands}
	}
	return nil
}

// Open opens the running kernel's tracefs for a session, refusing a
// kernel without what it needs (Supported): nothing is resolved or
// created before. Its errors are tracefs.Open's, or wrap ErrUnsupported
// (also when the README cannot be read).
func Open() (*tracefs.FS, error) {
	fs, err := tracefs.Open()
	if err != nil {
		return nil, err
	}
	if err := Supported(fs); err != nil && !errors.Is(err, ErrUnsupported) {
		return nil, &textError{err.Error(), errors.Join(err, ErrUnsupported)}
	} else if err != nil {
		return nil, err
	}
	return fs, nil
}
