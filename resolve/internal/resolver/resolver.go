// Package resolver turns perf-probe style probe specs into probe.Probe
// values, using an image's DWARF, its symbol table or BTF the way perf probe
// 6.1 does, and refuses what the kernel would reject. It decides which
// source answers each question; the sources and the producers are its
// sibling packages (finder and vars for DWARF, btfinfo for BTF, symtab and
// core for the symbol table, dynamic for the kinds perf 6.1 does not
// write, exits for --ret-insn). Package resolve is its public face.
//
// Messages perf prints while it searches (warnings such as "This line is
// sharing the address with other lines.") are passed to Options.Warn in
// perf's order; the returned error carries the final reason.
package resolver

import (
	"errors"
	"slices"
	"strings"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/internal/perfbug"
	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/internal/btfinfo"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/internal/dynamic"
	"github.com/gprobe/gprobe/resolve/internal/exits"
	"github.com/gprobe/gprobe/resolve/internal/finder"
	"github.com/gprobe/gprobe/resolve/internal/symtab"
	"github.com/gprobe/gprobe/resolve/spec"
	"github.com/gprobe/gprobe/resolve/target"
)

// Options say what to resolve against and how: every option of perf probe
// (and of gprobe) that changes an answer.
type Options struct {
	// Target says what to open: -k, -x, -m, the BTF fallback, debuginfod,
	// the index cache (Open; New takes an opened target).
	Target target.Options
	// NoInlines is --no-inlines: inline instances are not probed.
	NoInlines bool
	// MaxProbes is --max-probes (default 128).
	MaxProbes int
	// Features are the running kernel's probe-event features (tracefs
	// README); perf's output depends on MultiProbe, HexTypes,
	// KretprobeOffset and Immediates.
	Features probedef.Features
	// Warn receives perf's non-fatal messages, one line or block at a time.
	Warn func(string)
	// Debug, when set, receives what perf -v prints of a search.
	Debug func(string)
	// SourcePrefix is -s: where source files are looked up (lazy patterns).
	SourcePrefix string
	// ReturnInsn resolves FUNC%return into plain probes on each of the
	// function's return instructions and tail calls instead of a return
	// probe (see Exits); any other spec is an error.
	ReturnInsn bool
	// KernelBTFArgs writes the arguments of fprobes, tprobes and entry
	// values at return in the kernel's BTF syntax (count, file->f_pos,
	// $arg*), which the kernel resolves through its own BTF, instead of
	// fetches on $argN. They are still resolved here, to refuse what the
	// kernel could not find.
	KernelBTFArgs bool
	// Uretprobe puts a uretprobe on FUNC%return in a Go program, as perf
	// does, where gprobe probes the return instructions: a uretprobe kills
	// the program when a goroutine's stack moves (see golang.go).
	Uretprobe bool
	// ImageFeatures says the probes are for the kernel a vmlinux is (-D
	// prints them for it): its own tracefs README, when the image carries
	// one, decides what perf 6.1 cannot write (fprobes, tracepoint probes,
	// entry values at return, BTF arguments). Without it, or without a
	// README in the image, Features do. perf's kprobe text always follows
	// Features (perf reads the running kernel's README even for another
	// kernel's vmlinux).
	ImageFeatures bool
	// Blacklist is the running kernel's kprobe blacklist: kernel probes it
	// covers are skipped with perf's warning ("FUNC is blacklisted
	// function, skip it."), as perf does when it reads debugfs.
	Blacklist *probedef.Blacklist
	// ImageBlacklist checks kernel probes against the vmlinux's own
	// blacklist instead: the probes are for the kernel it is.
	ImageBlacklist bool
	// KernelText says whether a running kernel's function is in its text,
	// for probes resolved without an image (core.Options.KernelText).
	KernelText interface {
		InText(sym string) (in, known bool)
	}
	// Names are perf's demangling options (--no-demangle,
	// --demangle-kernel, -v's C++ parameters): how -F shows symbol names
	// and how a function is looked up in the symbol table. The zero value
	// is perf's default.
	Names core.Names
}

