// Package core is what every producer of the resolver shares: the probed
// image and the options it is resolved with, errors carrying perf's
// messages, trace points before they are named, perf's event naming, the
// kernel's limits on a definition, the places the symbol table gives, and
// the interfaces of the debug-information sources (Debug, Prototypes).
package core

import (
	"errors"
	"fmt"
	"syscall"
)

// Sentinel errors; returned errors wrap one of them.
var (
	// ErrNotFound: the probe point does not exist in the image.
	ErrNotFound = errors.New("probe point not found")
	// ErrNotBoundary: the address is inside an instruction.
	ErrNotBoundary = errors.New("probe address is not an instruction boundary")
	// ErrUnsupported: a valid spec gprobe cannot resolve (yet).
	ErrUnsupported = errors.New("not supported")
	// ErrInvalid: the spec asks for something impossible (e.g. a return
	// probe on an inlined function, an offset outside the function).
	ErrInvalid = errors.New("invalid probe point")
	// ErrNoDebugInfo: the question needs DWARF and the image has none
	// (stripped, or its DWARF split off into .dwo/.dwp files, which perf
	// does not follow either); it is a kind of ErrNotFound.
	ErrNoDebugInfo = fmt.Errorf("no debug information: %w", ErrNotFound)
	// ErrNeedsDWARF: the probe asks for what only DWARF describes.
	ErrNeedsDWARF = errors.New("needs DWARF debug information")
	// ErrTooManyFunctions: more functions match than --max-probes allows
	// (perf's -E2BIG, "Too many functions matched in ...").
	ErrTooManyFunctions = errors.New("too many functions matched")
	// ErrTooManyPoints: the DWARF search found more addresses than
	// --max-probes allows where only DWARF can answer (perf's -ERANGE,
	// "Too many( > N) probe point found.").
	ErrTooManyPoints = errors.New("too many probe points found")
)

// Errno is the error perf returns for a resolution failure, whose
// negation is its exit status (256 - errno): ENOENT when nothing was
// found, EINVAL for an impossible point, EOPNOTSUPP for what cannot be
// resolved, E2BIG for too many functions, ERANGE for too many points.
func Errno(err error) syscall.Errno {
	switch {
	case errors.Is(err, ErrInvalid), errors.Is(err, ErrNotBoundary):
		return syscall.EINVAL
	case errors.Is(err, ErrUnsupported):
		return syscall.EOPNOTSUPP
	case errors.Is(err, ErrTooManyFunctions):
		return syscall.E2BIG
	case errors.Is(err, ErrTooManyPoints):
		return syscall.ERANGE
	}
	return syscall.ENOENT
}

// Error is a resolution failure with perf's message text.
type Error struct {
	Msg string // perf's warning/error line(s), without trailing newline
	Err error  // sentinel
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error wrapping sentinel with the formatted message
// ("" for perf's failures whose reason was a warning).
func Errorf(sentinel error, format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...), Err: sentinel}
}
