package resolver

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/disasm"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/internal/exits"
	"github.com/gprobe/gprobe/resolve/internal/golang"
	"github.com/gprobe/gprobe/resolve/spec"
)

// Go programs (package golang). Where perf probes a Go function as C, at
// its first instruction with C's idea of its values, and puts a uretprobe
// on its returns (which kills the program when a goroutine's stack moves),
// gprobe:
//   - probes a function's entry after its stack-growth check (once per
//     call, the arguments still in their registers);
//   - probes FUNC%return on the function's return instructions, unless
//     Options.Uretprobe asks for perf's uretprobe;
//   - reads Go values (strings, slices, interfaces, fields through
//     pointers, results by the register ABI, $goid);
//   - adds the goroutine, the stack pointer and the stack's top to the
//     probes of a function's entry and returns, for readers to pair a
//     call's entry with its return (probe.GoroutineField);
//   - reads main.work:3 and -L main.work as a function, and names events
//     after the whole function (spec.GoEventName).
// C code linked into a Go program (cgo) is resolved as C.

// goState is what a resolver of a Go program keeps.
type goState struct {
	prog  *golang.Program
	units map[int]*dwarfinfo.CU
	funcs map[uint64]*golang.Function // by subprogram offset
	noted bool                        // the note about Go returns was given
}

// goProgram is the Go program the resolver's image is, or nil.
func (r *Resolver) goProgram() *goState {
	if r.gostate != nil || r.im.File == nil || r.debug == nil || !r.im.User {
		return r.gostate
	}
	prog, err := golang.NewProgram(r.im.File)
	if err != nil {
		return nil
	}
	r.gostate = &goState{prog: prog, units: map[int]*dwarfinfo.CU{}, funcs: map[uint64]*golang.Function{}}
	return r.gostate
}

// goFunctionAt is the Go function whose code holds addr, out of line;
// an error wrapping golang.ErrNotGo when the code there is not Go.
func (r *Resolver) goFunctionAt(g *goState, addr uint64) (*golang.Function, error) {
	f := r.im.File
	idx, err := f.UnitCovering(addr)
	if err != nil {
		return nil, err
	}
	if idx < 0 {
		return nil, fmt.Errorf("no debug information covers %#x: %w", addr, golang.ErrNotGo)
	}
	cu := g.units[idx]
	if cu == nil {
		if cu, err = f.Unit(idx); err != nil {
			return nil, err
		}
		g.units[idx] = cu
	}
	sp := cu.Lines.FindRealFunc(addr)
	if sp == nil {
		return nil, fmt.Errorf("no function at %#x: %w", addr, golang.ErrNotGo)
	}
	if fn := g.funcs[sp.Offset]; fn != nil {
		return fn, nil
	}
	entry, _ := sp.LowestPC()
	symbol := sp.Name
	if m, err := r.im.Symbols(); err == nil {
		if s, ok := m.Find(entry); ok && s.Start == entry {
			symbol = s.Name()
		}
	}
	fn, err := g.prog.Function(cu, sp, symbol)
	if err != nil {
		return nil, err
	}
	g.funcs[sp.Offset] = fn
	return fn, nil
}

// goPoint gives the Go reading of a point perf's grammar read as a file
// (main.work:3), when the program has no source file of that name.
func (r *Resolver) goPoint(pp spec.Point) spec.Point {
	g, ok := spec.GoFunctionPoint(pp)
	if !ok {
		return pp
	}
	if units, err := r.im.File.UnitsWithFile(pp.File); err == nil && len(units) > 0 {
		return pp
	}
	return g
}

// goEventBase is the base of the event names of p in Go code when no
// EVENT is written: the function's Go name, with perf's _L suffix for a
// line; "" for a glob (each place is then named after its function).
func goEventBase(p *spec.Probe, pp spec.Point) string {
	switch {
	case p.UserEvent:
		return pp.Event
	case !pp.HasFunction || spec.IsGlob(pp.Function):
		return ""
	case pp.Line != 0 && !pp.HasLazy && pp.Offset == 0:
		return spec.GoEventName(pp.Function) + "_L" + strconv.Itoa(pp.Line)
	}
	return spec.GoEventName(pp.Function)
}

