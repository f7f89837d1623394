package golang

import (
	"debug/buildinfo"
	"debug/dwarf"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/gprobe/gprobe/disasm"
	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/internal/dwarfexpr"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// Program answers what the resolver asks of a Go program: its functions'
// places (the entry after the stack check), their values at an address
// and at their returns, the running goroutine.
type Program struct {
	f   *dwarfinfo.File
	isa arch.Arch
	// Version is the Go release that built the program ("go1.26.8"), ""
	// when the program does not say.
	Version string
	// stackABI: a release before the register ABI (go1.17 on x86-64,
	// go1.18 on arm64): everything on the stack, g in thread-local storage.
	stackABI bool

	rtOnce sync.Once
	rt     *Runtime
	rtErr  error
}

// NewProgram returns the Program of f, or an error wrapping ErrNotGo.
func NewProgram(f *dwarfinfo.File) (*Program, error) {
	if !IsGo(f) {
		return nil, fmt.Errorf("%s: %w", f.Path, ErrNotGo)
	}
	isa, err := arch.ForMachine(f.Machine)
	if err != nil {
		return nil, err
	}
	p := &Program{f: f, isa: isa}
	if fh, err := os.Open(f.Path); err == nil {
		if bi, err := buildinfo.Read(fh); err == nil {
			p.Version = bi.GoVersion
		}
		fh.Close()
	}
	p.stackABI = !registerABI(p.Version, isa)
	return p, nil
}

// registerABI reports whether Go release version (go1.N...) passes values
// in registers on arch; an unknown version is taken for a recent one.
func registerABI(version string, isa arch.Arch) bool {
	minor := 0
	if rest, ok := strings.CutPrefix(version, "go1."); ok {
		for _, c := range rest {
			if c < '0' || c > '9' {
				break
			}
			minor = minor*10 + int(c-'0')
		}
	}
	switch {
	case minor == 0:
		return true
	case isa == arch.ARM64:
		return minor >= 18
	}
	return minor >= 17
}

// Runtime reads runtime.g's layout once.
func (p *Program) Runtime() (*Runtime, error) {
	p.rtOnce.Do(func() { p.rt, p.rtErr = ReadRuntime(p.f) })
	return p.rt, p.rtErr
}

// Function is one Go function of the program, out of line (a symbol).
type Function struct {
	p     *Program
	CU    *dwarfinfo.CU
	Scope *lines.Scope // the subprogram
	// Symbol is the ELF symbol at Entry ("main.work", "pkg.f.abi0").
	Symbol string
	// Entry is its first instruction; Body the first after its stack
	// check (Entry when it has none): where an entry probe fires once per
	// call, the arguments still in their registers and the stack pointer
	// that of the entry.
	Entry, Body uint64
	Check       *disasm.GoStackCheck // nil without one
	DeclFile    string
	ABI         ABI
	Dict        Dict
	types       *Types
}

// Function returns the Go function whose subprogram is sp in cu, named
// symbol in the symbol table.
func (p *Program) Function(cu *dwarfinfo.CU, sp *lines.Scope, symbol string) (*Function, error) {
	if !IsGoUnit(cu) {
		return nil, fmt.Errorf("%s is not Go code (compile unit %s): %w", sp.Name, cu.Lines.Name, ErrNotGo)
	}
	entry, ok := sp.LowestPC()
	if !ok {
		return nil, fmt.Errorf("%s has no code of its own (inlined everywhere): %w", sp.Name, ErrUnsupported)
	}
	fn := &Function{p: p, CU: cu, Scope: sp, Symbol: symbol, Entry: entry, Body: entry,
		DeclFile: cu.Lines.File(sp.DeclFile), types: NewTypes(cu)}
	fn.ABI = FuncABI(symbol, fn.DeclFile)
	if p.stackABI {
		fn.ABI = ABI0
	}
	fn.Dict = DictOf(sp.Name)
	size := uint64(64)
	if sp.HighPC > entry {
		size = min(size, sp.HighPC-entry)
	}
	if code := p.f.Code(entry, size); code != nil {
		if sc, ok := disasm.FindGoStackCheck(p.isa, code, entry); ok {
			fn.Check = &sc
			fn.Body = entry + uint64(sc.End)
		}
	}
	return fn, nil
}

// KeepsG reports whether the function keeps the running goroutine's g in
// the g register at its entry, body and returns (see KeepsG).
func (fn *Function) KeepsG() bool {
	return KeepsG(fn.CU, fn.DeclFile) && fn.ABI == ABIInternal
}

// errNoG explains why $goid is refused in fn.
func (fn *Function) errNoG() error {
	why := "it is not Go code"
	switch {
	case strings.HasSuffix(fn.DeclFile, ".s"):
		why = "it is assembly (" + fn.DeclFile + ")"
	case fn.p.stackABI:
		why = fn.p.Version + " passes values on the stack and keeps g elsewhere"
	case fn.ABI == ABI0:
		why = "its body is ABI0 code (" + fn.Symbol + ")"
	}
	return fmt.Errorf("%w: $goid reads the running goroutine through %%%s, which %s does not keep: %s; read it in a Go function that calls it",
		ErrUnsupported, fn.p.isa.GoGRegister(), fn.Scope.Name, why)
}

// Goid is $goid in fn, or why not.
func (fn *Function) Goid() (probe.FetchArg, error) {
	if !fn.KeepsG() {
		return probe.FetchArg{}, fn.errNoG()
	}
	rt, err := fn.p.Runtime()
	if err != nil {
		return probe.FetchArg{}, err
	}
	return GoidArg(fn.p.isa, rt), nil
}

// Pairing is PairingArgs for fn's entry (at Body) and return probes, or
// nil when fn does not keep g (its calls then pair by thread).
func (fn *Function) Pairing(have []probe.FetchArg) ([]probe.FetchArg, error) {
	if !fn.KeepsG() {
		return nil, nil
	}
	rt, err := fn.p.Runtime()
	if err != nil {
		return nil, err
	}
	return PairingArgs(fn.p.isa, rt, have), nil
}

// signature reads fn's parameters: the arguments and results with their
// types, in order.
func (fn *Function) signature() (args, results []*dwarf.Entry, sig Signature, err error) {
	kids, err := fn.CU.Children(fn.Scope.Offset)
	if err != nil {
		return nil, nil, sig, err
	}
	sig.ABI, sig.Dict = fn.ABI, fn.Dict
	for _, k := range kids {
		if k.Tag != dwarf.TagFormalParameter {
			continue
		}
		t, err := fn.types.TypeOf(k)
		if err != nil {
			return nil, nil, sig, err
		}
		if isResult(k) {
			results = append(results, k)
			sig.Results = append(sig.Results, t)
		} else {
			args = append(args, k)
			sig.Args = append(sig.Args, t)
		}
	}
	return args, results, sig, nil
}

func isResult(e *dwarf.Entry) bool {
	v, _ := e.Val(dwarf.AttrVarParam).(bool)
	return v
}

// Params names fn's arguments, the receiver first, without its results
// (which perf leaves out of $params too).
func (fn *Function) Params() ([]string, error) {
	args, _, _, err := fn.signature()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range args {
		out = append(out, fn.types.Name(a))
	}
	return out, nil
}

// Results names fn's results ("~r0", "err").
func (fn *Function) Results() ([]string, error) {
	_, res, _, err := fn.signature()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range res {
		out = append(out, fn.types.Name(r))
	}
	return out, nil
}

// ResultName is the fetch argument name of a result: "~r0" becomes "r0".
func ResultName(name string) string { return strings.TrimPrefix(name, "~") }

// Var fetches the variable name (an argument, or a local variable of a
// scope holding addr, the innermost first) at addr, as r asks.
func (fn *Function) Var(name string, addr uint64, r Request) ([]probe.FetchArg, error) {
	e, err := fn.findVar(fn.Scope.Offset, name, addr)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, fmt.Errorf("%w: %s has no variable %s", ErrNoField, fn.Scope.Name, name)
	}
	if isResult(e) {
		return nil, fmt.Errorf("%w: %s is a result of %s: it has a value only at the returns (%s%%return %s)", ErrUnsupported, name, fn.Scope.Name, fn.Scope.Name, name)
	}
	t, err := fn.types.TypeOf(e)
	if err != nil {
		return nil, err
	}
	fld := e.AttrField(dwarf.AttrLocation)
	if fld == nil {
		return nil, fmt.Errorf("%w: %s has no location in %s (optimized out)", ErrUnsupported, name, fn.Scope.Name)
	}
	expr, ok, err := fn.CU.Location(fld, addr)
	if err != nil {
		return nil, err
	}
	if !ok || len(expr) == 0 {
		return nil, fmt.Errorf("%w: %s is not kept anywhere at %#x (optimized out)", ErrUnsupported, name, addr)
	}
	cfa, err := fn.cfa(addr)
	if err != nil {
		return nil, err
	}
	ps, err := dwarfexpr.Pieces(expr, fn.p.isa, cfa, cfa, fn.CU.AddrSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	pl, err := fn.types.PlaceOfPieces(t, ps)
	if err != nil {
		return nil, err
	}
	if r.Label == "" {
		r.Label = name
	}
	return fn.types.Fetch(t, pl, r)
}

// cfa is the canonical frame address at addr (Go's frame base), or
// FrameBaseNone when the CFI has no rule there.
func (fn *Function) cfa(addr uint64) (dwarfexpr.FrameBase, error) {
	if !fn.p.f.HasCFI() {
		return dwarfexpr.FrameBase{}, nil
	}
	reg, off, ok, err := fn.p.f.CFA(addr)
	if err != nil || !ok {
		return dwarfexpr.FrameBase{}, err
	}
	return dwarfexpr.FrameBase{Kind: dwarfexpr.FrameBaseCFA, Reg: int(reg), Offset: off}, nil
}

// findVar finds the variable or parameter name in the scope at off or a
// nested one that holds addr, the innermost first.
func (fn *Function) findVar(off uint64, name string, addr uint64) (*dwarf.Entry, error) {
	kids, err := fn.CU.Children(off)
	if err != nil {
		return nil, err
	}
	var found *dwarf.Entry
	for _, k := range kids {
		switch k.Tag {
		case dwarf.TagFormalParameter, dwarf.TagVariable:
			if fn.types.Name(k) == name {
				found = k
			}
		case dwarf.TagLexDwarfBlock:
			if sc := fn.CU.Scopes[uint64(k.Offset)]; sc != nil && sc.HasPC(addr) {
				inner, err := fn.findVar(uint64(k.Offset), name, addr)
				if err != nil {
					return nil, err
				}
				if inner != nil {
					return inner, nil
				}
			}
		}
	}
	return found, nil
}

// Result fetches the result name ("~r0", "err") at a return instruction
// of fn, where the register ABI says it is (the DWARF gives results no
// location).
func (fn *Function) Result(name string, r Request) ([]probe.FetchArg, error) {
	_, results, sig, err := fn.signature()
	if err != nil {
		return nil, err
	}
	for i, e := range results {
		if fn.types.Name(e) != name {
			continue
		}
		fr, err := Assign(fn.p.isa, fn.types, sig)
		if err != nil {
			return nil, err
		}
		if r.Label == "" {
			r.Label = name
		}
		return fn.types.Fetch(sig.Results[i], PlaceOfParts(fn.p.isa, fr.Results[i]), r)
	}
	return nil, fmt.Errorf("%w: %s has no result %s", ErrNoField, fn.Scope.Name, name)
}

// Retval fetches every result of fn at a return instruction ($retval),
// each named after its result (r0, r1, err), or with r.Name, r.Name alone
// for one result and r.Name_r0, r.Name_err ... for several; r's cast
// applies to each.
func (fn *Function) Retval(r Request) ([]probe.FetchArg, error) {
	names, err := fn.Results()
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: %s returns nothing: $retval has no value", ErrUnsupported, fn.Scope.Name)
	}
	var out []probe.FetchArg
	for _, n := range names {
		rr := r
		switch {
		case r.Name == "":
			rr.Name = ResultName(n)
		case len(names) > 1:
			rr.Name = r.Name + "_" + ResultName(n)
		}
		args, err := fn.Result(n, rr)
		if err != nil {
			return nil, err
		}
		out = append(out, args...)
	}
	return out, nil
}

// IsRefusal reports an error that says why a Go value cannot be fetched
// (as opposed to a damaged program or a failure to read it).
func IsRefusal(err error) bool {
	return errors.Is(err, ErrUnsupported) || errors.Is(err, ErrNoField) || errors.Is(err, ErrNotGo) ||
		errors.Is(err, dwarfexpr.ErrUnsupported) || errors.Is(err, dwarfexpr.ErrOptimizedOut)
}