// Resolver resolves probe specs against one target: a kernel (vmlinux), a
// kernel module, a user binary (uprobes), or the kernel's BTF alone.
type Resolver struct {
	t          *target.Target // nil when made from an image (Points, tests)
	im         *core.Image
	debug      core.Debug // nil without DWARF
	btf        *btfinfo.Spec
	protos     core.Prototypes // loaded on first use (the image's .BTF without btf)
	protosErr  error
	dyn        *dynamic.Kinds
	exits      *exits.Decoder
	returnInsn bool
	opened     bool     // -v named the debug information (debugOpened)
	uretprobe  bool     // Options.Uretprobe
	gostate    *goState // a Go program's, on first use
}

// Open opens the target o.Target names and returns its resolver; Close
// releases both.
func Open(o Options) (*Resolver, error) {
	t, err := target.Open(o.Target)
	if err != nil {
		return nil, err
	}
	r, err := New(t, o)
	if err != nil {
		t.Close()
		return nil, err
	}
	return r, nil
}

// New returns a resolver for the opened target t with o (o.Target is not
// read, except for a test's perfbug mistakes in its Context); Close closes t.
func New(t *target.Target, o Options) (*Resolver, error) {
	co := coreOptions(o)
	if o.ImageFeatures {
		if tf, ok := t.Features(); ok {
			co.TargetFeatures = &tf
		}
	}
	f := t.File()
	var im *core.Image
	var err error
	if t.Module != "" {
		name, ok := target.ModuleName(f)
		if !ok {
			// perf's fallback: the -m argument itself.
			name = t.Module
		}
		im, err = core.NewModule(f, name, t.Module, co)
	} else {
		im, err = newImage(f, t.User, t.BTF(), 0, co)
	}
	if err != nil {
		return nil, err
	}
	mistakes := perfbug.In(o.Target.Context)
	im.PerfModuleAlt = mistakes&perfbug.ModuleAlt != 0
	im.PerfUserAlt = mistakes&perfbug.UserAlt != 0
	im.PerfArangesOnly = mistakes&perfbug.ArangesOnly != 0
	im.PerfAltArgs = mistakes&perfbug.AltArgs != 0
	im.NoBoundaryCheck = mistakes&perfbug.NoBoundaryCheck != 0 || im.PerfModuleAlt && im.Module != nil // perf has no boundary check either
	r := newResolver(im, t.BTF(), o.ReturnInsn)
	r.t = t
	r.uretprobe = o.Uretprobe
	return r, nil
}

func coreOptions(o Options) core.Options {
	return core.Options{NoInlines: o.NoInlines, MaxProbes: o.MaxProbes, Features: o.Features, Warn: o.Warn, Debug: o.Debug,
		SourcePrefix: o.SourcePrefix, KernelBTFArgs: o.KernelBTFArgs, Names: o.Names,
		Blacklist: o.Blacklist, ImageBlacklist: o.ImageBlacklist, KernelText: o.KernelText}
}

// newImage is the image f (nil: BTF alone, bt, for arch; the zero arch is
// the running machine's).
func newImage(f *dwarfinfo.File, user bool, bt *btfinfo.Spec, isa arch.Arch, co core.Options) (*core.Image, error) {
	return core.New(f, user, isa, co)
}

// fromImage is a resolver for the image f, or for BTF alone (f nil, bt
// and arch given), without a target.
func fromImage(f *dwarfinfo.File, user bool, bt *btfinfo.Spec, isa arch.Arch, o Options) (*Resolver, error) {
	im, err := newImage(f, user, bt, isa, coreOptions(o))
	if err != nil {
		return nil, err
	}
	r := newResolver(im, bt, o.ReturnInsn)
	r.uretprobe = o.Uretprobe
	return r, nil
}

func newResolver(im *core.Image, bt *btfinfo.Spec, returnInsn bool) *Resolver {
	r := &Resolver{im: im, btf: bt, returnInsn: returnInsn, exits: exits.New(im)}
	if im.HasDWARF() {
		r.debug = finder.New(im)
	}
	r.dyn = &dynamic.Kinds{Im: im, Debug: r.debug, Prototypes: r.prototypes}
	return r
}