// isFuncEntry says whether pp is a function's entry (FUNC, no line,
// offset or pattern).
func isFuncEntry(pp spec.Point) bool {
	return pp.HasFunction && !pp.HasFile && pp.Line == 0 && pp.Offset == 0 && !pp.HasLazy && !pp.Return
}

// goProbes resolves p in a Go program. handled is false when p is not
// about Go code (a cgo C function, an absolute address): perf's way
// resolves it then.
func (r *Resolver) goProbes(g *goState, p *spec.Probe) (ps []probe.Probe, handled bool, err error) {
	pp := p.Point
	if pp.IsAbs {
		return nil, false, nil
	}
	pp = r.goPoint(pp)
	if pp.Return {
		if r.uretprobe {
			return r.goUretprobes(p, pp)
		}
		return r.goReturns(g, p, pp)
	}
	q := *p
	q.Point, q.Args = pp, nil
	tps, err := r.debug.Places(&q)
	if err != nil || len(tps) == 0 {
		// Not found (or not Go) as a Go function: perf's way says why.
		return nil, false, nil
	}
	entry := isFuncEntry(pp)
	argsOf := make([][]probe.FetchArg, len(tps))
	for i := range tps {
		tp := &tps[i]
		fn, err := r.goFunctionAt(g, tp.Addr)
		if errors.Is(err, golang.ErrNotGo) {
			return nil, false, nil
		}
		if err != nil {
			return nil, true, err
		}
		// The out-of-line function itself (not an inlined copy): its
		// entry after the stack check, with the pairing fields.
		atEntry := entry && tp.Realname == fn.Scope.Name && tp.Addr == fn.Entry
		if atEntry {
			tp.Offset += fn.Body - fn.Entry
			tp.Addr = fn.Body
		}
		args, err := fn.Args(tp.Addr, p.Args, golang.ArgsOptions{Hex: r.im.Opts.Features.HexTypes})
		if err != nil {
			return nil, true, goError(err)
		}
		if atEntry {
			pair, err := fn.Pairing(args)
			if err != nil {
				return nil, true, err
			}
			args = append(args, pair...)
		}
		tp.Args = nil
		tp.Realname = spec.GoEventName(tp.Realname)
		argsOf[i] = args
	}
	if err := r.im.CheckBoundaries(tps); err != nil {
		return nil, true, err
	}
	q.Point.Event = goEventBase(p, pp)
	out, err := r.im.Name(&q, tps)
	if err != nil {
		return nil, true, err
	}
	for i := range out {
		out[i].Args = argsOf[i]
	}
	if err := core.CheckLimits(out); err != nil {
		return nil, true, err
	}
	return out, true, nil
}

// goReturns resolves FUNC%return in Go code into plain probes on the
// function's return instructions (exits), its values read where the
// register ABI leaves them, with the pairing fields; the first time, a
// note says why it is not a uretprobe.
func (r *Resolver) goReturns(g *goState, p *spec.Probe, pp spec.Point) ([]probe.Probe, bool, error) {
	funcs, err := r.exits.Exits(&pp)
	if err != nil {
		if errors.Is(err, core.ErrNotFound) {
			return nil, false, nil // perf's way says it
		}
		return nil, true, err
	}
	fns := map[string]*golang.Function{}
	for _, fe := range funcs {
		fn, err := r.goFunctionAt(g, fe.Addr)
		if errors.Is(err, golang.ErrNotGo) {
			return nil, false, nil
		}
		if err != nil {
			return nil, true, err
		}
		fns[fe.Symbol] = fn
	}
	if !g.noted && !r.returnInsn {
		g.noted = true
		r.im.Warnf("%s is Go code: its returns are probed on its return instructions, since a uretprobe kills a Go program when a goroutine's stack moves (--uretprobe puts one anyway).", pp.Function)
	}
	hex := r.im.Opts.Features.HexTypes
	q := *p
	q.Point = pp
	ps, err := r.exits.ProbesFor(&q, funcs, exits.Hooks{
		Base: func(fe exits.FuncExits) string {
			if !spec.IsGlob(pp.Function) {
				return spec.GoEventName(pp.Function)
			}
			return spec.GoEventName(fe.Symbol)
		},
		Args: func(fe exits.FuncExits, e exits.Exit) ([]probe.FetchArg, error) {
			fn := fns[fe.Symbol]
			args := p.Args
			ret := e.Kind == disasm.Return
			if !ret {
				// at a tail call the results do not exist yet
				args = withoutResults(args)
			}
			out, err := fn.Args(e.Addr, args, golang.ArgsOptions{Return: ret, Hex: hex})
			if err != nil {
				return nil, goError(err)
			}
			pair, err := fn.Pairing(out)
			if err != nil {
				return nil, err
			}
			return append(out, pair...), nil
		},
	})
	return ps, true, err
}

