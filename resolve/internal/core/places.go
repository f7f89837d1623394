package core

import (
	"debug/elf"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gprobe/gprobe/disasm"
	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/internal/symtab"
	"github.com/gprobe/gprobe/resolve/spec"
)

// Qualified reports a C++ or Rust name qualified with '::', which no DWARF
// function has as its name: perf finds it in the symbol table only.
func Qualified(fn string) bool { return strings.Contains(fn, "::") }

// SymbolPlaces is perf's find_probe_trace_events_from_map: FUNC[+OFF] and
// FUNC%return from the symbol table.
func (im *Image) SymbolPlaces(pp *spec.Point) ([]TracePoint, error) {
	m, err := im.NameSymbols()
	if err != nil {
		return nil, err
	}
	// The kernel's symbol map holds only text; a user binary's holds data
	// objects too (perf then skips them as non-functions).
	q := symtab.Query{Pattern: pp.Function, TextOnly: im.Vmlinux()}
	matched := m.ByName(q)
	if im.User && !Qualified(pp.Function) {
		// perf's map of a user DSO holds the PLT entries it synthesizes
		// (a C++ or Rust qualified name, which perf refuses as an event
		// name, is matched against the functions only).
		if plt := q.Select(im.Naming(), symtab.PLTSymbols(im.File)); len(plt) > 0 {
			matched = append(matched, plt...)
			sort.SliceStable(matched, func(i, j int) bool { return matched[i].Start < matched[j].Start })
		}
	}
	target := im.TargetName()
	if len(matched) == 0 {
		return nil, Errorf(ErrNotFound, "Failed to find symbol %s in %s", pp.Function, target)
	}
	if len(matched) > im.Opts.MaxProbes {
		return nil, Errorf(ErrTooManyFunctions, "Too many functions matched in %s", target)
	}
	// perf rebases kernel symbol-table probes on the relocation symbol
	// (_text) unless they are return probes on a kernel whose README does
	// not offer "place (kretprobe)" offsets.
	var reloc *symtab.Symbol
	if im.Vmlinux() && (!pp.Return || im.Opts.Features.KretprobeOffset) {
		reloc = im.RelocSymbol()
	}
	// perf's kprobe_warn_out_range: kernel probes must lie strictly after
	// the start of the kernel text map and not beyond its end.
	var textLo, textHi uint64
	if t := im.File.ELF.Section(".text"); t != nil && im.Vmlinux() {
		textLo, textHi = t.Addr, t.Addr+t.Size
	}
	// Beyond perf, the functions a qualified name matches are told apart
	// by their parameters (TracePoint.Overload).
	overloads := false
	if Qualified(pp.Function) {
		var first uint64
		for _, s := range matched {
			if s.Type == elf.STT_FUNC {
				if first == 0 {
					first = s.Start
				}
				overloads = overloads || s.Start != first
			}
		}
	}
	var tps []TracePoint
	seen := map[uint64]bool{}
	for _, s := range matched {
		if s.Type != elf.STT_FUNC || seen[s.Start] {
			continue
		}
		seen[s.Start] = true
		name := m.Name(s)
		if pp.Offset > s.End-s.Start {
			return nil, Errorf(ErrNotFound, "Offset %d is bigger than the size of %s", pp.Offset, name)
		}
		if textHi != 0 && (s.Start+pp.Offset <= textLo || textHi < s.Start+pp.Offset) {
			im.Opts.Warn(fmt.Sprintf("%s is out of .text, skip it.", name))
			continue
		}
		if im.Vmlinux() && im.Blacklisted(s.Start+pp.Offset, s.Name()) {
			im.Opts.Warn(fmt.Sprintf("%s is blacklisted function, skip it.", name))
			continue
		}
		tp := TracePoint{Addr: s.Start + pp.Offset, Symbol: name, Offset: pp.Offset,
			Realname: name, Return: pp.Return}
		if overloads {
			tp.Overload = symtab.Naming{Demangle: true, Params: true}.Of(s.Raw)
		}
		if reloc != nil {
			tp.Symbol, tp.Offset = reloc.Name(), tp.Addr-reloc.Start
		}
		tps = append(tps, tp)
	}
	if len(tps) == 0 {
		// perf fails silently when every match was skipped or none was a
		// function symbol.
		return nil, Errorf(ErrNotFound, "")
	}
	return tps, nil
}

// SkipBlacklisted leaves out the kernel trace points the kprobe blacklist
// covers, with perf's warning for each (post_process_kernel_probe_trace_events).
func (im *Image) SkipBlacklisted(tps []TracePoint) []TracePoint {
	if !im.Vmlinux() {
		return tps
	}
	out := tps[:0:0]
	for _, tp := range tps {
		if im.Blacklisted(tp.Addr, tp.Symbol) {
			name := tp.Realname
			if name == "" {
				name = tp.Symbol
			}
			im.Opts.Warn(fmt.Sprintf("%s is blacklisted function, skip it.", name))
			continue
		}
		out = append(out, tp)
	}
	return out
}

