package finder

import (
	"errors"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/vars"
	"github.com/gprobe/gprobe/resolve/spec"
)

// Places is perf's search for p's addresses through DWARF: the point's
// addresses with the arguments converted at each, the alternative search
// through the symbol table when DWARF does not know the name, the magic
// value where an argument was found at some addresses only, and the
// points renamed to the symbols holding them.
func (d *DWARF) Places(p *spec.Probe) ([]core.TracePoint, error) {
	pp := p.Point
	immediates := d.im.Opts.Features.Immediates
	tps, err := d.findDWARF(&pp, p.Args)
	if err == nil && len(tps) == 0 && len(p.Args) > 0 && immediates && (!core.Qualified(pp.Function) || d.im.PerfAltArgs) {
		// perf's fill_empty_trace_arg: with arguments (and kernel
		// immediates) finding no point is an error, reported
		// without a message and without the alternative search.
		// Beyond perf, a qualified name is still looked up.
		err = core.Errorf(core.ErrNotFound, "")
	}
	if err == nil && len(tps) == 0 {
		alts, _ := d.alternatives(&pp, true)
		for _, alt := range alts {
			more, aerr := d.findDWARF(alt.point, p.Args)
			if aerr != nil {
				tps, err = nil, aerr
				break
			}
			for i := range more {
				more[i].Overload = alt.overload
			}
			tps = append(tps, more...)
		}
	}
	if err == nil && len(tps) > 0 && len(p.Args) > 0 && immediates {
		err = vars.FillEmpty(p.Args, tps)
	}
	if err == nil && len(tps) > 0 {
		err = d.im.PostProcess(tps)
	}
	return tps, err
}

// Vars is perf's debuginfo__find_available_vars_at: for every address the
// probe point resolves to, the variables (and parameters) that have a
// location there. An empty result means the point was not found.
func (d *DWARF) Vars(pp *spec.Point, opts core.VarsOptions) ([]core.VarList, error) {
	vls, err := d.findVars(pp, opts)
	if err == nil && len(vls) == 0 {
		alts, aerr := d.alternatives(pp, true)
		switch {
		case len(alts) > 0:
			for _, alt := range alts {
				more, verr := d.findVars(alt.point, opts)
				if verr != nil {
					return nil, verr
				}
				vls = append(vls, more...)
			}
		case errors.Is(aerr, core.ErrInvalid):
			// perf's show_available_vars_at reports the failed
			// search itself ("Debuginfo analysis failed.").
			err = &core.Error{Err: core.ErrInvalid}
		}
	}
	return vls, err
}

func (d *DWARF) findVars(pp *spec.Point, opts core.VarsOptions) ([]core.VarList, error) {
	f := &finder{im: d.im, pp: pp, vars: &vars.Collector{Opts: opts}}
	if _, err := d.runFinder(f); err != nil {
		return nil, err
	}
	return f.vars.Lists, nil
}

// PointAt is perf's debuginfo__find_probe_point (see probePointAt),
// without its warnings: perf reports lookup failures at debug level only
// when it maps installed probes back (-l).
func (d *DWARF) PointAt(addr uint64) (*spec.Point, error) {
	warn := d.im.Opts.Warn
	d.im.Opts.Warn = func(string) {}
	defer func() { d.im.Opts.Warn = warn }()
	return d.probePointAt(addr, false)
}

// EntryArgs converts args at the entry address of the out-of-line
// function fn, found by its symbol: only the unit holding it is read.
func (d *DWARF) EntryArgs(fn string, args []spec.Arg) ([]probe.FetchArg, error) {
	addr, err := d.im.FunctionAddr(fn)
	if err != nil {
		return nil, err
	}
	idx, err := d.im.File.UnitForAddr(addr)
	if err != nil || idx < 0 {
		return nil, core.Errorf(core.ErrNotFound, "No debug information covers %s (0x%x).", fn, addr)
	}
	cu, err := d.im.File.Unit(idx)
	if err != nil {
		return nil, err
	}
	sp := cu.Lines.FindRealFunc(addr)
	if sp == nil {
		return nil, core.Errorf(core.ErrNotFound, "No function DIE covers %s (0x%x).", fn, addr)
	}
	if entry, ok := sp.LowestPC(); !ok || entry != addr {
		return nil, core.Errorf(core.ErrNotFound, "%s (0x%x) is not the entry of the function DWARF describes there (%s).", fn, addr, sp.Name)
	}
	sc, err := vars.NewScope(d.im, cu, sp, sp, addr, true)
	if err != nil {
		return nil, err
	}
	targs, err := sc.TraceArgs(args, false)
	if err != nil {
		return nil, err
	}
	return core.FetchArgs(targs), nil
}
