// Package exits finds the instructions by which a function leaves
// (gprobe --ret-insn -L) and resolves FUNC%return into plain probes on
// them (--ret-insn).
package exits

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/gprobe/gprobe/disasm"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/internal/symtab"
	"github.com/gprobe/gprobe/resolve/spec"
)

// Return-instruction probes (resolve.Options.ReturnInsn): instead of a return
// probe, whose kretprobe instances can run out (maxactive) and cost memory
// per task, one plain probe on each instruction by which the function
// leaves, found by decoding every instance of it (disasm.Exits).
//
// What cannot be probed exactly is refused, listed, rather than missed: a
// conditional branch out of the function fires its probe whether or not it
// leaves, an indirect jump may be a jump table inside it. Unconditional
// tail calls are probed, as FUNC__tailcall events without $retval (the
// callee's value does not exist yet); the function's own returns are
// FUNC__retinsn events, $retval read from the ABI return register.

// Decoder decodes the functions of one image, reading its static call
// sites once.
type Decoder struct {
	im          *core.Image
	staticCalls map[uint64]bool // a kernel's static call sites, read on first use
}

// New returns a decoder for the image im.
func New(im *core.Image) *Decoder { return &Decoder{im: im} }

// ErrExits: --ret-insn cannot catch every exit of the function exactly
// (the *ExitsError lists them), or cannot decode it.
var ErrExits = fmt.Errorf("function exits cannot all be probed: %w", core.ErrUnsupported)

// FuncExits is one instance of a function (one symbol) and the
// instructions by which it leaves.
type FuncExits struct {
	Symbol string
	// Name is the function's name as the symbol table shows it
	// (demangled), and Overload its name with parameters when a
	// qualified name matched several functions (core.TracePoint.Overload).
	Name, Overload string
	Addr           uint64
	// Decl is the function's declaration "FILE:LINE" when DWARF has it.
	Decl  string
	Exits []Exit
}

// Exit is one way out of a function.
type Exit struct {
	disasm.Exit
	// Symbol and Offset place the instruction as a kernel probe does
	// (the symbol holding it: FUNC.cold for GCC's cold part).
	Symbol string
	Offset uint64
	// TargetName names the target of a direct jump ("account_io",
	// "__x86_return_thunk"), or is "" when it is not a symbol's start.
	TargetName string
	// Line is the source "FILE:LINE" of the instruction, when DWARF has it.
	Line string
	// Refused says why the kernel would not take a probe on a probeable
	// instruction ("" when it would).
	Refused string
}

// Probeable reports whether one probe there catches the exit exactly and
// the kernel takes it.
func (e Exit) Probeable() bool { return e.Kind.Probeable() && e.Refused == "" }

// Place is "SYM+OFF".
func (e Exit) Place() string { return fmt.Sprintf("%s+%d", e.Symbol, e.Offset) }

// Insn is the instruction with a jump's target named: "ret",
// "jmp account_io", "jmp *%rax".
func (e Exit) Insn() string {
	if e.TargetName == "" {
		return e.Text
	}
	// The target is the last operand ("cs jmpq .+0x1d4", "b .-0x18").
	if i := strings.LastIndexByte(e.Text, ' '); i >= 0 {
		return e.Text[:i+1] + e.TargetName
	}
	return e.Text + " " + e.TargetName
}

