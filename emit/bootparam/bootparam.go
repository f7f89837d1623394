// Package bootparam writes probes as the kernel command-line parameter
// that defines them at boot: kprobe_event= (Linux 5.5 and later,
// kernel/trace/trace_kprobe.c), and says why a probe cannot be written so.
//
// The rules are the kernel's, as 6.1 and 6.12 read the parameter:
//
//   - the command line is split into parameters at white space, and a
//     double quote toggles quoting and is removed (lib/cmdline.c next_arg);
//   - kprobe_event='s value is copied into a COMMAND_LINE_SIZE buffer, every
//     ',' in it becomes a space, and ';' separates definitions, each then
//     read like a line of kprobe_events (setup_boot_kprobe_events);
//   - only kprobes and kretprobes are read there (there is no uprobe or
//     fprobe parameter), and a second kprobe_event= replaces the first;
//   - the events are enabled in the top-level trace buffer as they are
//     created (enable_boot_kprobe_events, at fs_initcall): trace_event=,
//     read at early_initcall before they exist, cannot name them, and
//     nothing else is needed to enable them;
//   - but that buffer keeps its boot size, one page per CPU, until tracefs
//     is first used (ring_buffer_expanded), so early events overwrite
//     each other unless a boot-time tracer expands it (BufferParam).
//
// So a definition holding a comma, a semicolon, a double quote or white
// space inside a word (only a string immediate \"..." can) does not fit,
// nor does a parameter longer than the command line.
package bootparam

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
)

// CommandLineSize is the kernel's COMMAND_LINE_SIZE on x86-64 and arm64
// (2048 bytes with the terminating NUL, in 6.1 and 6.12): the whole command
// line, and the buffer kprobe_event='s value is copied into, hold at most
// CommandLineSize-1 bytes.
const CommandLineSize = 2048

// Param is the parameter's name, with its '='.
const Param = "kprobe_event="

// BufferParam makes the kernel allocate its whole trace buffer at boot:
// ftrace=nop starts the tracer the kernel runs anyway, and a tracer named
// on the command line expands the buffer (set_cmdline_ftrace). Without it,
// Debian's 6.1 kept 251 of the 1121 events its boot wrote.
const BufferParam = "ftrace=nop"

// ErrDoesNotFit: a probe cannot be written on the kernel command line.
var ErrDoesNotFit = errors.New("does not fit on the kernel command line")

// Error says which definition does not fit and why. It wraps
// ErrDoesNotFit.
type Error struct {
	Definition string // the probe's definition line, "" for the whole parameter
	Reason     string
}

func (e *Error) Error() string {
	if e.Definition == "" {
		return fmt.Sprintf("%s: %s", ErrDoesNotFit, e.Reason)
	}
	return fmt.Sprintf("\"%s\" %s: %s", e.Definition, ErrDoesNotFit, e.Reason)
}

func (e *Error) Unwrap() error { return ErrDoesNotFit }

// KprobeEvent returns the kprobe_event= parameter defining probes at boot:
// each definition with its spaces written as commas, ';' between them.
// Every probe must fit (see the package comment); the first that does not
// is an *Error, as is a parameter of CommandLineSize bytes or more, which
// also shares the command line with everything else on it.
func KprobeEvent(probes []probe.Probe) (string, error) {
	if len(probes) == 0 {
		return "", &Error{Reason: "no probe to define"}
	}
	defs := make([]string, 0, len(probes))
	for _, p := range probes {
		def := p.String()
		if p.Kind != probe.Kprobe {
			return "", &Error{Definition: def, Reason: fmt.Sprintf("the kernel defines only kprobes at boot (kprobe_event=); there is no boot parameter for %s events", p.Kind)}
		}
		if err := fits(def); err != nil {
			return "", err
		}
		defs = append(defs, strings.ReplaceAll(def, " ", ","))
	}
	param := Param + strings.Join(defs, ";")
	if n := len(param) + 1 + len(BufferParam); n >= CommandLineSize {
		return "", &Error{Reason: fmt.Sprintf("kprobe_event= would take %d bytes; the kernel's command line holds %d in all (COMMAND_LINE_SIZE %d)", len(param), CommandLineSize-1, CommandLineSize)}
	}
	return param, nil
}

// CommandLine is what to add to the kernel command line to trace probes
// from boot: KprobeEvent's parameter, then BufferParam.
func CommandLine(probes []probe.Probe) (string, error) {
	param, err := KprobeEvent(probes)
	if err != nil {
		return "", err
	}
	return param + " " + BufferParam, nil
}

// fits checks one definition line against the rules of the package comment.
func fits(def string) error {
	for i := 0; i < len(def); i++ {
		var why string
		switch c := def[i]; {
		case c == ',':
			why = "it holds a comma, which the kernel turns into a space"
		case c == ';':
			why = "it holds a semicolon, which separates definitions"
		case c == '"':
			why = "it holds a double quote, which the command line's parser takes for quoting and removes"
		case c == ' ' && (i == 0 || i == len(def)-1 || def[i+1] == ' '):
			why = "it has white space other than single spaces between words"
		case c != ' ' && (c <= ' ' || c == 0x7f):
			why = fmt.Sprintf("it holds the control character %q, which the command line cannot carry", c)
		}
		if why != "" {
			return &Error{Definition: def, Reason: why}
		}
	}
	return nil
}
