package finder

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/symtab"
	"github.com/gprobe/gprobe/resolve/spec"
)

// alternative is perf's find_alternative_probe_point: a function name
// that DWARF does not know (a .constprop/.isra clone, an alias) is looked up
// in the symbol table and its address mapped back to a DWARF point.
//
// It returns nil when there is no such symbol or no point at its address,
// and an error (perf's -EINVAL) when no unit covers the address.
func (d *DWARF) alternative(pp *spec.Point) (*spec.Point, error) {
	if !pp.HasFunction || pp.HasFile {
		return nil, nil
	}
	m, err := d.im.NameSymbols()
	if err != nil {
		return nil, nil
	}
	var addr uint64
	m.Each(func(s symtab.Symbol) bool {
		if !s.Exec && d.im.Vmlinux() {
			return true // perf looks in the kernel text map
		}
		n := s.Raw
		if i := bytes.IndexByte(n, '@'); i >= 0 && !strings.Contains(pp.Function, "@") {
			n = n[:i]
		}
		if spec.GlobMatch(string(n), pp.Function) {
			addr = s.Start
			return false
		}
		return true
	})
	if addr == 0 {
		return nil, nil
	}
	addr = d.im.PerfAltAddr(addr)
	alt, err := d.probePointAt(addr)
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
// It returns nil and an error wrapping core.ErrInvalid when no unit covers addr
// (perf's -EINVAL), and nil, nil when the unit has no point there.
func (d *DWARF) probePointAt(addr uint64) (*spec.Point, error) {
	idx, err := d.im.File.UnitForAddr(addr)
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
