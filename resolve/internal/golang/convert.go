package golang

import (
	"debug/dwarf"
	"fmt"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/resolve/spec"
)

// ArgsOptions tune Args.
type ArgsOptions struct {
	// Return: the probe is on a return instruction of the function:
	// $retval and the results (~r0, err) have their values, read where the
	// register ABI puts them.
	Return bool
	// Hex: the kernel has hex types (perf's typing, see Request.Hex).
	Hex bool
}

// Goid is the special argument that reads the running goroutine's id.
const Goid = "$goid"

// Args converts a probe's arguments at addr in fn, with Go's values and
// names: a variable (an argument, or a local of a scope holding addr)
// through its fields (Fetch), $params (the arguments, not the results,
// as perf leaves them out), $vars (the arguments and the locals that have
// a location at addr), $goid, and on a return instruction $retval and the
// results by name. Anything else a probe can fetch as written (%ax,
// +8(%sp), $comm) is kept as written. Arguments are named as perf names
// them (NAME=, the last field, or the text with its ':' as '_'), a value
// of several words with a suffix per word.
func (fn *Function) Args(addr uint64, args []spec.Arg, o ArgsOptions) ([]probe.FetchArg, error) {
	var out []probe.FetchArg
	add := func(fa []probe.FetchArg, err error) error {
		out = append(out, fa...)
		return err
	}
	for _, a := range args {
		var err error
		switch v := a.Var; {
		case v == "$params" || v == "$vars":
			err = add(fn.expand(addr, v == "$vars", o))
		case v == Goid:
			var g probe.FetchArg
			if g, err = fn.Goid(); err == nil {
				if a.HasName {
					g.Name = a.Name
				}
				if a.HasType {
					g.Type = a.Type
				}
				out = append(out, g)
			}
		case v == "$retval" || strings.HasPrefix(v, "$retval:"):
			if !o.Return {
				return nil, fmt.Errorf("%w: $retval is only available at a return (%s%%return)", ErrUnsupported, fn.Scope.Name)
			}
			r := Request{Type: a.Type, HasType: a.HasType, Hex: o.Hex, Label: "$retval"}
			if a.HasName {
				r.Name = a.Name
			}
			err = add(fn.Retval(r))
		case strings.HasPrefix(v, "~"):
			// A result's compiler-given name (~r0): perf's grammar keeps it
			// whole, fields and all; read it as a Go name.
			ra, perr := spec.ParseArg(strings.Replace(a.Raw, "~", "_", 1))
			if perr != nil || !o.Return {
				return nil, fmt.Errorf("%w: %s is a result of %s: it has a value only at the returns (%s%%return %s)", ErrUnsupported, v, fn.Scope.Name, fn.Scope.Name, v)
			}
			ra.Var = "~" + ra.Var[1:]
			if !a.HasName && len(ra.Fields) == 0 {
				ra.Name, ra.HasName = ResultName(ra.Var), true
			}
			err = add(fn.value(addr, *ra, o))
		case spec.IsCVarname(v):
			err = add(fn.value(addr, a, o))
		default:
			fa := probe.FetchArg{Expr: probe.Raw(v)}
			if a.HasName {
				fa.Name = a.Name
			}
			if a.HasType {
				fa.Type = a.Type
			}
			out = append(out, fa)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// argName is perf's name for an argument: NAME=, or perf's from the
// fields, or the text with its first ':' as '_'.
func argName(a spec.Arg) string {
	if a.HasName {
		return a.Name
	}
	return strings.Replace(a.String(), ":", "_", 1)
}

// value converts one variable: a result on a return, else a variable at
// addr.
func (fn *Function) value(addr uint64, a spec.Arg, o ArgsOptions) ([]probe.FetchArg, error) {
	r := Request{Name: argName(a), Label: a.Var, Fields: a.Fields, Type: a.Type, HasType: a.HasType, Hex: o.Hex}
	if o.Return {
		if names, err := fn.Results(); err == nil {
			for _, n := range names {
				if n == a.Var {
					return fn.Result(n, r)
				}
			}
		}
	}
	return fn.Var(a.Var, addr, r)
}

// expand is $params (the arguments) or $vars (and the locals), each that
// has a location at addr, as perf leaves the others out.
func (fn *Function) expand(addr uint64, locals bool, o ArgsOptions) ([]probe.FetchArg, error) {
	names, err := fn.Params()
	if err != nil {
		return nil, err
	}
	if locals {
		more, err := fn.locals(addr)
		if err != nil {
			return nil, err
		}
		names = append(names, more...)
	}
	var out []probe.FetchArg
	for _, n := range names {
		args, err := fn.Var(n, addr, Request{Name: n, Label: n, Hex: o.Hex})
		switch {
		case err == nil:
			out = append(out, args...)
		case IsRefusal(err):
			// not at this address, or not a value a probe can fetch as a whole
		default:
			return nil, err
		}
	}
	return out, nil
}

// locals names the local variables of the scopes of fn holding addr.
func (fn *Function) locals(addr uint64) ([]string, error) {
	var out []string
	var walk func(off uint64) error
	walk = func(off uint64) error {
		kids, err := fn.CU.Children(off)
		if err != nil {
			return err
		}
		for _, k := range kids {
			switch {
			case k.Tag == dwarf.TagVariable:
				out = append(out, fn.types.Name(k))
			case k.Children:
				if sc := fn.CU.Scopes[uint64(k.Offset)]; sc != nil && sc.HasPC(addr) {
					if err := walk(uint64(k.Offset)); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return out, walk(fn.Scope.Offset)
}
