// Package resolve turns perf-probe style probe points into probe.Probe
// values, the way perf probe 6.1 does, and answers perf's other questions
// about an image: -L (LineRange), -V (AvailableVars), -F (Functions), -l
// (Points). Open is its one constructor: it opens what the options name (a
// vmlinux, a module, a user binary, or the kernel's BTF alone; see
// resolve/target) and returns the Resolver.
//
// The tree below it: resolve/spec is perf's input grammar (probe points,
// arguments, line ranges, globs and filters); resolve/target finds and
// opens images; resolve/portability checks one probe list on many kernels;
// resolve/debuginfod fetches what is not on disk and resolve/dwarfindex
// caches what a run learnt about an image. What is not API is under
// resolve/internal: the dispatcher (resolver), the sources (finder and vars
// read DWARF, btfinfo BTF, symtab perf's symbol maps) and the producers of
// the modern kinds (dynamic) and of --ret-insn (exits).
package resolve

import (
	"context"
	"debug/elf"
	"syscall"

	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/exits"
	"github.com/gprobe/gprobe/resolve/internal/finder"
	"github.com/gprobe/gprobe/resolve/internal/golang"
	"github.com/gprobe/gprobe/resolve/internal/resolver"
	"github.com/gprobe/gprobe/resolve/target"
)

// Options say what to open and how to resolve (see resolver.Options).
type Options = resolver.Options

// Resolver resolves probe points against one target.
type Resolver = resolver.Resolver

// Open opens the target o.Target names and returns its resolver; Close
// releases both.
func Open(o Options) (*Resolver, error) { return resolver.Open(o) }

// OpenIn is Open in ctx (o.Target.Context: it cancels a debuginfod
// download): when ctx is done by the time Open returns, what was opened
// is closed and the error is ctx's.
func OpenIn(ctx context.Context, o Options) (*Resolver, error) {
	o.Target.Context = ctx
	r, err := Open(o)
	if ctx.Err() != nil {
		if err == nil {
			r.Close()
		}
		return nil, ctx.Err()
	}
	return r, err
}

// New returns the resolver for an opened target; Close closes t.
func New(t *target.Target, o Options) (*Resolver, error) { return resolver.New(t, o) }

// Points maps installed probes back to probe points (perf -l).
type Points = resolver.Points

// NewPoints returns a Points using vmlinux for kernel probes ("" looks for
// the running kernel's debuginfo when first needed).
func NewPoints(vmlinux string) *Points { return resolver.NewPoints(vmlinux) }

// Error is a resolution failure with perf's message text; it wraps one of
// the sentinels below.
type Error = core.Error

// Sentinel errors; returned errors wrap one of them.
var (
	// ErrNotFound: the probe point does not exist in the image.
	ErrNotFound = core.ErrNotFound
	// ErrNotBoundary: the address is inside an instruction.
	ErrNotBoundary = core.ErrNotBoundary
	// ErrUnsupported: a valid spec gprobe cannot resolve (yet).
	ErrUnsupported = core.ErrUnsupported
	// ErrInvalid: the spec asks for something impossible (a return probe
	// on an inlined function, an offset outside the function).
	ErrInvalid = core.ErrInvalid
	// ErrNoDebugInfo: the question needs DWARF and the image has none; it
	// is a kind of ErrNotFound.
	ErrNoDebugInfo = core.ErrNoDebugInfo
	// ErrNeedsDWARF: the probe asks for what only DWARF describes.
	ErrNeedsDWARF = core.ErrNeedsDWARF
	// ErrTooManyFunctions: more functions match than MaxProbes allows.
	ErrTooManyFunctions = core.ErrTooManyFunctions
	// ErrTooManyPoints: DWARF found more addresses than MaxProbes allows.
	ErrTooManyPoints = core.ErrTooManyPoints
	// ErrUnsupportedRange is perf's -EOPNOTSUPP from the alternative
	// line-range search: a SRC or FUNC@SRC range that matched nothing.
	ErrUnsupportedRange = finder.ErrUnsupportedRange
	// ErrExits: --ret-insn cannot catch every exit of the function
	// exactly (an *ExitsError lists them), or cannot decode it.
	ErrExits = exits.ErrExits
)

// Errno is the error perf returns for a resolution failure (its exit
// status is 256 - Errno).
func Errno(err error) syscall.Errno { return core.Errno(err) }

// VarList is the -V answer for one probe address.
type VarList = core.VarList

// Names are perf's demangling options (Options.Names): the zero value
// demangles a user binary's names and not a kernel's, without C++
// parameters.
type Names = core.Names

// VarsOptions tune AvailableVars (--externs, --range).
type VarsOptions = core.VarsOptions

// FuncExits is one instance of a function and the instructions by which it
// leaves (--ret-insn -L).
type FuncExits = exits.FuncExits

// Exit is one way out of a function.
type Exit = exits.Exit

// ExitsError lists the exits --ret-insn refuses to probe.
type ExitsError = exits.ExitsError

// IsGoProgram reports whether the file at path is a program built by the
// Go toolchain (its Go build id or build information): gprobe resolves
// its functions as Go code (their entry after the stack check, their
// returns on their return instructions, Go values, $goid).
func IsGoProgram(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return golang.IsGoELF(f)
}
