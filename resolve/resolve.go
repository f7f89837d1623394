// Package resolve turns perf-probe style probe specs into probe.Probe
// values, using an image's DWARF (or its symbol table) the way perf probe
// 6.1 does, and refuses what the kernel would reject.
//
// Messages perf prints while it searches (warnings such as "This line is
// sharing the address with other lines.") are passed to Options.Warn in
// perf's order; the returned error carries the final reason.
package resolve

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gprobe/gprobe/disasm"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/internal/btfinfo"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/spec"
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
)

// noDebugInfo is perf's open_debuginfo message for an image without DWARF:
// the advice names -g for a user binary, the kernel option otherwise.
func (r *Resolver) noDebugInfo() error {
	rebuild := "CONFIG_DEBUG_INFO=y"
	if r.user {
		rebuild = "-g"
	}
	return errorf(ErrNoDebugInfo, "The %s file has no debug information.\nRebuild with %s, or install an appropriate debuginfo package.", r.f.Path, rebuild)
}

// Error is a resolution failure with perf's message text.
type Error struct {
	Msg string // perf's warning/error line(s), without trailing newline
	Err error  // sentinel
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

func errorf(sentinel error, format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

// Options tune resolution.
type Options struct {
	NoInlines bool
	MaxProbes int // default 128 (perf's --max-probes)
	// Features are the target kernel's probe-event features (tracefs
	// README); perf's output depends on MultiProbe, HexTypes,
	// KretprobeOffset and Immediates.
	Features probedef.Features
	// Warn receives perf's non-fatal messages, one line or block at a time.
	Warn func(string)
	// SourcePrefix is -s: where source files are looked up (lazy patterns).
	SourcePrefix string
	// AllowMidInsn disables the instruction-boundary check (never set by
	// the CLI; for comparing with perf's raw answer in tests).
	AllowMidInsn bool
	// PerfModuleAltBug makes module resolution repeat two perf 6.1
	// mistakes, for tests that prove a disagreement with perf is those
	// mistakes and nothing else; the CLI never sets it. perf's map of a
	// module file places symbols at st_value plus their section's file
	// offset, while libdwfl lays the sections out on its own, and perf
	// mixes the two spaces:
	//   - for a name DWARF does not know (a .isra or .cold clone, or a line
	//     search that found nothing), find_alternative_probe_point adds the
	//     address libdwfl gave .text to the symbol's file-offset address,
	//     so it looks up DWARF .text's sh_offset bytes (176 in Debian's
	//     modules) past the symbol, in whatever function is there;
	//   - post_process_module_probe_trace_events converts DWARF addresses
	//     with .text's delta only, which names the wrong symbol in any
	//     other section whose file offset is not where libdwfl put it.
	PerfModuleAltBug bool
	// BTF resolves arguments when the image has no DWARF (or there is no
	// image: New(nil, ...) resolves FUNC entry probes from BTF alone).
	// Without it, an image's own .BTF section is used.
	BTF *btfinfo.Spec
	// Arch is the target architecture when there is no image; the zero
	// value means the running machine's.
	Arch disasm.Arch
	// ReturnInsn resolves FUNC%return into plain probes on each of the
	// function's return instructions and tail calls instead of a return
	// probe (see Exits); any other spec is an error.
	ReturnInsn bool
	// TargetFeatures, when set, are the features of the kernel the probes
	// are for (a vmlinux's own README), which decide what perf 6.1 cannot
	// write: fprobes, tracepoint probes, entry values at return, BTF
	// arguments. perf's kprobe text follows Features (perf reads the
	// running kernel's README even for another kernel's vmlinux).
	TargetFeatures *probedef.Features
	// KernelBTFArgs writes the arguments of fprobes, tprobes and entry
	// values at return in the kernel's BTF syntax (count, file->f_pos,
	// $arg*), which the kernel resolves through its own BTF, instead of
	// fetches on $argN. They are still resolved here, to refuse what the
	// kernel could not find.
	KernelBTFArgs bool
}

// Resolver resolves probe specs against one image: a kernel (vmlinux) or a
// user binary (uprobes).
type Resolver struct {
	f    *dwarfinfo.File
	user bool // uprobes target
	opts Options
	syms *symbolMap
	arch disasm.Arch
	mod  *moduleInfo // kernel module target (NewModule)

	btf    *btfinfo.Spec // the image's .BTF, loaded on first use
	btfErr error

	staticCalls map[uint64]bool // a kernel's static call sites, read on first use
}

// New returns a resolver for f. user selects uprobes (-x).
func New(f *dwarfinfo.File, user bool, opts Options) (*Resolver, error) {
	if opts.MaxProbes <= 0 {
		opts.MaxProbes = 128
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	if f == nil {
		if opts.BTF == nil {
			return nil, errors.New("resolve: no image and no BTF")
		}
		arch, err := opts.Arch.OrHost()
		if err != nil {
			return nil, err
		}
		return &Resolver{user: user, opts: opts, arch: arch}, nil
	}
	arch, err := disasm.ArchForMachine(f.Machine)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	return &Resolver{f: f, user: user, opts: opts, arch: arch}, nil
}

// Arch returns the target's architecture: the image's, else Options.Arch or
// the running machine's.
func (r *Resolver) Arch() disasm.Arch { return r.arch }

// tracePoint is perf's probe_trace_point before naming.
type tracePoint struct {
	addr     uint64 // address in the image
	symbol   string
	offset   uint64
	realname string
	retprobe bool
	// unit is the unit the point came from: its line-table rows are known
	// instruction starts for the boundary check (nil from the symbol table).
	unit *lines.Unit
	// args are the converted arguments at this address (DWARF only).
	args []*traceArg
}

func (r *Resolver) symbols() (*symbolMap, error) {
	if r.syms == nil {
		m, err := newSymbolMap(r.f)
		if err != nil {
			return nil, err
		}
		r.syms = m
	}
	return r.syms, nil
}

// needDWARF is perf's perf_probe_event_need_dwarf.
func needDWARF(p *spec.Probe) bool {
	pp := p.Point
	if pp.HasFile || pp.Line != 0 || pp.HasLazy {
		return true
	}
	return withVar(p.Args)
}

// Probes resolves one parsed probe definition into trace events, named and
// grouped as perf names them for `perf probe -D`.
func (r *Resolver) Probes(p *spec.Probe) ([]probe.Probe, error) {
	if err := checkRetval(p); err != nil {
		return nil, err
	}
	if r.opts.ReturnInsn {
		return r.returnInsnProbes(p)
	}
	var err error
	pp := p.Point
	if pp.IsAbs {
		return nil, errorf(ErrUnsupported, "Absolute address probes are not supported yet.")
	}
	if pp.Return && !r.user && withVar(p.Args) {
		return r.returnWithEntryValues(p)
	}
	if r.f == nil || !r.f.HasDWARF() && withVar(p.Args) && r.hasBTF() {
		return r.btfProbes(p)
	}
	var tps []tracePoint
	useSymbols := pp.Return
	if !useSymbols {
		if !r.f.HasDWARF() {
			if needDWARF(p) {
				return nil, r.noDebugInfo()
			}
			useSymbols = true
		} else {
			tps, err = r.findDWARF(&pp, p.Args)
			if err == nil && len(tps) == 0 && len(p.Args) > 0 && r.opts.Features.Immediates {
				// perf's fill_empty_trace_arg: with arguments (and kernel
				// immediates) finding no point is an error, reported
				// without a message and without the alternative search.
				err = errorf(ErrNotFound, "")
			}
			if err == nil && len(tps) == 0 {
				if alt, _ := r.alternative(&pp); alt != nil {
					tps, err = r.findDWARF(alt, p.Args)
				}
			}
			if err == nil && len(tps) > 0 && len(p.Args) > 0 && r.opts.Features.Immediates {
				err = fillEmptyArgs(p.Args, tps)
			}
			if err == nil && len(tps) > 0 {
				err = r.postProcess(tps)
			}
			// perf's try_to_find_probe_trace_events: any DWARF failure
			// falls back to the symbol table when DWARF is not required.
			switch {
			case err == nil && len(tps) == 0, errors.Is(err, errNoModuleSymbol):
				return nil, errorf(ErrNotFound, "Probe point '%s' not found.", pp.String())
			case err != nil && !needDWARF(p):
				useSymbols = true
			case err != nil:
				return nil, err
			}
		}
	}
	if useSymbols {
		if tps, err = r.findSymbols(&pp); err != nil {
			return nil, err
		}
	}
	if !r.opts.AllowMidInsn {
		for _, tp := range tps {
			if err := r.checkBoundary(tp); err != nil {
				return nil, err
			}
		}
	}
	probes, err := r.name(p, tps)
	if err != nil {
		return nil, err
	}
	for i := range probes {
		if tps[i].args != nil || useSymbols {
			probes[i].Args = fetchArgs(p, tps[i].args, useSymbols)
		}
	}
	if err := checkLimits(probes); err != nil {
		return nil, err
	}
	return probes, nil
}

// fetchArgs turns converted arguments (or, from the symbol table, the raw
// arguments as written) into fetch args.
func fetchArgs(p *spec.Probe, args []*traceArg, raw bool) []probe.FetchArg {
	var out []probe.FetchArg
	if raw {
		for _, a := range p.Args {
			fa := probe.FetchArg{Expr: probe.Raw(a.Var)}
			if a.HasName {
				fa.Name = a.Name
			}
			if a.HasType {
				fa.Type = a.Type
			}
			out = append(out, fa)
		}
		return out
	}
	for _, a := range args {
		out = append(out, a.fetchArg())
	}
	return out
}

// checkRetval refuses $retval on an entry probe: perf emits it, and the
// kernel then rejects the definition.
func checkRetval(p *spec.Probe) error {
	for _, a := range p.Args {
		if strings.HasPrefix(a.Var, "$retval") && !p.Point.Return {
			return errorf(ErrInvalid, "%s is only available on a return probe (FUNC%%return); the kernel rejects it on an entry probe.", a.Var)
		}
	}
	return nil
}

// findDWARF is perf's debuginfo__find_probe_location.
func (r *Resolver) findDWARF(pp *spec.Point, args []spec.Arg) ([]tracePoint, error) {
	return r.runFinder(&finder{r: r, pp: pp, args: args})
}

// runFinder is perf's debuginfo__find_probes: it calls f.callProbeFinder
// for every address the point resolves to.
func (r *Resolver) runFinder(f *finder) ([]tracePoint, error) {
	pp := f.pp
	if !pp.HasFunction {
		units, err := r.f.UnitsWithFile(pp.File)
		if err != nil {
			return nil, err
		}
		for _, idx := range units {
			if err := f.searchFileUnit(idx); err != nil {
				return nil, err
			}
		}
		return f.tps, nil
	}
	// Units are searched in order while later ones are still being
	// scanned, so an error (perf stops at the first) ends the work early.
	err := r.f.EachFuncs(nameMatcher(pp.Function), func(refs []dwarfinfo.FuncRef) (bool, error) {
		return false, f.searchUnit(refs)
	})
	if err != nil {
		return nil, err
	}
	return f.tps, nil
}

// searchFileUnit handles SRC:LINE and SRC;PTN in one unit.
func (f *finder) searchFileUnit(idx int) error {
	cu, err := f.r.f.Unit(idx)
	if err != nil {
		return err
	}
	f.cu = cu
	fname := cuFindRealpath(cu.Lines, f.pp.File)
	if fname == "" {
		return nil
	}
	if f.pp.HasLazy {
		return f.lazy(nil, fname)
	}
	return f.byLine(fname, f.pp.Line)
}

// lazy is perf's find_probe_point_lazy: the source lines matching the
// pattern (read once per probe), then every address of those lines in
// root (or the whole unit).
func (f *finder) lazy(root *lines.Scope, fname string) error {
	u := f.cu.Lines
	if f.lazyLines == nil {
		path, err := lines.SourcePath(fname, u.CompDir, f.r.opts.SourcePrefix)
		if err != nil {
			f.warn("Failed to find source file path.")
			return errorf(ErrNotFound, "")
		}
		nums, err := lines.MatchLazy(path, func(l string) bool { return spec.LazyMatch(l, f.pp.Lazy) })
		if err != nil {
			f.warn("Failed to open %s: %v", path, err)
			return errorf(ErrNotFound, "")
		}
		f.lazyLines = map[int]bool{}
		for _, n := range nums {
			f.lazyLines[n] = true
		}
		if len(nums) == 0 {
			return nil
		}
	}
	return u.WalkLines(root, func(file string, line int, addr uint64) error {
		if !f.lazyLines[line] || !lines.TailCmp(file, fname) {
			return nil
		}
		sc := f.bestScope(fname, line, addr)
		if sc == nil {
			f.warn("Failed to find scope of probe point.")
			return errorf(ErrNotFound, "")
		}
		return f.callProbeFinder(sc, addr)
	})
}

// alternative is perf's find_alternative_probe_point: a function name
// that DWARF does not know (a .constprop/.isra clone, an alias) is looked up
// in the symbol table and its address mapped back to a DWARF point.
//
// It returns nil when there is no such symbol or no point at its address,
// and an error (perf's -EINVAL) when no unit covers the address.
func (r *Resolver) alternative(pp *spec.Point) (*spec.Point, error) {
	if !pp.HasFunction || pp.HasFile {
		return nil, nil
	}
	m, err := r.nameSymbols()
	if err != nil {
		return nil, nil
	}
	var addr uint64
	m.each(func(s symbol) bool {
		if !s.exec && r.vmlinux() {
			return true // perf looks in the kernel text map
		}
		n := s.raw
		if i := bytes.IndexByte(n, '@'); i >= 0 && !strings.Contains(pp.Function, "@") {
			n = n[:i]
		}
		if spec.GlobMatch(string(n), pp.Function) {
			addr = s.start
			return false
		}
		return true
	})
	if addr == 0 {
		return nil, nil
	}
	addr = r.perfAltAddr(addr)
	alt, err := r.probePointAt(addr)
	if alt == nil {
		return nil, err
	}
	alt.Offset += pp.Offset
	alt.Line += pp.Line
	alt.Return = pp.Return
	// perf does not carry a lazy pattern over: an unmatched FUNC;PTN ends
	// up at the function's entry.
	return alt, nil
}

// probePointAt is perf's debuginfo__find_probe_point: the function (and
// relative line, or offset) an address belongs to.
//
// It returns nil and an error wrapping ErrInvalid when no unit covers addr
// (perf's -EINVAL), and nil, nil when the unit has no point there.
func (r *Resolver) probePointAt(addr uint64) (*spec.Point, error) {
	idx, err := r.f.UnitForAddr(addr)
	if err != nil || idx < 0 {
		r.opts.Warn(fmt.Sprintf("Failed to find debug information for address %x", addr))
		return nil, errorf(ErrInvalid, "Debuginfo analysis failed.")
	}
	cu, err := r.f.Unit(idx)
	if err != nil {
		return nil, err
	}
	u := cu.Lines
	fname, lineno, _ := u.LineInfo(addr)
	var fn, basefunc string
	var base uint64
	baseline := 0
	if sp := u.FindRealFunc(addr); sp != nil {
		fn = sp.Linkage
		if fn == "" {
			fn = sp.Name
		}
		basefunc = fn
		entry, ok := sp.LowestPC()
		if fn == "" || !ok || sp.DeclLine == 0 {
			lineno = 0
		} else {
			base, baseline = entry, sp.DeclLine
			fname = u.File(sp.DeclFile)
			if addr == entry {
				lineno = baseline
			} else {
				cur := sp
				for {
					in := topInline(cur, addr)
					if in == nil {
						break
					}
					if e, ok := in.LowestPC(); ok && e == addr {
						lineno, fname = in.CallLine, u.File(in.CallFile)
						break
					}
					if in.Name == "" || in.DeclLine == 0 {
						break
					}
					fn, baseline, cur = in.Name, in.DeclLine, in
				}
				if d := u.File(cur.DeclFile); d == "" || d != fname {
					lineno = 0
				}
			}
		}
	}
	p := &spec.Point{}
	if lineno != 0 {
		p.Line = lineno - baseline
	} else if basefunc != "" {
		p.Offset = addr - base
		fn = basefunc
	}
	if fn != "" {
		p.Function, p.HasFunction = fn, true
	}
	if fname != "" {
		p.File, p.HasFile = fname, true
	}
	if fn == "" && fname == "" {
		return nil, nil
	}
	return p, nil
}

// topInline is perf's die_find_top_inlinefunc.
func topInline(s *lines.Scope, addr uint64) *lines.Scope {
	for _, c := range s.Children {
		if c.Kind == lines.Inlined && c.HasPC(addr) {
			return c
		}
		if r := topInline(c, addr); r != nil {
			return r
		}
	}
	return nil
}

// finder carries perf's probe_finder state across units.
type finder struct {
	r         *Resolver
	entryOnly bool // at a function's entry: locals are refused
	pp        *spec.Point
	args      []spec.Arg     // the probe's arguments, converted at each address
	vars      *varsCollector // -V: collect variables instead of trace points
	optimized *bool          // cached optimizedTarget of cu
	cu        *dwarfinfo.CU
	tps       []tracePoint
	lazyLines map[int]bool // source lines matching the lazy pattern
}

func (f *finder) warn(format string, args ...any) { f.r.opts.Warn(fmt.Sprintf(format, args...)) }

// searchUnit is perf's probe_point_search_cb over the first matching
// function of one unit.
func (f *finder) searchUnit(refs []dwarfinfo.FuncRef) error {
	cu, err := f.r.f.Unit(refs[0].Unit)
	if err != nil {
		return err
	}
	f.cu, f.optimized = cu, nil
	u := cu.Lines
	pp := f.pp
	if pp.HasFile && cuFindRealpath(u, pp.File) == "" {
		return nil
	}
	glob := spec.IsGlob(pp.Function)
	for _, ref := range refs {
		sp := cu.Scopes[ref.Offset]
		if sp == nil || !sp.IsFuncDef() {
			continue
		}
		if pp.HasFile && !lines.TailCmp(pp.File, u.File(sp.DeclFile)) {
			continue
		}
		if err := f.searchFunc(sp); err != nil || !glob {
			return err // perf stops at the first function of a unit unless FUNC is a glob
		}
	}
	return nil
}

// searchFunc is the body of perf's probe_point_search_cb for one function.
func (f *finder) searchFunc(sp *lines.Scope) error {
	u := f.cu.Lines
	pp := f.pp
	fname := u.File(sp.DeclFile)
	switch {
	case pp.Line != 0:
		return f.byLine(fname, sp.DeclLine+pp.Line)
	case sp.IsFuncInstance():
		addr, _ := sp.LowestPC()
		if addr == 0 {
			return nil
		}
		if pp.HasLazy {
			return f.lazy(sp, fname)
		}
		addr, err := f.skipPrologue(sp, addr)
		if err != nil {
			return err
		}
		return f.callProbeFinder(sp, addr+pp.Offset)
	case !f.r.opts.NoInlines:
		for _, in := range u.Instances(sp) {
			if pp.HasLazy {
				if err := f.lazy(in, fname); err != nil {
					if errors.Is(err, ErrNotFound) {
						return nil
					}
					return err
				}
				continue
			}
			addr, ok := in.LowestPC()
			if !ok {
				f.warn("Failed to get entry address of %s.", in.Name)
				return nil
			}
			if addr == 0 {
				return nil
			}
			if err := f.callProbeFinder(in, addr+pp.Offset); err != nil {
				if errors.Is(err, ErrNotFound) {
					return nil
				}
				return err
			}
		}
	}
	return nil
}

// cuFindRealpath is perf's cu_find_realpath: the first file of the unit
// whose path ends with fname.
func cuFindRealpath(u *lines.Unit, fname string) string {
	for _, f := range u.Files {
		if lines.TailCmp(f, fname) {
			return f
		}
	}
	return ""
}

// byLine is perf's find_probe_point_by_line over the whole unit.
func (f *finder) byLine(fname string, lno int) error {
	u := f.cu.Lines
	return u.WalkLines(nil, func(file string, line int, addr uint64) error {
		if line != lno || !lines.TailCmp(file, fname) {
			return nil
		}
		if err := f.verifyRepresentative(file, line, addr); err != nil {
			return err
		}
		sc := f.bestScope(fname, lno, addr)
		if sc == nil {
			f.warn("Failed to find scope of probe point.")
			return errorf(ErrNotFound, "")
		}
		return f.callProbeFinder(sc, addr)
	})
}

// verifyRepresentative is perf's verify_representive_line.
func (f *finder) verifyRepresentative(fname string, lineno int, addr uint64) error {
	u := f.cu.Lines
	rf, rl, ok := u.LineInfo(addr)
	if !ok || fname != rf || lineno == rl {
		return nil
	}
	f.warn("This line is sharing the address with other lines.")
	name := ""
	if f.pp.HasFunction {
		if sc := f.bestScope(rf, rl, addr); sc != nil && spec.GlobMatch(sc.Name, f.pp.Function) && sc.DeclLine != 0 {
			name = sc.Name
			rl -= sc.DeclLine
		}
	}
	if name == "" {
		name = rf
	}
	f.warn("Please try to probe at %s:%d instead.", name, rl)
	return errorf(ErrNotFound, "")
}

// bestScope is perf's find_best_scope for (file, line) at addr.
func (f *finder) bestScope(fname string, line int, addr uint64) *lines.Scope {
	u := f.cu.Lines
	var best *lines.Scope
	diff := int(^uint(0) >> 1)
	hit := u.WalkFunctionsAt(addr, func(s *lines.Scope) bool {
		if fname != "" && u.File(s.DeclFile) != fname {
			return false
		}
		if f.pp.HasFunction {
			if matchName(s, f.pp.Function) {
				best = s
				return true
			}
			return false
		}
		if s.DeclLine < line && diff > line-s.DeclLine {
			diff = line - s.DeclLine
			best = s
		}
		return false
	})
	if !hit && best == nil {
		u.WalkFunctionsAt(addr, func(s *lines.Scope) bool { best = s; return true })
	}
	return best
}

// matchName is perf's die_match_name.
func matchName(s *lines.Scope, glob string) bool {
	return s.Name != "" && spec.GlobMatch(s.Name, glob) || s.Linkage != "" && spec.GlobMatch(s.Linkage, glob)
}

// callProbeFinder is perf's call_probe_finder + add_probe_trace_event.
func (f *finder) callProbeFinder(sc *lines.Scope, addr uint64) error {
	u := f.cu.Lines
	sp := sc
	if !sc.IsFuncDef() {
		sp = u.FindRealFunc(addr)
		if sp == nil {
			if t := u.FindTailFunc(addr); t != nil {
				f.warn("Ignoring tail call from %s", t.Name)
				return nil
			}
			f.warn("Failed to find probe point in any functions.")
			return errorf(ErrNotFound, "")
		}
	}
	// perf resolves a DW_OP_call_frame_cfa frame base through CFI and
	// gives up on addresses no FDE covers (before any other check).
	if sp.FrameBaseCFA && f.r.f.HasCFI() {
		ok, err := f.r.f.CFICovers(addr)
		if err != nil {
			return err
		}
		if !ok {
			f.warn("Failed to get call frame on 0x%x", addr)
			return errorf(ErrNotFound, "")
		}
	}
	if f.vars != nil {
		return f.collectVars(sc, sp, addr)
	}
	for _, tp := range f.tps {
		if tp.addr == addr {
			return nil
		}
	}
	if len(f.tps) == f.r.opts.MaxProbes {
		f.warn("Too many( > %d) probe point found.", f.r.opts.MaxProbes)
		return errorf(ErrInvalid, "")
	}
	tp, err := f.convertToTracePoint(sp, addr)
	if err != nil {
		return err
	}
	tp.realname = sc.Name
	tp.unit = u
	if len(f.args) > 0 {
		ctx := &scopeCtx{f: f, cu: f.cu, sc: sc, sp: sp, addr: addr}
		if err := ctx.frameBase(); err != nil {
			return err
		}
		if tp.args, err = ctx.traceArgs(f.args, f.r.opts.Features.Immediates); err != nil {
			return err
		}
	}
	f.tps = append(f.tps, tp)
	return nil
}

// collectVars is the -V callback (perf's add_available_vars).
func (f *finder) collectVars(sc, sp *lines.Scope, addr uint64) error {
	for _, a := range f.vars.addrs {
		if a == addr {
			return nil
		}
	}
	if len(f.vars.lists) == f.r.opts.MaxProbes {
		f.warn("Too many( > %d) probe point found.", f.r.opts.MaxProbes)
		return errorf(ErrInvalid, "")
	}
	tp, err := f.convertToTracePoint(sp, addr)
	if err != nil {
		return err
	}
	ctx := &scopeCtx{f: f, cu: f.cu, sc: sc, sp: sp, addr: addr}
	if err := ctx.frameBase(); err != nil {
		return err
	}
	return ctx.collect(f.vars, tp.symbol, tp.offset)
}

// convertToTracePoint is perf's convert_to_trace_point.
func (f *finder) convertToTracePoint(sp *lines.Scope, addr uint64) (tracePoint, error) {
	if !sp.HasPC(addr) {
		f.warn("Specified offset is out of %s", sp.Name)
		return tracePoint{}, errorf(ErrInvalid, "")
	}
	tp := tracePoint{addr: addr}
	var entry uint64
	if sp.HasEntryPC {
		entry, tp.symbol = sp.EntryPC, sp.Name
	} else {
		m, err := f.r.symbols()
		if err != nil {
			return tracePoint{}, err
		}
		sym, ok := m.find(addr)
		if !ok || (sym.typ != elf.STT_FUNC && sym.typ != elf.STT_GNU_IFUNC) {
			f.warn("Failed to find symbol at 0x%x", addr)
			return tracePoint{}, errorf(ErrNotFound, "")
		}
		entry, tp.symbol = sym.start, sym.name()
	}
	tp.offset = addr - entry
	if f.pp.Return {
		if entry != addr {
			f.warn("Failed to find \"%s%%return\",\n because %s is an inlined function and has no return point.", f.pp.Function, f.pp.Function)
			return tracePoint{}, errorf(ErrInvalid, "")
		}
		tp.retprobe = true
	}
	return tp, nil
}

// postProcess renames DWARF function names to the ELF symbols that hold the
// addresses (perf's post_process_probe_trace_point): .isra/.constprop
// clones, inline instances inside other functions.
func (r *Resolver) postProcess(tps []tracePoint) error {
	m, err := r.postProcessSymbols()
	if err != nil {
		return err
	}
	for i := range tps {
		sym, ok := m.find(tps[i].addr)
		if !ok {
			if r.user {
				return errorf(ErrNotFound, "Failed to find symbol at 0x%x", tps[i].addr)
			}
			if r.mod != nil {
				return errNoModuleSymbol
			}
			continue
		}
		if name := sym.name(); name != tps[i].symbol {
			if tps[i].realname == "" {
				tps[i].realname = tps[i].symbol
			}
			tps[i].symbol = name
		}
		tps[i].offset = tps[i].addr - sym.start
	}
	return nil
}

// findSymbols is perf's find_probe_trace_events_from_map: FUNC[+OFF] and
// FUNC%return from the symbol table.
func (r *Resolver) findSymbols(pp *spec.Point) ([]tracePoint, error) {
	m, err := r.nameSymbols()
	if err != nil {
		return nil, err
	}
	cut := !strings.Contains(pp.Function, "@")
	// The kernel's symbol map holds only text; a user binary's holds data
	// objects too (perf then skips them as non-functions).
	match := func(n []byte) bool { return spec.GlobMatch(string(n), pp.Function) }
	if !spec.IsGlob(pp.Function) && !strings.Contains(pp.Function, "\\") {
		want := []byte(pp.Function)
		match = func(n []byte) bool { return bytes.Equal(n, want) }
	}
	matched := m.byName(match, cut, r.vmlinux())
	target := r.targetName()
	if len(matched) == 0 {
		return nil, errorf(ErrNotFound, "Failed to find symbol %s in %s", pp.Function, target)
	}
	if len(matched) > r.opts.MaxProbes {
		return nil, errorf(ErrInvalid, "Too many functions matched in %s", target)
	}
	// perf rebases kernel symbol-table probes on the relocation symbol
	// (_text) unless they are return probes on a kernel whose README does
	// not offer "place (kretprobe)" offsets.
	var reloc *symbol
	if r.vmlinux() && (!pp.Return || r.opts.Features.KretprobeOffset) {
		reloc = r.relocSymbol()
	}
	// perf's kprobe_warn_out_range: kernel probes must lie strictly after
	// the start of the kernel text map and not beyond its end.
	var textLo, textHi uint64
	if t := r.f.ELF.Section(".text"); t != nil && r.vmlinux() {
		textLo, textHi = t.Addr, t.Addr+t.Size
	}
	var tps []tracePoint
	seen := map[uint64]bool{}
	for _, s := range matched {
		if s.typ != elf.STT_FUNC || seen[s.start] {
			continue
		}
		seen[s.start] = true
		if pp.Offset > s.end-s.start {
			return nil, errorf(ErrNotFound, "Offset %d is bigger than the size of %s", pp.Offset, s.name())
		}
		if textHi != 0 && (s.start+pp.Offset <= textLo || textHi < s.start+pp.Offset) {
			r.opts.Warn(fmt.Sprintf("%s is out of .text, skip it.", s.name()))
			continue
		}
		tp := tracePoint{addr: s.start + pp.Offset, symbol: s.name(), offset: pp.Offset,
			realname: s.name(), retprobe: pp.Return}
		if reloc != nil {
			tp.symbol, tp.offset = reloc.name(), tp.addr-reloc.start
		}
		tps = append(tps, tp)
	}
	if len(tps) == 0 {
		// perf fails silently when every match was skipped or none was a
		// function symbol.
		return nil, errorf(ErrNotFound, "")
	}
	return tps, nil
}

// checkBoundary refuses an address inside an instruction, which the kernel
// would reject with EILSEQ (perf emits it anyway).
func (r *Resolver) checkBoundary(tp tracePoint) error {
	start, size, ok := r.functionBounds(tp.addr)
	if !ok {
		return nil // not in a known function: nothing to check against
	}
	code := r.f.Code(start, size)
	if code == nil {
		return nil
	}
	m, err := disasm.Boundaries(r.arch, code, nil)
	if err == nil && len(m.Undecodable()) > 0 && tp.unit != nil {
		// Resynchronise at the line table's instruction starts.
		if rows, rerr := tp.unit.AllRows(); rerr == nil {
			m, err = disasm.Boundaries(r.arch, code, knownBoundaries(rows, start, size))
		}
	}
	if err != nil {
		return fmt.Errorf("decode %s+%d: %w", tp.symbol, tp.offset, err)
	}
	off := int(tp.addr - start)
	if err := m.Check(off); err != nil {
		if errors.Is(err, disasm.ErrNotBoundary) {
			is, n, text, _ := m.Insn(off)
			sym, _ := r.syms.find(start)
			return errorf(ErrNotBoundary, "%s+%d is not an instruction boundary: it is inside the %d-byte instruction at %s+%d (%s); the kernel would reject it with EILSEQ.",
				tp.symbol, tp.offset, n, sym.name(), is, text)
		}
		return fmt.Errorf("%s+%d: %w", tp.symbol, tp.offset, err)
	}
	return nil
}

// functionBounds finds the sized function symbol containing addr.
func (r *Resolver) functionBounds(addr uint64) (uint64, uint64, bool) {
	m, err := r.symbols()
	if err != nil {
		return 0, 0, false
	}
	s, ok := m.find(addr)
	if !ok || s.end <= s.start || (s.typ != elf.STT_FUNC && s.typ != elf.STT_GNU_IFUNC) {
		return 0, 0, false
	}
	return s.start, s.end - s.start, true
}

// knownBoundaries lists offsets in [start, start+size) that the line table
// says begin an instruction, to resynchronise decoding.
func knownBoundaries(rows []lines.Row, start, size uint64) []int {
	known := []int{0}
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Addr >= start })
	for ; i < len(rows) && rows[i].Addr < start+size; i++ {
		if !rows[i].EndSeq {
			known = append(known, int(rows[i].Addr-start))
		}
	}
	return known
}

// name assigns group and event names as perf's show_probe_trace_events.
func (r *Resolver) name(p *spec.Probe, tps []tracePoint) ([]probe.Probe, error) {
	pp := p.Point
	group := "probe"
	if r.user {
		group = spec.UprobeGroup(r.f.Path)
	}
	if pp.Group != "" {
		group = pp.Group
	}
	used := map[string]bool{}
	var out []probe.Probe
	for _, tp := range tps {
		base := pp.Event
		if base == "" {
			if pp.HasFunction && !strings.HasPrefix(pp.Function, "0x") && !spec.IsGlob(pp.Function) {
				base = pp.Function
			} else {
				base = tp.realname
			}
		}
		ev, err := newEventName(base, tp.retprobe, used)
		if err != nil {
			return nil, err
		}
		if !r.opts.Features.MultiProbe {
			used[ev] = true
		}
		pr := probe.Probe{Group: group, Event: ev, Return: tp.retprobe}
		if r.user {
			pr.Kind = probe.Uprobe
			pr.Target = probe.Location{Path: r.f.Path, Offset: r.fileOffset(tp.addr)}
		} else {
			pr.Target = probe.Location{Module: r.moduleName(), Symbol: tp.symbol, Offset: tp.offset}
		}
		out = append(out, pr)
	}
	return out, nil
}

// newEventName is perf's get_new_event_name with suffixes allowed: the
// name derived from base, or its first free _N suffix among used.
func newEventName(base string, ret bool, used map[string]bool) (string, error) {
	name := spec.EventName(base, ret)
	if used[name] {
		var ok bool
		if name, ok = probe.FreeName(spec.EventName(base, false), func(n string) bool { return used[n] }); !ok {
			return "", errorf(ErrInvalid, "Too many events are on the same function.")
		}
	}
	return checkEventName(name)
}

// checkEventName returns name, or perf's error when the kernel would not
// take it as an event name.
func checkEventName(name string) (string, error) {
	if len(name) >= probedef.MaxEventNameLen {
		return "", errorf(ErrInvalid, "Event name %q is too long (the kernel allows %d characters).", name, probedef.MaxEventNameLen-1)
	}
	if !spec.IsCFuncName(name) {
		return "", errorf(ErrInvalid, "Internal error: \"%s\" is an invalid event name.", name)
	}
	return name, nil
}

// fileOffset converts an address of a user binary to the file offset
// uprobes take, as perf does: relative to .text's address-offset delta.
func (r *Resolver) fileOffset(addr uint64) uint64 {
	if s := r.f.ELF.Section(".text"); s != nil {
		return addr - (s.Addr - s.Offset)
	}
	return addr
}

// relocSymbol is perf's ref_reloc_sym: the image's _text (or _stext).
func (r *Resolver) relocSymbol() *symbol {
	var found [2]*symbol
	_ = r.f.Symbols(func(s dwarfinfo.Symbol) {
		for i, name := range []string{"_text", "_stext"} {
			if found[i] == nil && string(s.RawName) == name && s.Sect != elf.SHN_UNDEF {
				found[i] = &symbol{raw: []byte(name), start: s.Value}
			}
		}
	})
	if found[0] != nil {
		return found[0]
	}
	return found[1]
}

// nameMatcher matches DWARF names like perf's die_match_name: a glob when
// the name has glob characters, else exactly.
func nameMatcher(name string) dwarfinfo.NameMatcher {
	if !spec.IsGlob(name) {
		return dwarfinfo.ExactName(name)
	}
	return func(n []byte) bool { return spec.GlobMatch(string(n), name) }
}
