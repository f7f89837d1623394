package perfprobe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"

	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/record/follow"
	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/debuginfod"
	"github.com/gprobe/gprobe/resolve/perfcache"
)

// Settings are the values of the flags (TargetFlags and the root's
// options) that say how every command opens and resolves its target.
type Settings struct {
	// Target is what is probed (-k, -x, -m, --target-ns, --target, the
	// path before the definitions).
	Target Target
	// Symfs is --symfs, Source -s.
	Symfs, Source string
	// Verbose is -v given (Level is perf's verbose level, VerboseLevel),
	// Quiet -q.
	Verbose, Quiet bool
	Level          int
	// NoCache, NoInlines, ReturnInsn and Uretprobe are their flags;
	// NoDemangle and DemangleKernel the negatable demangling options.
	NoCache, NoInlines, ReturnInsn, Uretprobe bool
	NoDemangle, DemangleKernel                bool
	// MaxProbes is --max-probes.
	MaxProbes int
	// Stderr receives warnings, -v's lines and debuginfod's progress
	// line (drawn only when Terminal says Stderr is a terminal).
	Stderr   io.Writer
	Terminal bool
}

// Warn prints a warning line to Stderr, unless -q.
func (s Settings) Warn(line string) {
	if !s.Quiet {
		fmt.Fprintln(s.Stderr, line)
	}
}

// VerboseWarn is Warn with -v (what the readers of perf's caches skip, and
// the SDT resolver's warnings, are said only then), nil without.
func (s Settings) VerboseWarn() func(string) {
	if !s.Verbose {
		return nil
	}
	return s.Warn
}

// println prints a line to Stderr.
func (s Settings) println(line string) { fmt.Fprintln(s.Stderr, line) }

// ResolveOptions are the resolve options the settings give, the same for
// every command; a command adds what only it sets (Features,
// ImageFeatures, Blacklist, KernelBTFArgs). The target is the image the
// flags name (or the running kernel's debuginfo where distributions put
// it), with missing debug information fetched from the debuginfod servers
// of DEBUGINFOD_URLS and SDT notes from perf's build-id cache
// (perfcache.Default); with btf, a kernel without vmlinux is read from
// the running kernel's BTF. -v without -q traces what the search looked
// at; a verbose level above 0 prints the resolver's debug lines.
func (s Settings) ResolveOptions(btf bool) resolve.Options {
	t := s.Target.Options()
	t.BTF, t.Symfs, t.PerfCache = btf, s.Symfs, perfcache.Default()
	if s.Verbose && !s.Quiet {
		t.Trace = s.println
	}
	t.Debuginfod = debuginfod.FromEnvTo(s.Stderr, s.Terminal && !s.Quiet, s.Warn)
	t.NoCache, t.Warn = s.NoCache, s.Warn
	o := resolve.Options{Target: t, NoInlines: s.NoInlines, MaxProbes: s.MaxProbes, Warn: s.Warn, SourcePrefix: s.Source,
		ReturnInsn: s.ReturnInsn, Uretprobe: s.Uretprobe, KernelText: install.RunningSymbols{},
		Names: resolve.Names{NoDemangle: s.NoDemangle, DemangleKernel: s.DemangleKernel, Params: s.Verbose}}
	if s.Level > 0 {
		o.Debug = s.println
	}
	return o
}

// ErrInterrupted ends a command whose download was interrupted.
var ErrInterrupted = errors.New("Interrupted.")

// Interruptible is a context for a debuginfod download: follow.StopSignals
// cancel it (the partial file is removed) instead of ending gprobe at once.
func Interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, follow.StopSignals...)
}

// Open opens the target o names and its resolver (resolve.OpenIn) in ctx,
// Interruptible: SIGINT or SIGTERM during a download end it with
// ErrInterrupted. At a verbose level above 0 it then writes to Stderr
// what was opened, as perf -v says it (Verbose; noBlacklist: the running
// kernel's kprobe blacklist could not be read).
func (s Settings) Open(ctx context.Context, o resolve.Options, noBlacklist bool) (*resolve.Resolver, error) {
	ctx, stop := Interruptible(ctx)
	defer stop()
	r, err := resolve.OpenIn(ctx, o)
	switch {
	case ctx.Err() != nil:
		return nil, ErrInterrupted
	case err == nil && s.Level > 0:
		Verbose(s.Stderr, r.Target(), s.Target.Vmlinux, noBlacklist)
	}
	return r, err
}
