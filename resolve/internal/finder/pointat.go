package finder

import (
	"debug/elf"
	"fmt"

	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/internal/symtab"
	"github.com/gprobe/gprobe/resolve/spec"
)

// alternative is perf's find_alternative_probe_point: a function name
// that DWARF does not know (a .constprop/.isra clone, an alias, a C++ or
// Rust name qualified with '::') is looked up in the symbol table and its
// address mapped back to a DWARF point.
//
// It returns nil when there is no such symbol or no point at its address,
// and an error (perf's -EINVAL) when no unit covers the address.
func (d *DWARF) alternative(pp *spec.Point) (*spec.Point, error) {
	alts, err := d.alternatives(pp, false)
	if len(alts) == 0 {
		return nil, err
	}
	return alts[0].point, nil
}

// altPoint is one point the alternative search found.
type altPoint struct {
	point *spec.Point
	// overload names the function with its parameters when the name
	// matched several functions (core.TracePoint.Overload).
	overload string
}

// alternatives is alternative, which perf stops at the first symbol the
// name matches (in address order); with all, and beyond perf, a qualified
// name gives a point for each function it matches at its own address
// (every overload of a C++ method, every instance of a Rust generic).
func (d *DWARF) alternatives(pp *spec.Point, all bool) ([]altPoint, error) {
	if !pp.HasFunction || pp.HasFile {
		return nil, nil
	}
	m, err := d.im.NameSymbols()
	if err != nil {
		return nil, nil
	}
	// perf looks in the kernel text map.
	q := symtab.Query{Pattern: pp.Function, TextOnly: d.im.Vmlinux()}
	var syms []symtab.Symbol
	if all && core.Qualified(pp.Function) {
		for _, s := range m.ByName(q) {
			if len(syms) == 0 || syms[len(syms)-1].Start != s.Start {
				syms = append(syms, s)
			}
		}
	} else if s, ok := m.FirstByName(q); ok {
		syms = append(syms, s)
	}
	if len(syms) == 0 || syms[0].Start == 0 {
		return nil, nil
	}
	// Unlike perf, for a name no DWARF function has (a qualified C++ or
	// Rust name), find the unit by the units' own ranges where
	// .debug_aranges has none for the address (clang writes none). A
	// function DWARF knows by that name (whose line or pattern matched
	// nothing) gets perf's answer.
	anyUnit := false
	if !d.im.PerfArangesOnly {
		refs, err := d.im.File.FindFuncs(dwarfinfo.ExactName(pp.Function), true)
		anyUnit = err == nil && len(refs) == 0
	}
	var out []altPoint
	for _, s := range syms {
		if d.im.User && s.Type == elf.STT_GNU_IFUNC {
			d.im.Opts.Warn(fmt.Sprintf("Warning: The probe function (%s) is a GNU indirect function.\n"+
				"Consider identifying the final function used at run time and set the probe directly on that.", pp.Function))
		}
		addr := d.im.PerfAltAddr(s.Start)
		d.im.Debugf("Symbol %s address found : %x", pp.Function, addr)
		alt, err := d.probePointAt(addr, anyUnit)
		if alt == nil {
			if err != nil && len(syms) == 1 {
				return nil, err
			}
			continue
		}
		alt.Offset += pp.Offset
		alt.Line += pp.Line
		alt.Return = pp.Return
		// perf does not carry a lazy pattern over: an unmatched FUNC;PTN
		// ends up at the function's entry.
		ap := altPoint{point: alt}
		if len(syms) > 1 {
			ap.overload = symtab.Naming{Demangle: true, Params: true}.Of(s.Raw)
		}
		out = append(out, ap)
	}
	return out, nil
}

// probePointAt is perf's debuginfo__find_probe_point: the function (and
// relative line, or offset) an address belongs to.
//
// It returns nil and an error wrapping core.ErrInvalid when no unit covers addr
// (perf's -EINVAL), and nil, nil when the unit has no point there. perf
// (libdw 0.188's dwarf_addrdie) finds the unit through .debug_aranges
// alone; with anyUnit, a unit they leave out is found by its own ranges.
func (d *DWARF) probePointAt(addr uint64, anyUnit bool) (*spec.Point, error) {
	idx, err := d.im.File.UnitForAddr(addr)
	if err == nil && idx < 0 && anyUnit {
		idx, err = d.im.File.UnitCovering(addr)
	}
	if err != nil || idx < 0 {
		d.im.Opts.Warn(fmt.Sprintf("Failed to find debug information for address %x", addr))
		return nil, core.Errorf(core.ErrInvalid, "Debuginfo analysis failed.")
	}
	cu, err := d.im.File.Unit(idx)
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
		if fn != "" && ok {
			// perf's die_entrypc sets the base before dwarf_decl_line
			// can fail (an assembly function has no declaration line).
			base = entry
		}
		if fn == "" || !ok || sp.DeclLine == 0 {
			lineno = 0
		} else {
			baseline = sp.DeclLine
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