// String is the listing of the function's exits (gprobe --ret-insn -L):
// a header naming the instance, then one line per exit, its place, kind,
// instruction and source line, marked "!" when --ret-insn cannot probe it.
func (f FuncExits) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<%s@0x%x", f.Symbol, f.Addr)
	if f.Decl != "" {
		fmt.Fprintf(&b, " %s", f.Decl)
	}
	refused := 0
	for _, e := range f.Exits {
		if !e.Probeable() {
			refused++
		}
	}
	if len(f.Exits) == 1 {
		b.WriteString("> 1 exit")
	} else {
		fmt.Fprintf(&b, "> %d exits", len(f.Exits))
	}
	if refused > 0 {
		fmt.Fprintf(&b, ", %d that --ret-insn cannot probe (!)", refused)
	}
	b.WriteString("\n")
	placeW, insnW := 0, 0
	for _, e := range f.Exits {
		placeW, insnW = max(placeW, len(e.Place())), max(insnW, len(e.Insn()))
	}
	for _, e := range f.Exits {
		mark := " "
		if !e.Probeable() {
			mark = "!"
		}
		line := fmt.Sprintf("%s %-*s  %-13s  %-*s  %s", mark, placeW, e.Place(), e.Kind, insnW, e.Insn(), e.Line)
		if e.Refused != "" {
			line += "  (" + e.Refused + ")"
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return b.String()
}

// ExitsError lists the exits --ret-insn refuses to probe. It wraps
// ErrExits.
type ExitsError struct {
	Function string
	Exits    []Exit
}

func (e *ExitsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s leaves by %d exit(s) a probe cannot catch exactly, so return-instruction probes would miss returns:", e.Function, len(e.Exits))
	for _, x := range e.Exits {
		fmt.Fprintf(&b, "\n  %s  %s  %s", x.Place(), x.Kind, x.Insn())
		if x.Refused != "" {
			fmt.Fprintf(&b, " (%s)", x.Refused)
		}
	}
	fmt.Fprintf(&b, "\n Use a return probe (%s%%return without --ret-insn); --ret-insn -L %s lists every exit.", e.Function, e.Function)
	return b.String()
}

func (e *ExitsError) Unwrap() error { return ErrExits }

// returnThunks are the x86 kernel's return thunk: functions built with
// return thunks end with a jump there (the kernel patches it at boot).
var returnThunks = map[string]bool{"__x86_return_thunk": true}

// coldPart matches GCC's name for the cold part of a function: FUNC.cold or
// FUNC.cold.N.
var coldPart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\.cold(\.[0-9]+)?$`) })

// Exits decodes every instance of the function pp names (FUNC, a glob, as
// FUNC%return does: each symbol of that name) and returns the instructions
// by which each leaves. pp must name only a function. A function's parts
// are its symbol and the DWARF ranges of its subprogram, and any FUNC.cold
// symbol it jumps into; jumps to __x86_return_thunk are returns.
func (d *Decoder) Exits(pp *spec.Point) ([]FuncExits, error) {
	if !pp.HasFunction || pp.HasFile || pp.Line != 0 || pp.HasLazy || pp.Offset != 0 || pp.IsAbs {
		return nil, core.Errorf(core.ErrInvalid, "--ret-insn takes a function (FUNC or FUNC%%return), not %s.", pp.String())
	}
	if d.im.File == nil {
		return nil, core.Errorf(core.ErrNeedsDWARF, "--ret-insn decodes %s's code: give the image (-k vmlinux, -x binary); BTF has no code.", pp.Function)
	}
	if d.im.File.IsRelocatable() {
		return nil, core.Errorf(core.ErrUnsupported, "--ret-insn does not read relocatable objects (%s): the targets of their jumps are relocations, so tail calls and return thunks would look like local jumps.", d.im.File.Path)
	}
	m, err := d.im.NameSymbols()
	if err != nil {
		return nil, err
	}
	var out []FuncExits
	for _, s := range m.ByName(symtab.Query{Pattern: pp.Function, Exact: !spec.IsGlob(pp.Function), TextOnly: d.im.Vmlinux()}) {
		if s.Type != elf.STT_FUNC && s.Type != elf.STT_GNU_IFUNC || coldPart().Match(s.Raw) {
			continue
		}
		fe, err := d.funcExits(m, s)
		if err != nil {
			return nil, err
		}
		out = append(out, fe)
	}
	if len(out) == 0 {
		return nil, core.Errorf(core.ErrNotFound, "Failed to find function %s in %s", pp.Function, d.im.TargetName())
	}
	if core.Qualified(pp.Function) && len(out) > 1 {
		for i := range out {
			out[i].Overload = symtab.Naming{Demangle: true, Params: true}.Of([]byte(out[i].Symbol))
		}
	}
	if len(out) > d.im.Opts.MaxProbes {
		return nil, core.Errorf(core.ErrTooManyFunctions, "Too many functions matched in %s", d.im.TargetName())
	}
	return out, nil
}

// funcExits decodes the function at symbol s.
func (d *Decoder) funcExits(m *symtab.Map, s symtab.Symbol) (FuncExits, error) {
	fe := FuncExits{Symbol: s.Name(), Name: m.Name(s), Addr: s.Start}
	var unit *lines.Unit
	ranges := [][2]uint64{{s.Start, s.End}}
	if d.im.File.HasDWARF() {
		if idx, err := d.im.File.UnitCovering(s.Start); err == nil && idx >= 0 {
			if cu, err := d.im.File.Unit(idx); err == nil {
				unit = cu.Lines
				if sp := unit.FindRealFunc(s.Start); sp != nil {
					if len(sp.Ranges) > 0 {
						ranges = entryFirst(sp.Ranges, s.Start)
					}
					if sp.DeclLine != 0 {
						fe.Decl = fmt.Sprintf("%s:%d", unit.File(sp.DeclFile), sp.DeclLine)
					}
				}
			}
		}
	}
	var rows []lines.Row
	if unit != nil {
		rows, _ = unit.AllRows()
	}
	code := func(lo, hi uint64) (disasm.Code, bool) {
		b := d.im.File.Code(lo, hi-lo)
		if hi <= lo || b == nil {
			return disasm.Code{}, false
		}
		var known []int
		if rows != nil {
			known = core.KnownBoundaries(rows, lo, hi-lo)
		}
		return disasm.Code{Addr: lo, Bytes: b, Known: known}, true
	}
	fn := disasm.Function{
		More: func(target uint64) (disasm.Code, bool) {
			t, ok := m.Find(target)
			if !ok || !coldPart().Match(t.Raw) || coldPart().ReplaceAllString(t.Name(), "") != fe.Symbol {
				return disasm.Code{}, false
			}
			return code(t.Start, t.End)
		},
		ReturnThunk: func(target uint64) bool {
			t, ok := m.Find(target)
			return ok && t.Start == target && d.im.Vmlinux() && returnThunks[t.Name()]
		},
	}
	for _, rg := range ranges {
		c, ok := code(rg[0], rg[1])
		if !ok {
			return fe, core.Errorf(ErrExits, "%s: no code at 0x%x-0x%x in %s.", fe.Symbol, rg[0], rg[1], d.im.File.Path)
		}
		fn.Parts = append(fn.Parts, c)
	}
	exits, err := disasm.Exits(d.im.Arch, fn)
	if err != nil {
		return fe, core.Errorf(ErrExits, "%s: %v", fe.Symbol, err)
	}
	for _, x := range exits {
		e := Exit{Exit: x, Symbol: fe.Symbol, Offset: x.Addr - s.Start}
		if in, ok := m.Find(x.Addr); ok {
			e.Symbol, e.Offset = in.Name(), x.Addr-in.Start
		}
		if x.Target != 0 && x.Kind != disasm.IndirectJump {
			if t, ok := m.Find(x.Target); ok {
				e.TargetName = t.Name()
				if t.Start != x.Target {
					e.TargetName += fmt.Sprintf("+%d", x.Target-t.Start)
				}
			}
		}
		if row := rowAt(rows, x.Addr); row != nil {
			e.Line = fmt.Sprintf("%s:%d", unit.File(row.File), row.Line)
		}
		if d.staticCallSites()[x.Addr] {
			e.Refused = "a static call site: the kernel refuses kprobes there"
		}
		fe.Exits = append(fe.Exits, e)
	}
	return fe, nil
}

// rowAt is the line-table row whose code holds addr: the last row at or
// before it, unless that ends a sequence; nil when there is none.
func rowAt(rows []lines.Row, addr uint64) *lines.Row {
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Addr > addr }) - 1
	if i < 0 || rows[i].EndSeq || rows[i].Line == 0 {
		return nil
	}
	return &rows[i]
}

// staticCallSites are the addresses of a kernel's static call sites
// (__start_static_call_sites..__stop_static_call_sites: an s32 offset to
// the call or jump, then one to its key, per site), where register_kprobe
// refuses a probe (static_call_text_reserved); read once, empty for other
// images.
func (d *Decoder) staticCallSites() map[uint64]bool {
	if d.staticCalls != nil {
		return d.staticCalls
	}
	d.staticCalls = map[uint64]bool{}
	if !d.im.Vmlinux() {
		return d.staticCalls
	}
	var start, stop uint64
	_ = d.im.File.Symbols(func(s dwarfinfo.Symbol) {
		switch string(s.RawName) {
		case "__start_static_call_sites":
			start = s.Value
		case "__stop_static_call_sites":
			stop = s.Value
		}
	})
	b := d.im.File.Code(start, stop-start)
	if start == 0 || stop <= start || b == nil {
		return d.staticCalls
	}
	for i := 0; i+8 <= len(b); i += 8 {
		off := int64(int32(binary.LittleEndian.Uint32(b[i:])))
		d.staticCalls[start+uint64(i)+uint64(off)] = true
	}
	return d.staticCalls
}

// entryFirst orders a subprogram's ranges with the one holding entry first.
func entryFirst(ranges [][2]uint64, entry uint64) [][2]uint64 {
	out := make([][2]uint64, 0, len(ranges))
	for _, rg := range ranges {
		if rg[0] <= entry && entry < rg[1] {
			out = append(out, rg)
		}
	}
	for _, rg := range ranges {
		if !(rg[0] <= entry && entry < rg[1]) {
			out = append(out, rg)
		}
	}
	return out
}

// Probes resolves FUNC%return ARGS into plain probes on FUNC's exits
// (resolve.Options.ReturnInsn): FUNC__retinsn on its returns with $retval
// read from the ABI return register, FUNC__tailcall on its tail calls
// without $retval. Any exit that one probe cannot catch exactly is an
// *ExitsError.
func (d *Decoder) Probes(p *spec.Probe) ([]probe.Probe, error) {
	pp := p.Point
	if !pp.Return {
		return nil, core.Errorf(core.ErrInvalid, "--ret-insn probes a function's returns: write FUNC%%return, not %s.", pp.String())
	}
	funcs, err := d.Exits(&pp)
	if err != nil {
		return nil, err
	}
	return d.ProbesFor(p, funcs, Hooks{})
}

// Hooks let a caller give each exit its own arguments and each function
// its event name's base (a Go function: values where the register ABI
// puts them, names by spec.GoEventName). A nil hook keeps Probes' way.
type Hooks struct {
	// Args are the arguments of the probe on exit e of f.
	Args func(f FuncExits, e Exit) ([]probe.FetchArg, error)
	// Base is the event name's base of f's probes, when no EVENT is
	// written.
	Base func(f FuncExits) string
}

// ProbesFor is Probes on the functions Exits found for p, with hooks.
func (d *Decoder) ProbesFor(p *spec.Probe, funcs []FuncExits, h Hooks) ([]probe.Probe, error) {
	pp := p.Point
	var refused []Exit
	for _, f := range funcs {
		for _, e := range f.Exits {
			if !e.Probeable() {
				refused = append(refused, e)
			}
		}
	}
	if len(refused) > 0 {
		return nil, &ExitsError{Function: pp.Function, Exits: refused}
	}
	var retArgs, tailArgs []probe.FetchArg
	retval, reg := (probe.Retval{}).String(), probe.Reg(d.im.Arch.ReturnRegister()).String()
	for _, a := range core.RawArgs(p.Args) {
		if text := a.Expr.String(); strings.Contains(text, retval) {
			a.Expr = probe.ParseFetch(strings.ReplaceAll(text, retval, reg))
			retArgs = append(retArgs, a)
			continue
		}
		retArgs, tailArgs = append(retArgs, a), append(tailArgs, a)
	}
	group := d.im.Group(&pp)
	base := pp.Event
	if base == "" {
		base = pp.Function
		if spec.IsGlob(base) {
			base = ""
		}
	}
	used := map[string]bool{}
	var out []probe.Probe
	for _, f := range funcs {
		fbase := spec.EventName(base, false)
		switch {
		case pp.Event == "" && h.Base != nil:
			fbase = h.Base(f)
		case pp.Event == "" && f.Overload != "":
			fbase = core.SignatureBase(f.Overload)
		case base == "":
			fbase = spec.EventName(f.Name, false)
		}
		// Returns, then tail calls: the lines of one event stay together
		// (gprobe add --from makes one request of consecutive lines).
		exits := slices.Clone(f.Exits)
		slices.SortStableFunc(exits, func(a, b Exit) int { return cmp.Compare(a.Kind, b.Kind) })
		for _, e := range exits {
			kind, args := probe.ExitInsn, retArgs
			if e.Kind == disasm.TailCall {
				kind, args = probe.ExitTailCall, tailArgs
			}
			if h.Args != nil {
				var err error
				if args, err = h.Args(f, e); err != nil {
					return nil, err
				}
			}
			ev, err := exitEventName(fbase, kind, used)
			if err != nil {
				return nil, err
			}
			if !d.im.Opts.Features.MultiProbe {
				used[ev] = true
			}
			out = append(out, d.im.At(probe.Probe{Group: group, Event: ev, Args: args}, e.Addr, e.Symbol, e.Offset))
		}
	}
	if len(out) == 0 {
		return nil, core.Errorf(core.ErrNotFound, "%s has no exit to probe (it never returns).", pp.Function)
	}
	if err := core.CheckLimits(out); err != nil {
		return nil, err
	}
	return out, nil
}

// exitEventName names the probes on one kind of exit, with the first free
// _N suffix when the name is used.
func exitEventName(base string, kind probe.Exit, used map[string]bool) (string, error) {
	name := probe.ExitEvent(base, kind)
	return core.FreeEventName(name, name, used)
}
