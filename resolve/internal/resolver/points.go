package resolver

import (
	"bytes"
	"debug/elf"
	"fmt"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/spec"
	"github.com/gprobe/gprobe/resolve/target"
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
		s := r.im.File.ELF.Section(".text")
		if s == nil || loc.Offset == 0 {
			return nil, false
		}
		addr = loc.Offset + s.Addr - s.Offset
	case loc.Symbol != "":
		// Any symbol of that name, not only the one perf's map keeps at
		// its address: _text shares startup_64's (perf's
		// kernel_get_symbol_address_by_name).
		found := false
		want := []byte(loc.Symbol)
		_ = r.im.File.Symbols(func(s dwarfinfo.Symbol) {
			if !found && bytes.Equal(s.RawName, want) && s.Sect != elf.SHN_UNDEF {
				addr, found = s.Value+loc.Offset, true
			}
		})
		if !found {
			return nil, false
		}
	default:
		addr = loc.Address
	}
	var err error
	if r.debug != nil {
		p, err = r.debug.PointAt(addr)
	}
	if p == nil || err != nil {
		m, err := r.im.Symbols()
		if err != nil {
			return nil, false
		}
		s, found := m.Find(addr)
		if !found {
			return nil, false
		}
		p = &spec.Point{Function: s.Name(), HasFunction: true, Offset: addr - s.Start}
	}
	p.Return = ret
	return p, true
}

// Points maps installed probes back to probe points, as `perf probe -l`
// does, opening each image once (perf's debuginfo cache): user binaries by
// path, the kernel through a vmlinux given or found by
// target.FindKernelDebuginfo.
type Points struct {
	vmlinux string
	images  map[string]*Resolver
	// Kernel maps a kernel place onto the function holding it when no
	// vmlinux knows it (perf's find_perf_probe_point_from_map through
	// kallsyms: _text+N is shown as FUNC+OFF); nil leaves the place as
	// it is.
	Kernel interface {
		Symbolize(sym string, off uint64) (name string, fnOff uint64, ok bool)
	}
}

// NewPoints returns a Points using vmlinux for kernel probes ("" looks for
// the running kernel's debuginfo when first needed).
func NewPoints(vmlinux string) *Points {
	return &Points{vmlinux: vmlinux, images: map[string]*Resolver{}}
}

func (ps *Points) resolver(path string, user bool) *Resolver {
	if r, ok := ps.images[path]; ok {
		return r
	}
	var r *Resolver
	if f, err := dwarfinfo.Open(path); err == nil {
		r, _ = fromImage(f, user, nil, 0, Options{})
	}
	ps.images[path] = r
	return r
}

// PointOf is the probe point perf -l shows for p: through the image's DWARF
// or symbols when they know the place, else the place itself (SYM+OFF,
// 0xADDR, or the file offset).
func (ps *Points) PointOf(p *probe.Probe) string {
	var sp *spec.Point
	t := p.Target
	switch {
	case p.Kind == probe.Uprobe:
		if r := ps.resolver(t.Path, true); r != nil {
			sp, _ = r.PointOf(t, p.Return)
		}
	case t.Module == "" && t.Symbol != "":
		if ps.vmlinux == "" {
			ps.vmlinux, _ = target.FindKernelDebuginfo()
		}
		if ps.vmlinux != "" {
			if r := ps.resolver(ps.vmlinux, false); r != nil {
				sp, _ = r.PointOf(t, p.Return)
			}
		}
	}
	if sp == nil && p.Kind == probe.Kprobe && t.Module == "" && t.Symbol != "" && ps.Kernel != nil {
		if fn, off, ok := ps.Kernel.Symbolize(t.Symbol, t.Offset); ok {
			sp = &spec.Point{Function: fn, HasFunction: true, Offset: off, Return: p.Return}
		}
	}
	switch {
	case sp != nil:
		return sp.String()
	case p.Kind == probe.Kprobe && t.Symbol != "":
		return (&spec.Point{Function: t.Symbol, HasFunction: true, Offset: t.Offset, Return: p.Return}).String()
	case p.Kind == probe.Kprobe:
		return fmt.Sprintf("0x%x", t.Address)
	}
	return fmt.Sprintf("0x%x", t.Offset)
}
