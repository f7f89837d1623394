// Package probedef is the kernel's probe-event grammar and its limits: it
// reads kprobe_events, uprobe_events and dynamic_events definition lines
// (kprobes, uprobes, fprobes, tracepoint probes and event probes) into the
// probe model (emit/probe.Probe), checking them as the kernel would before
// anything is written to tracefs. It is the one reader of definition lines
// (install, the listing of installed events and analyze all use Parse) and
// the one place for the kernel's limits.
//
// The checks follow the kernel's own parser step by step and in the same
// order, so a line the kernel would refuse is refused here with the kernel's
// message and the kernel's error position (the column of the `^` the kernel
// writes to error_log): kernel/trace/trace_kprobe.c, trace_uprobe.c,
// trace_eprobe.c and trace_probe.c of Linux 6.1, and, on kernels whose
// tracefs README shows the argument parser Linux 6.5 rewrote, those files
// and trace_fprobe.c of Linux 6.12. Which kinds and fetch arguments a line
// may use comes from the README's features ([Features]); a kind the target
// kernel lacks is refused naming the release that brought it. Checks that
// need the target kernel's state (does a symbol exist, is it unique, which
// probes already exist, its BTF, the fields of an attached event) run only
// when [Options] supplies that state.
package probedef

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
)

// ErrSyntax is wrapped by every *Error.
var ErrSyntax = errors.New("invalid probe definition")

// Error is a refused line: the kernel's message and the error position the
// kernel would log.
type Error struct {
	Kind    probe.Kind
	Code    string // the kernel's error name, "BAD_REG_NAME"
	Text    string // the kernel's message, "Invalid register name"
	Command string // argv joined with single spaces
	Pos     int    // caret offset in Command
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %q: %s", e.Kind.File(), e.Command, Describe(e.Command, e.Pos, e.Text))
}

func (e *Error) Unwrap() error { return ErrSyntax }

// ErrorLog renders the error as the kernel writes it to error_log (without
// the timestamp):
//
//	trace_kprobe: error: Invalid register name
//	  Command: p vfs_read %none_reg
//	                      ^
func (e *Error) ErrorLog() string {
	return fmt.Sprintf("%s: error: %s\n  Command: %s\n%s^", e.Kind.Subsystem(), e.Text, e.Command,
		strings.Repeat(" ", len("  Command: ")+e.Pos))
}

// Describe is a one-line description of an error at byte pos of command:
// the message, then the part of the line it concerns with a ^ at the error
// position (`Invalid register name (argument 1 "^%none_reg")`).
func Describe(command string, pos int, text string) string {
	toks := strings.Split(command, " ")
	start := 0
	for i, t := range toks {
		end := start + len(t)
		if pos >= start && pos <= end && !(pos == end && i+1 < len(toks)) {
			return fmt.Sprintf("%s (%s %q)", text, partName(i), t[:pos-start]+"^"+t[pos-start:])
		}
		start = end + 1
	}
	return fmt.Sprintf("%s (after the last argument of %q)", text, command)
}

func partName(i int) string {
	switch i {
	case 0:
		return "event"
	case 1:
		return "probe place"
	}
	return "argument " + strconv.Itoa(i-1)
}

// Options give the checks the state of the kernel the line is meant for.
// The zero value checks syntax for Linux 6.1 on the running architecture.
type Options struct {
	// Features of the target kernel; nil means AllFeatures.
	Features *Features
	// Arch selects the register names; the zero value means this machine.
	// An architecture gprobe does not know accepts any register name.
	Arch arch.Arch
	// AnyRegister accepts every %REG name: for lines a kernel of unknown
	// architecture already accepted (a recording's definitions).
	AnyRegister bool
	// Symbols, when set, counts the kernel text symbols named sym
	// (/proc/kallsyms), for BAD_PROBE_ADDR and NON_UNIQ_SYMBOL.
	Symbols func(sym string) int
	// Stat checks uprobe paths; nil means os.Stat. NoStat skips the check
	// (for lines meant for another machine).
	Stat   func(path string) (fs.FileInfo, error)
	NoStat bool
	// Existing probes of the target kernel, for the multi-probe checks
	// (DIFF_PROBE_TYPE, DIFF_ARG_TYPE, SAME_PROBE).
	Existing []*probe.Probe
	// BTF is the target kernel's BTF, for BTF arguments (parameter names,
	// $arg*, members, $retval's type); nil checks their syntax only.
	BTF BTF
	// EventFields, when set, lists the fields of a trace event, for
	// eprobes: ok is false when the kernel has no such event
	// (BAD_ATTACH_EVENT); an unknown field is refused as the kernel does.
	EventFields func(e probe.EventID) (fields []string, ok bool)
}

func (o *Options) features() *Features {
	if o == nil || o.Features == nil {
		return &AllFeatures
	}
	return o.Features
}
