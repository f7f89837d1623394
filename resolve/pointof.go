package resolve

import (
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/resolve/spec"
)

// PointOf maps an installed probe's location in this image back to a probe
// point, as `perf probe -l` does (convert_to_perf_probe_point): through DWARF
// first (FUNC:LINE@FILE, FUNC+OFF@FILE), then the symbol table (FUNC+OFF).
// ok is false when neither knows the address; the caller then shows the raw
// location. A user location's Offset is a file offset.
func (r *Resolver) PointOf(loc probe.Location, ret bool) (p *spec.Point, ok bool) {
	var addr uint64
	switch {
	case loc.Path != "":
		s := r.f.ELF.Section(".text")
		if s == nil || loc.Offset == 0 {
			return nil, false
		}
		addr = loc.Offset + s.Addr - s.Offset
	case loc.Symbol != "":
		m, err := r.symbols()
		if err != nil {
			return nil, false
		}
		found := false
		for _, s := range m.all() {
			if s.exec && string(s.raw) == loc.Symbol {
				addr, found = s.start+loc.Offset, true
				break
			}
		}
		if !found {
			return nil, false
		}
	default:
		addr = loc.Address
	}
	warn := r.opts.Warn
	r.opts.Warn = func(string) {} // perf reports lookup failures at debug level only
	p, err := r.probePointAt(addr)
	r.opts.Warn = warn
	if err != nil || p == nil {
		m, err := r.symbols()
		if err != nil {
			return nil, false
		}
		s, found := m.find(addr)
		if !found {
			return nil, false
		}
		p = &spec.Point{Function: s.name(), HasFunction: true, Offset: addr - s.start}
	}
	p.Return = ret
	return p, true
}