// PostProcess renames DWARF function names to the ELF symbols that hold the
// addresses (perf's post_process_probe_trace_point): .isra/.constprop
// clones, inline instances inside other functions.
func (im *Image) PostProcess(tps []TracePoint) error {
	m, err := im.PostProcessSymbols()
	if err != nil {
		return err
	}
	for i := range tps {
		sym, ok := m.Find(tps[i].Addr)
		if !ok {
			if im.User {
				return Errorf(ErrNotFound, "Failed to find symbol at 0x%x", tps[i].Addr)
			}
			if im.Module != nil {
				return ErrNoModuleSymbol
			}
			continue
		}
		if name := sym.Name(); name != tps[i].Symbol {
			if tps[i].Realname == "" {
				tps[i].Realname = tps[i].Symbol
			}
			tps[i].Symbol = name
		}
		tps[i].Offset = tps[i].Addr - sym.Start
	}
	return nil
}

// FunctionAddr is the address of the one function symbol named fn; a name
// shared by several functions (static functions of different files) is
// refused, since an fprobe would attach to all of them.
func (im *Image) FunctionAddr(fn string) (uint64, error) {
	m, err := im.Symbols()
	if err != nil {
		return 0, err
	}
	var addrs []uint64
	for _, s := range m.ByName(symtab.Query{Pattern: fn, Exact: true, KeepVersion: true, TextOnly: true}) {
		if s.Type == elf.STT_FUNC && !slices.Contains(addrs, s.Start) {
			addrs = append(addrs, s.Start)
		}
	}
	switch len(addrs) {
	case 0:
		return 0, Errorf(ErrNotFound, "Failed to find symbol %s in kernel (an inlined function, or a compiler-made clone such as %s.isra.0, has no symbol of that name).", fn, fn)
	case 1:
		return addrs[0], nil
	}
	return 0, Errorf(ErrInvalid, "%d functions are named %s; a probe by that name would attach to all of them, whose arguments differ. Use a kprobe on one address.", len(addrs), fn)
}

// CheckBoundaries refuses an address inside an instruction, which the
// kernel would reject with EILSEQ (perf emits it anyway), unless
// NoBoundaryCheck.
func (im *Image) CheckBoundaries(tps []TracePoint) error {
	if im.NoBoundaryCheck {
		return nil
	}
	for _, tp := range tps {
		if err := im.checkBoundary(tp); err != nil {
			return err
		}
	}
	return nil
}

func (im *Image) checkBoundary(tp TracePoint) error {
	start, size, ok := im.functionBounds(tp.Addr)
	if !ok || tp.Addr == start {
		// Not in a known function: nothing to check against; at its
		// start: an instruction starts there (no need to decode it).
		return nil
	}
	code := im.File.Code(start, size)
	if code == nil {
		return nil
	}
	m, err := disasm.Boundaries(im.Arch, code, nil)
	if err == nil && len(m.Undecodable()) > 0 && tp.Unit != nil {
		// Resynchronise at the line table's instruction starts.
		if rows, rerr := tp.Unit.AllRows(); rerr == nil {
			m, err = disasm.Boundaries(im.Arch, code, KnownBoundaries(rows, start, size))
		}
	}
	if err != nil {
		return fmt.Errorf("decode %s+%d: %w", tp.Symbol, tp.Offset, err)
	}
	off := int(tp.Addr - start)
	if err := m.Check(off); err != nil {
		if errors.Is(err, disasm.ErrNotBoundary) {
			is, n, text, _ := m.Insn(off)
			sym, _ := im.syms.Find(start)
			// The kernel decodes a kprobe's function and refuses a place
			// inside an instruction; a uprobe's offset it takes, and the
			// breakpoint it writes there changes that instruction.
			outcome := "the kernel would reject it with EILSEQ"
			if im.User {
				outcome = "a uprobe there would never fire, and would change that instruction (the program would compute wrong values) while it is enabled"
			}
			return Errorf(ErrNotBoundary, "%s+%d is not an instruction boundary: it is inside the %d-byte instruction at %s+%d (%s); %s.",
				tp.Symbol, tp.Offset, n, sym.Name(), is, text, outcome)
		}
		return fmt.Errorf("%s+%d: %w", tp.Symbol, tp.Offset, err)
	}
	return nil
}

// functionBounds finds the sized function symbol containing addr.
func (im *Image) functionBounds(addr uint64) (uint64, uint64, bool) {
	m, err := im.Symbols()
	if err != nil {
		return 0, 0, false
	}
	s, ok := m.Find(addr)
	if !ok || s.End <= s.Start || (s.Type != elf.STT_FUNC && s.Type != elf.STT_GNU_IFUNC) {
		return 0, 0, false
	}
	return s.Start, s.End - s.Start, true
}

// KnownBoundaries lists offsets in [start, start+size) that the line table
// says begin an instruction, to resynchronise decoding.
func KnownBoundaries(rows []lines.Row, start, size uint64) []int {
	known := []int{0}
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Addr >= start })
	for ; i < len(rows) && rows[i].Addr < start+size; i++ {
		if !rows[i].EndSeq {
			known = append(known, int(rows[i].Addr-start))
		}
	}
	return known
}