// debugOpened is perf -v's line for the debug information, printed once,
// when a search first reads it.
func (r *Resolver) debugOpened() {
	if r.opened || r.im.File == nil {
		return
	}
	r.opened = true
	p := r.im.File.Path
	if r.t != nil && r.t.DebugPath != "" {
		p = r.t.DebugPath
	}
	r.im.Debugf("Open Debuginfo file: %s", p)
}

// Target is what the resolver was opened on (nil when it was made from an
// image without one).
func (r *Resolver) Target() *target.Target { return r.t }

// Close releases the target.
func (r *Resolver) Close() {
	if r.t != nil {
		r.t.Close()
	}
}

// Arch returns the target's architecture: the image's, else the running
// machine's.
func (r *Resolver) Arch() arch.Arch { return r.im.Arch }

// HasDWARF reports whether the target has DWARF: source lines, locals and
// inline instances resolve only then (else symbols and BTF answer).
func (r *Resolver) HasDWARF() bool { return r.debug != nil }

// HasSymbols reports whether the target is an image with a symbol table
// (BTF alone names functions, not the symbols that hold them).
func (r *Resolver) HasSymbols() bool { return r.im.File != nil }

// prototypes is the BTF the resolver reads prototypes from: the target's
// (BTF alone), or the image's own .BTF section, loaded on first use.
func (r *Resolver) prototypes() (core.Prototypes, error) {
	if r.protos != nil || r.protosErr != nil {
		return r.protos, r.protosErr
	}
	s := r.btf
	if s == nil {
		if r.im.File == nil {
			return nil, nil
		}
		if s, r.protosErr = btfinfo.Load(r.im.File.Path); r.protosErr != nil {
			return nil, r.protosErr
		}
	}
	r.protos = s.Prototypes(r.im.Arch, r.im.Opts.Features.HexTypes)
	return r.protos, nil
}

// hasBTF reports whether BTF is available for the image.
func (r *Resolver) hasBTF() bool {
	s, err := r.prototypes()
	return err == nil && s != nil
}

// Probes resolves one parsed probe definition into trace events, named and
// grouped as perf names them for `perf probe -D`.
func (r *Resolver) Probes(p *spec.Probe) ([]probe.Probe, error) {
	if err := core.CheckRetval(p); err != nil {
		return nil, err
	}
	if g := r.goProgram(); g != nil {
		if ps, handled, err := r.goProbes(g, p); handled {
			return ps, err
		}
	}
	if err := r.checkGoid(p); err != nil {
		return nil, err
	}
	if r.returnInsn {
		return r.exits.Probes(p)
	}
	pp := p.Point
	if pp.IsAbs {
		if ps, ok, err := r.absolute(p); ok {
			return ps, err
		}
	}
	if r.im.File == nil && r.btf == nil {
		// The running kernel's kallsyms alone: only absolute addresses.
		return nil, core.Errorf(core.ErrNeedsDWARF, "%s: no vmlinux with debug information or BTF was found to resolve it.", pp.String())
	}
	if pp.Return && !r.im.User && core.WithVar(p.Args) {
		return r.dyn.ReturnWithEntryValues(p, r.Probes)
	}
	if r.im.File == nil || r.debug == nil && core.WithVar(p.Args) && r.hasBTF() {
		return r.btfProbes(p)
	}
	var tps []core.TracePoint
	var err error
	useSymbols := pp.Return
	if !useSymbols {
		if r.debug == nil {
			if core.NeedDWARF(p) {
				return nil, r.im.NoDebugInfo()
			}
			r.im.Debugf("Could not open debuginfo. Try to use symbols.")
			useSymbols = true
		} else {
			r.debugOpened()
			r.im.Debugf("Try to find probe point from debuginfo.")
			tps, err = r.debug.Places(p)
			if err == nil && len(tps) > 0 {
				r.im.Debugf("Found %d probe_trace_events.", len(tps))
			}
			if err != nil {
				r.im.Debugf("An error occurred in debuginfo analysis (%d).", -int(core.Errno(err)))
			}
			if err == nil {
				tps = r.im.SkipBlacklisted(tps)
			}
			// perf's try_to_find_probe_trace_events: any DWARF failure
			// falls back to the symbol table when DWARF is not required.
			switch {
			case err == nil && len(tps) == 0, errors.Is(err, core.ErrNoModuleSymbol):
				return nil, core.Errorf(core.ErrNotFound, "Probe point '%s' not found.", pp.String())
			case err != nil && !core.NeedDWARF(p):
				r.im.Debugf("Trying to use symbols.")
				useSymbols = true
			case err != nil:
				return nil, err
			}
		}
	}
	if useSymbols {
		if tps, err = r.im.SymbolPlaces(&pp); err != nil {
			return nil, err
		}
	}
	if err := r.im.CheckBoundaries(tps); err != nil {
		return nil, err
	}
	probes, err := r.im.Name(p, tps)
	if err != nil {
		return nil, err
	}
	for i := range probes {
		switch {
		case useSymbols:
			probes[i].Args = core.RawArgs(p.Args)
		case tps[i].Args != nil:
			probes[i].Args = r.im.FetchArgs(tps[i].Args)
		}
	}
	if err := core.CheckLimits(probes); err != nil {
		return nil, err
	}
	return probes, nil
}

