package finder

import (
	"debug/elf"

	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/vars"
	"github.com/gprobe/gprobe/resolve/spec"
)

// lazy is perf's find_probe_point_lazy: the source lines matching the
// pattern (read once per probe), then every address of those lines in
// root (or the whole unit).
func (f *finder) lazy(root *lines.Scope, fname string) error {
	u := f.cu.Lines
	if f.lazyLines == nil {
		path, err := lines.SourcePath(fname, u.CompDir, f.im.Opts.SourcePrefix)
		if err != nil {
			f.warn("Failed to find source file path.")
			return core.Errorf(core.ErrNotFound, "")
		}
		nums, err := lines.MatchLazy(path, func(l string) bool { return spec.LazyMatch(l, f.pp.Lazy) })
		if err != nil {
			f.warn("Failed to open %s: %v", path, err)
			return core.Errorf(core.ErrNotFound, "")
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
		f.im.Debugf("Probe line found: line:%d addr:0x%x", line, addr)
		sc := f.bestScope(fname, line, addr)
		if sc == nil {
			f.warn("Failed to find scope of probe point.")
			return core.Errorf(core.ErrNotFound, "")
		}
		return f.callProbeFinder(sc, addr)
	})
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
			return core.Errorf(core.ErrNotFound, "")
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
		if sc := f.bestScope(rf, rl, addr); sc != nil && matchName(sc, f.pp.Function) && sc.DeclLine != 0 {
			name = sc.Name
			rl -= sc.DeclLine
		}
	}
	if name == "" {
		name = rf
	}
	f.warn("Please try to probe at %s:%d instead.", name, rl)
	return core.Errorf(core.ErrNotFound, "")
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
			return core.Errorf(core.ErrNotFound, "")
		}
	}
	// perf resolves a DW_OP_call_frame_cfa frame base through CFI and
	// gives up on addresses no FDE covers (before any other check).
	if sp.FrameBaseCFA && f.im.File.HasCFI() {
		ok, err := f.im.File.CFICovers(addr)
		if err != nil {
			return err
		}
		if !ok {
			f.warn("Failed to get call frame on 0x%x", addr)
			return core.Errorf(core.ErrNotFound, "")
		}
	}
	if f.vars != nil {
		return f.collectVars(sc, sp, addr)
	}
	for _, tp := range f.tps {
		if tp.Addr == addr {
			return nil
		}
	}
	if len(f.tps) == f.im.Opts.MaxProbes {
		f.warn("Too many( > %d) probe point found.", f.im.Opts.MaxProbes)
		return core.Errorf(core.ErrTooManyPoints, "")
	}
	tp, err := f.convertToTracePoint(sp, addr)
	if err != nil {
		return err
	}
	f.im.Debugf("Probe point found: %s+%d", tp.Symbol, tp.Offset)
	tp.Realname = sc.Name
	tp.Unit = u
	if len(f.args) > 0 {
		vsc, err := vars.NewScope(f.im, f.cu, sc, sp, addr, f.entryOnly)
		if err != nil {
			return err
		}
		if tp.Args, err = vsc.TraceArgs(f.args, f.im.Opts.Features.Immediates); err != nil {
			return err
		}
	}
	f.tps = append(f.tps, tp)
	return nil
}

// collectVars is the -V callback (perf's add_available_vars).
func (f *finder) collectVars(sc, sp *lines.Scope, addr uint64) error {
	if f.vars.Has(addr) {
		return nil
	}
	if len(f.vars.Lists) == f.im.Opts.MaxProbes {
		f.warn("Too many( > %d) probe point found.", f.im.Opts.MaxProbes)
		return core.Errorf(core.ErrTooManyPoints, "")
	}
	tp, err := f.convertToTracePoint(sp, addr)
	if err != nil {
		return err
	}
	f.im.Debugf("Probe point found: %s+%d", tp.Symbol, tp.Offset)
	vsc, err := vars.NewScope(f.im, f.cu, sc, sp, addr, f.entryOnly)
	if err != nil {
		return err
	}
	return vsc.Collect(f.vars, tp.Symbol, tp.Offset)
}

// convertToTracePoint is perf's convert_to_trace_point.
func (f *finder) convertToTracePoint(sp *lines.Scope, addr uint64) (core.TracePoint, error) {
	if !sp.HasPC(addr) {
		f.warn("Specified offset is out of %s", sp.Name)
		return core.TracePoint{}, core.Errorf(core.ErrInvalid, "")
	}
	tp := core.TracePoint{Addr: addr}
	var entry uint64
	if sp.HasEntryPC {
		entry, tp.Symbol = sp.EntryPC, sp.Name
	} else {
		m, err := f.im.Symbols()
		if err != nil {
			return core.TracePoint{}, err
		}
		looked := f.dwflAddr(addr)
		sym, ok := m.Find(looked)
		if !ok || (sym.Type != elf.STT_FUNC && sym.Type != elf.STT_GNU_IFUNC) {
			f.warn("Failed to find symbol at 0x%x", addr)
			return core.TracePoint{}, core.Errorf(core.ErrNotFound, "")
		}
		// libdwfl gives the symbol's value biased as the address it
		// was asked about is: the offset is from there.
		entry, tp.Symbol = sym.Start+(addr-looked), sym.Name()
	}
	tp.Offset = addr - entry
	if f.pp.Return {
		if entry != addr {
			f.warn("Failed to find \"%s%%return\",\n because %s is an inlined function and has no return point.", f.pp.Function, f.pp.Function)
			return core.TracePoint{}, core.Errorf(core.ErrInvalid, "")
		}
		tp.Return = true
	}
	return tp, nil
}

// skipPrologue is perf's skip_prologue: for a user program built without
// optimization, a FUNC probe with variable arguments moves past the
// prologue, where the parameters have their stack homes.
func (f *finder) skipPrologue(sp *lines.Scope, addr uint64) (uint64, error) {
	pp := f.pp
	if !f.im.User || addr == 0 || !pp.HasFunction || pp.Line != 0 || pp.Return || pp.HasLazy || pp.Offset != 0 || pp.IsAbs || !core.WithVar(f.args) {
		return addr, nil
	}
	opt, err := f.optimizedTarget()
	if err != nil || opt {
		return addr, err
	}
	f.warn("Target program is compiled without optimization. Skipping prologue.\nProbe on address 0x%x to force probing at the function entry.\n", addr)
	// die_skip_prologue
	if sp.HighPC == 0 {
		return addr, nil
	}
	rows, err := f.cu.Lines.AllRows()
	if err != nil {
		return addr, err
	}
	idx := -1
	for i, r := range rows {
		if r.Addr == addr {
			idx = i
			break
		}
	}
	if idx < 0 {
		return addr, nil
	}
	entryLine := rows[idx].Line
	i := idx
	for ; i < len(rows); i++ {
		r := rows[i]
		if r.Addr >= sp.HighPC || r.PrologueEnd || r.Line != entryLine || i != idx {
			break
		}
	}
	if i == len(rows) {
		i--
	}
	post := rows[i].Addr
	if post >= sp.HighPC && i > 0 {
		post = rows[i-1].Addr
	}
	return post, nil
}

// optimizedTarget is perf's die_is_optimized_target: some variable of the
// unit has a location list.
func (f *finder) optimizedTarget() (bool, error) {
	if f.optimized != nil {
		return *f.optimized, nil
	}
	opt, err := f.cu.HasLocationLists()
	if err != nil {
		return false, err
	}
	f.optimized = &opt
	return opt, nil
}
