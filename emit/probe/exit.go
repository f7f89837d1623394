package probe

import (
	"strconv"
	"strings"
)

// Exit is which way out of a function a plain probe sits on. A return
// probe (kretprobe, uretprobe) catches a return through the return
// address; gprobe's return-instruction probes (--ret-insn) are plain p:
// probes on each instruction by which a function leaves, which their
// definition line cannot tell from an entry probe but by the event's name:
// gprobe names those events with ExitEvent, and readers (analyze) learn
// what they are with EventExit.
type Exit uint8

const (
	// NoExit is any other probe (return probes are Probe.Return).
	NoExit Exit = iota
	// ExitInsn is a plain probe on a return instruction of the function:
	// "FUNC__retinsn".
	ExitInsn
	// ExitTailCall is a plain probe on a tail call of the function, where
	// its frame ends and the callee returns to its caller:
	// "FUNC__tailcall".
	ExitTailCall
)

// The event-name suffixes of the plain-probe exits, after the function's
// event name.
const (
	retInsnSuffix  = "__retinsn"
	tailCallSuffix = "__tailcall"
)

// ExitEvent is the event name of the probes of kind e (ExitInsn or
// ExitTailCall) on the exits of the function whose entry event is base:
// "vfs_read__retinsn", "fd_install__tailcall". For any other kind it is
// base.
func ExitEvent(base string, e Exit) string {
	switch e {
	case ExitInsn:
		return base + retInsnSuffix
	case ExitTailCall:
		return base + tailCallSuffix
	}
	return base
}

// EventExit reads an event name made by ExitEvent, perhaps with an _N
// suffix (Suffixed: "vfs_read__retinsn_1"): the exit kind and the entry
// event's name. Any other name gives NoExit and "".
func EventExit(event string) (Exit, string) {
	for _, k := range []Exit{ExitInsn, ExitTailCall} {
		suffix := ExitEvent("", k)
		i := strings.LastIndex(event, suffix)
		if i <= 0 {
			continue
		}
		rest := event[i+len(suffix):]
		if rest == "" {
			return k, event[:i]
		}
		if n, ok := strings.CutPrefix(rest, "_"); ok {
			if v, err := strconv.Atoi(n); err == nil && v > 0 && strconv.Itoa(v) == n {
				return k, event[:i]
			}
		}
	}
	return NoExit, ""
}