// btfProbes resolves a probe whose arguments come from BTF: the place is
// FUNC[+OFF][%return] by symbol (checked against the image's symbol table
// when there is an image), the arguments from the prototype.
func (r *Resolver) btfProbes(p *spec.Probe) ([]probe.Probe, error) {
	pp := p.Point
	if pp.HasFile || pp.Line != 0 || pp.HasLazy {
		return nil, core.Errorf(core.ErrNeedsDWARF, "%s: a source line needs DWARF debug information; BTF describes only function prototypes and types.\n Use a vmlinux with debug info (-k), or probe FUNC[+OFF].", pp.String())
	}
	if r.im.File == nil && pp.HasFunction && spec.IsGlob(pp.Function) {
		return r.btfGlob(p)
	}
	args := core.RawArgs(p.Args)
	if core.WithVar(p.Args) {
		protos, err := r.prototypes()
		if err != nil {
			return nil, core.Errorf(core.ErrNeedsDWARF, "No DWARF and no BTF to resolve %s's arguments: %v", pp.Function, err)
		}
		if args, err = protos.EntryArgs(p); err != nil {
			return nil, err
		}
	}
	var ps []probe.Probe
	if r.im.File != nil {
		tps, err := r.im.SymbolPlaces(&pp)
		if err != nil {
			return nil, err
		}
		if err := r.im.CheckBoundaries(tps); err != nil {
			return nil, err
		}
		if ps, err = r.im.Name(p, tps); err != nil {
			return nil, err
		}
	} else {
		if !pp.HasFunction {
			return nil, core.Errorf(core.ErrNeedsDWARF, "%s: without an image, gprobe needs a function name.", pp.String())
		}
		if !r.kernelPlace(pp.Function) {
			// perf's symbol-table search: the warning, then nothing found.
			return nil, core.Errorf(core.ErrNotFound, "")
		}
		var err error
		if ps, err = r.im.Name(p, []core.TracePoint{{Symbol: pp.Function, Offset: pp.Offset, Realname: pp.Function, Return: pp.Return}}); err != nil {
			return nil, err
		}
	}
	for i := range ps {
		ps[i].Args = args
	}
	if err := core.CheckLimits(ps); err != nil {
		return nil, err
	}
	return ps, nil
}

// kernelPlace is perf's kprobe_warn_out_range for a function of the
// running kernel known by name alone: false, with perf's warning, when it
// is out of the kernel's text (an __init function) or blacklisted.
func (r *Resolver) kernelPlace(fn string) bool {
	if r.im.User {
		return true
	}
	if kt := r.im.Opts.KernelText; kt != nil {
		if in, known := kt.InText(fn); known && !in {
			r.im.Warnf("%s is out of .text, skip it.", fn)
			return false
		}
	}
	if r.im.Blacklisted(0, fn) {
		r.im.Warnf("%s is blacklisted function, skip it.", fn)
		return false
	}
	return true
}

