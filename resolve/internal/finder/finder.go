// Package finder answers from DWARF what perf probe 6.1's probe finder
// (probe-finder.c) answers: the addresses a probe point resolves to
// (functions, source lines, lazy patterns, inline instances) with the
// arguments converted at each (package vars), -V's variables there, -L's
// line ranges, the point an address belongs to (perf -l), and the
// arguments at a function's entry. DWARF implements core.Debug.
package finder

import (
	"errors"

	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/internal/vars"
	"github.com/gprobe/gprobe/resolve/spec"
)

// DWARF answers from the DWARF of an image.
type DWARF struct{ im *core.Image }

// New returns the DWARF source of im, whose File has DWARF.
func New(im *core.Image) *DWARF { return &DWARF{im: im} }

// findDWARF is perf's debuginfo__find_probe_location.
func (d *DWARF) findDWARF(pp *spec.Point, args []spec.Arg) ([]core.TracePoint, error) {
	return d.runFinder(&finder{im: d.im, pp: pp, args: args})
}

// runFinder is perf's debuginfo__find_probes: it calls f.callProbeFinder
// for every address the point resolves to.
func (d *DWARF) runFinder(f *finder) ([]core.TracePoint, error) {
	pp := f.pp
	if !pp.HasFunction {
		units, err := d.im.File.UnitsWithFile(pp.File)
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
	err := d.im.File.EachFuncs(nameMatcher(pp.Function), func(refs []dwarfinfo.FuncRef) (bool, error) {
		return false, f.searchUnit(refs)
	})
	if err != nil {
		return nil, err
	}
	return f.tps, nil
}

// searchFileUnit handles SRC:LINE and SRC;PTN in one unit.
func (f *finder) searchFileUnit(idx int) error {
	cu, err := f.im.File.Unit(idx)
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

// finder carries perf's probe_finder state across units.
type finder struct {
	im        *core.Image
	entryOnly bool // at a function's entry: locals are refused
	pp        *spec.Point
	args      []spec.Arg      // the probe's arguments, converted at each address
	vars      *vars.Collector // -V: collect variables instead of trace points
	optimized *bool           // cached optimizedTarget of cu
	cu        *dwarfinfo.CU
	tps       []core.TracePoint
	lazyLines map[int]bool // source lines matching the lazy pattern
}

func (f *finder) warn(format string, args ...any) { f.im.Warnf(format, args...) }

// searchUnit is perf's probe_point_search_cb over the first matching
// function of one unit.
func (f *finder) searchUnit(refs []dwarfinfo.FuncRef) error {
	cu, err := f.im.File.Unit(refs[0].Unit)
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
		f.im.Debugf("Matched function: %s [%x]", sp.Name, ref.Offset)
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
	case !f.im.Opts.NoInlines:
		for _, in := range u.Instances(sp) {
			if pp.HasLazy {
				if err := f.lazy(in, fname); err != nil {
					if errors.Is(err, core.ErrNotFound) {
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
				if errors.Is(err, core.ErrNotFound) {
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

// matchName is perf's die_match_name.
func matchName(s *lines.Scope, glob string) bool {
	return s.Name != "" && spec.GlobMatch(s.Name, glob) || s.Linkage != "" && spec.GlobMatch(s.Linkage, glob)
}

// nameMatcher matches DWARF names like perf's die_match_name: a glob when
// the name has glob characters, else exactly.
func nameMatcher(name string) dwarfinfo.NameMatcher {
	if !spec.IsGlob(name) {
		return dwarfinfo.ExactName(name)
	}
	return func(n []byte) bool { return spec.GlobMatch(string(n), name) }
}
