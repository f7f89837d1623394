package resolver

import (
	"fmt"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/symtab"
	"github.com/gprobe/gprobe/resolve/spec"
)

// absolute is perf's try_to_find_absolute_address: 0xADDR probes a user
// binary at that file offset (what uprobe_events takes) or the kernel at
// that address, named abs_ADDR, with the arguments as written. It returns
// ok false when perf would go on to search debug information and the
// symbol table for a function named "0xADDR" (which fails there with
// perf's messages): for a point that needs DWARF (a line, a file, a lazy
// pattern), and for a kernel address out of the kernel's text.
//
// Where perf is wrong, gprobe differs (docs/differences.md): +OFF is added
// to the address (perf drops it), an address that is not an instruction
// boundary or, in a user binary, not in its code is refused (perf writes
// it), a kernel address is checked against the probed image's .text (perf
// checks the running kernel's, even for another kernel's vmlinux), and
// variables at
// an absolute address are refused with the reason (perf prints only its
// trailer).
func (r *Resolver) absolute(p *spec.Probe) (ps []probe.Probe, ok bool, err error) {
	pp := p.Point
	if pp.HasFile || pp.Line != 0 || pp.HasLazy {
		return nil, false, nil
	}
	if core.WithVar(p.Args) {
		return nil, true, core.Errorf(core.ErrNotFound, "%s is an absolute address: it has no variables in scope (%s); probe FUNC+OFF to fetch them, or fetch registers and memory as the kernel writes them.",
			pp.Function, firstVar(p.Args))
	}
	addr := pp.Abs + pp.Offset
	im := r.im
	tp := core.TracePoint{Addr: addr, Symbol: fmt.Sprintf("0x%x", addr), Realname: fmt.Sprintf("abs_%x", addr), Return: pp.Return}
	switch {
	case im.User:
		vaddr, err := im.CodeAddr(addr)
		if err != nil {
			return nil, true, err
		}
		tp.Addr = vaddr
		if s, ok := r.symbolAt(vaddr); ok {
			tp.Symbol, tp.Offset = s.Name(), vaddr-s.Start
		}
	case im.Module != nil:
		// perf checks a module's address against the kernel's text, which
		// no module address is in.
		im.Warnf("%s is out of .text, skip it.", tp.Symbol)
		return nil, false, nil
	default:
		// perf's kprobe_warn_out_range: strictly after the text's start,
		// not beyond its end.
		start, end, known := r.kernelText()
		if known && (addr <= start || end < addr) {
			im.Warnf("%s is out of .text, skip it.", tp.Symbol)
			if im.File == nil {
				return nil, true, core.Errorf(core.ErrNotFound, "Failed to find symbol %s in kernel", pp.Function)
			}
			return nil, false, nil
		}
		if s, ok := r.symbolAt(addr); ok {
			tp.Symbol, tp.Offset = s.Name(), addr-s.Start
		}
	}
	if im.File != nil {
		if err := im.CheckBoundaries([]core.TracePoint{tp}); err != nil {
			return nil, true, err
		}
	}
	named, err := im.Name(p, []core.TracePoint{tp})
	if err != nil {
		return nil, true, err
	}
	pr := named[0]
	if im.User {
		pr.Target = probe.Location{Path: im.File.Path, Offset: addr}
	} else {
		pr.Target = probe.Location{Address: addr}
	}
	pr.Args = core.RawArgs(p.Args)
	if err := core.CheckLimits([]probe.Probe{pr}); err != nil {
		return nil, true, err
	}
	return []probe.Probe{pr}, true, nil
}

// kernelText is the text of the kernel probed: the image's .text, else the
// running kernel's _stext to _etext from kallsyms when the target is the
// running kernel without an image.
func (r *Resolver) kernelText() (start, end uint64, ok bool) {
	if f := r.im.File; f != nil {
		if s := f.ELF.Section(".text"); s != nil {
			return s.Addr, s.Addr + s.Size, true
		}
		return 0, 0, false
	}
	if r.t != nil {
		if ks := r.t.Kallsyms(); ks != nil {
			return ks.Text()
		}
	}
	return 0, 0, false
}

// symbolAt is the symbol of the image holding addr, for messages.
func (r *Resolver) symbolAt(addr uint64) (symtab.Symbol, bool) {
	if r.im.File == nil {
		return symtab.Symbol{}, false
	}
	m, err := r.im.Symbols()
	if err != nil {
		return symtab.Symbol{}, false
	}
	return m.Find(addr)
}

// firstVar is the first argument that names a variable.
func firstVar(args []spec.Arg) string {
	for _, a := range args {
		if spec.IsCVarname(a.Var) || a.Var == "$params" || a.Var == "$vars" {
			return a.Var
		}
	}
	return ""
}