// btfGlob resolves a function pattern without an image: each function
// BTF describes whose name matches, as perf's symbol-table search takes
// every symbol the pattern matches, each with its arguments from its
// prototype. A function out of the kernel's text or blacklisted
// (kernelPlace), or whose arguments its prototype cannot give, is skipped
// with a warning; nothing left is perf's silent "not found".
func (r *Resolver) btfGlob(p *spec.Probe) ([]probe.Probe, error) {
	pp := p.Point
	protos, err := r.prototypes()
	if err != nil || protos == nil {
		return nil, core.Errorf(core.ErrNeedsDWARF, "%s: a function pattern needs a symbol table or BTF: %v", pp.String(), err)
	}
	names, err := protos.Functions(func(n string) bool { return spec.GlobMatch(n, pp.Function) })
	if err != nil {
		return nil, err
	}
	names = slices.Compact(names)
	if len(names) == 0 {
		return nil, core.Errorf(core.ErrNotFound, "Failed to find symbol %s in kernel", pp.Function)
	}
	if len(names) > r.im.Opts.MaxProbes {
		return nil, core.Errorf(core.ErrTooManyFunctions, "Too many functions matched in kernel")
	}
	var tps []core.TracePoint
	var args [][]probe.FetchArg
	for _, name := range names {
		if !r.kernelPlace(name) {
			continue
		}
		a := core.RawArgs(p.Args)
		if core.WithVar(p.Args) {
			q := *p
			q.Point.Function = name
			if a, err = protos.EntryArgs(&q); err != nil {
				r.im.Warnf("%s: %v; skip it.", name, strings.TrimSpace(err.Error()))
				continue
			}
		}
		tps = append(tps, core.TracePoint{Symbol: name, Offset: pp.Offset, Realname: name, Return: pp.Return})
		args = append(args, a)
	}
	if len(tps) == 0 {
		return nil, core.Errorf(core.ErrNotFound, "")
	}
	ps, err := r.im.Name(p, tps)
	if err != nil {
		return nil, err
	}
	for i := range ps {
		ps[i].Args = args[i]
	}
	if err := core.CheckLimits(ps); err != nil {
		return nil, err
	}
	return ps, nil
}

// Fprobe resolves FUNC [ARGS] or FUNC%return [ARGS] into an fprobe (f:)
// on that function (see package dynamic).
func (r *Resolver) Fprobe(p *spec.Probe) (probe.Probe, error) { return r.dyn.Fprobe(p) }

// Tprobe resolves TRACEPOINT [ARGS] into a tracepoint probe (t:).
func (r *Resolver) Tprobe(p *spec.Probe) (probe.Probe, error) { return r.dyn.Tprobe(p) }

// Eprobe resolves words on the trace event ev, whose tracefs format
// description is format, into an event probe named as the event.
func (r *Resolver) Eprobe(ev probe.EventID, format string, words []string) (probe.Probe, error) {
	return r.dyn.Eprobe(ev, format, words)
}

// Exits decodes every instance of the function pp names and returns the
// instructions by which each leaves (see package exits).
func (r *Resolver) Exits(pp *spec.Point) ([]exits.FuncExits, error) { return r.exits.Exits(pp) }