// withoutResults drops $retval and results (~r0) from args.
func withoutResults(args []spec.Arg) []spec.Arg {
	var out []spec.Arg
	for _, a := range args {
		if a.Var == "$retval" || len(a.Var) > 0 && a.Var[0] == '~' {
			continue
		}
		out = append(out, a)
	}
	return out
}

// goError gives a refusal about a Go value perf's shape: the message,
// with the sentinel the CLI maps to perf's exit status.
func goError(err error) error {
	var ce *core.Error
	if errors.As(err, &ce) {
		return err
	}
	sentinel := core.ErrInvalid
	switch {
	case errors.Is(err, golang.ErrUnsupported), errors.Is(err, golang.ErrNotGo):
		sentinel = core.ErrUnsupported
	case errors.Is(err, golang.ErrNoField):
		sentinel = core.ErrNotFound
	}
	return core.Errorf(sentinel, "%s", trimSentinel(err))
}

// trimSentinel is err's message without the sentinel golang wraps it in
// ("not supported: ").
func trimSentinel(err error) string {
	msg := err.Error()
	for _, s := range []error{golang.ErrUnsupported, golang.ErrNoField, golang.ErrNotGo} {
		msg = strings.TrimPrefix(msg, s.Error()+": ")
	}
	return msg
}

// checkGoid refuses $goid outside Go programs.
func (r *Resolver) checkGoid(p *spec.Probe) error {
	for _, a := range p.Args {
		if a.Var == golang.Goid {
			path := "the kernel"
			if r.im.File != nil {
				path = r.im.File.Path
			}
			return core.Errorf(core.ErrUnsupported, "$goid is a Go program's goroutine id, and %s is not a Go program.", path)
		}
	}
	return nil
}

// goLineRange gives the Go reading of a -L range that names a function
// perf's grammar took for a file (-L main.work), when the program has no
// source file of that name.
func (r *Resolver) goLineRange(lr *spec.LineRange) *spec.LineRange {
	if r.goProgram() == nil {
		return lr
	}
	g, ok := spec.GoFunctionRange(*lr)
	if !ok {
		return lr
	}
	if units, err := r.im.File.UnitsWithFile(lr.File); err == nil && len(units) > 0 {
		return lr
	}
	return &g
}

// goUretprobes is FUNC%return with Options.Uretprobe: uretprobes as perf
// writes them (its arguments as written), named as gprobe names Go events.
func (r *Resolver) goUretprobes(p *spec.Probe, pp spec.Point) ([]probe.Probe, bool, error) {
	tps, err := r.im.SymbolPlaces(&pp)
	if err != nil {
		return nil, false, nil // perf's way says why
	}
	q := *p
	q.Point = pp
	q.Point.Event = goEventBase(p, pp)
	for i := range tps {
		tps[i].Realname = spec.GoEventName(tps[i].Realname)
	}
	out, err := r.im.Name(&q, tps)
	if err != nil {
		return nil, true, err
	}
	for i := range out {
		out[i].Args = core.RawArgs(p.Args)
	}
	return out, true, core.CheckLimits(out)
}
