package spec

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrSyntax is matched (errors.Is) by every grammar error of this package.
var ErrSyntax = errors.New("probe syntax error")

// CommandParseErrorTrailer is the line perf's command driver prints after
// the parser's message when a positional probe definition fails to parse
// (`perf probe [opts] PROBEDEF`); perf then exits with status 234.
// For -a/-D/-V/-L the driver instead prints an empty line and its usage
// text, and exits with status 129.
const CommandParseErrorTrailer = "  Error: Command Parse Error."

// semanticPrefix is what perf's semantic_error() macro prepends.
const semanticPrefix = "Semantic error :"

// SyntaxError is a grammar error. Perf holds the exact text perf 6.1's parser
// prints to stderr for the same input, without the final newline; the command
// driver's trailer ("  Error: Command Parse Error." or the usage block) is
// not part of it (see the package documentation).
type SyntaxError struct {
	// Perf is the parser's own stderr text, verbatim. It is empty only when
	// perf fails without a message (a probe definition with no words).
	Perf string
	// Errno is the error perf's parser returns, which is its exit status
	// for a positional definition (256 - errno): EINVAL when zero, ERANGE
	// for too many arguments, ENOTSUP for an unknown %suffix.
	Errno syscall.Errno
}

// Error returns Perf, or a short description when perf prints nothing.
func (e *SyntaxError) Error() string {
	if e.Perf == "" {
		return "empty probe definition"
	}
	return e.Perf
}

// Unwrap makes errors.Is(err, ErrSyntax) hold.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

func semErr(format string, a ...any) error {
	return &SyntaxError{Perf: semanticPrefix + fmt.Sprintf(format, a...)}
}