// AvailableVars is -V: for every address the probe point resolves to, the
// variables (and parameters) that have a location there (from BTF without
// DWARF: a function's parameters at its entry). A failure ends with perf's
// last line (show_available_vars): "Failed to find the address of POINT"
// when the point was not found, "Debuginfo analysis failed." for any other
// reason but a missing DWARF.
func (r *Resolver) AvailableVars(pp *spec.Point, opts core.VarsOptions) ([]core.VarList, error) {
	vls, err := r.availableVars(pp, opts)
	if err == nil && len(vls) == 0 {
		err = &core.Error{Err: core.ErrNotFound}
	}
	if err == nil {
		return vls, nil
	}
	msg := "Debuginfo analysis failed."
	switch {
	case errors.Is(err, core.ErrNoDebugInfo):
		return nil, err // open_debuginfo's message alone
	case errors.Is(err, core.ErrNotFound):
		msg = "Failed to find the address of " + pp.String()
	}
	var re *core.Error
	if errors.As(err, &re) {
		re.Msg = strings.TrimPrefix(re.Msg+"\n"+msg, "\n")
		return nil, err
	}
	return nil, &core.Error{Msg: err.Error() + "\n" + msg, Err: err}
}

// availableVars is AvailableVars from the source that has them; an empty
// result means the point was not found.
func (r *Resolver) availableVars(pp *spec.Point, opts core.VarsOptions) ([]core.VarList, error) {
	if r.im.File == nil && r.btf == nil {
		return nil, core.Errorf(core.ErrNeedsDWARF, "%s: no vmlinux with debug information or BTF was found.", pp.String())
	}
	if r.im.File == nil || r.debug == nil && r.hasBTF() {
		if opts.Range {
			return nil, core.Errorf(core.ErrNeedsDWARF, "--range needs DWARF: BTF has no variable locations; use -k with a vmlinux that has debug info")
		}
		protos, _ := r.prototypes()
		return protos.Vars(pp)
	}
	if r.debug == nil {
		return nil, r.im.NoDebugInfo()
	}
	r.debugOpened()
	r.im.Debugf("Searching variables at %s", pp.String())
	return r.debug.Vars(pp, opts)
}

// LineRange finds the probe-able lines of a -L range the way perf's
// debuginfo__find_line_range does. It returns an error wrapping
// ErrNotFound ("Specified source line is not found.") when nothing
// matches.
func (r *Resolver) LineRange(lr *spec.LineRange) (*lines.Listing, error) {
	if r.im.File == nil {
		return nil, core.Errorf(core.ErrNeedsDWARF, "Source lines need DWARF debug information; BTF describes only function prototypes and types.\n Use a vmlinux with debug info (-k).")
	}
	if r.debug == nil {
		return nil, r.im.NoDebugInfo()
	}
	r.debugOpened()
	return r.debug.LineRange(r.goLineRange(lr))
}

// Functions lists the image's function names as perf -F does (see
// EachFunction).
func (r *Resolver) Functions(filter *spec.Filter) ([]string, error) {
	var out []string
	err := r.EachFunction(filter, func(name string) bool {
		out = append(out, strings.Clone(name))
		return true
	})
	return out, err
}

// EachFunction calls fn with the image's function names as perf -F lists
// them, sorted, filtered, until fn returns false. For a kernel image:
// named function and label symbols of executable sections, aliases and
// duplicates included. For a module or a user binary, every symbol of
// perf's map for the DSO and, for a user binary, the @plt entries perf
// synthesizes. Without an image, BTF's functions, or the running kernel's
// kallsyms as perf lists them (kallsyms.Table.Functions). A name may alias
// the image's cache: it is valid during the call.
func (r *Resolver) EachFunction(filter *spec.Filter, fn func(string) bool) error {
	var names []string
	var err error
	switch {
	case r.im.File == nil && r.btf == nil:
		if r.t == nil || r.t.Kallsyms() == nil {
			return errors.New("resolve: no image, BTF or kallsyms")
		}
		names = r.t.Kallsyms().Functions(filter.Match)
	case r.im.File == nil:
		protos, perr := r.prototypes()
		if perr != nil {
			return perr
		}
		names, err = protos.Functions(filter.Match)
	case r.im.Module != nil || r.im.User:
		return symtab.DSOFunctions(r.im.File, r.im.Module == nil, r.im.Naming(), filter.Match, fn)
	default:
		names, err = symtab.KernelFunctions(r.im.File, r.im.Naming(), filter.Match)
	}
	for _, n := range names {
		if !fn(n) {
			break
		}
	}
	return err
}
