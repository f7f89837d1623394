package vars

import (
	"debug/dwarf"
	"errors"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfexpr"
	"github.com/gprobe/gprobe/resolve/spec"
)

// expandArgs is perf's expand_probe_args: $vars and $params become the
// variables (and parameters) that have a location at the address, each
// with its DIE (nil for an argument written out).
func (c *Scope) expandArgs(args []spec.Arg) ([]spec.Arg, []*dwarf.Entry, error) {
	var out []spec.Arg
	var dies []*dwarf.Entry
	for _, a := range args {
		if a.Var != "$vars" && a.Var != "$params" {
			out, dies = append(out, a), append(dies, nil)
			continue
		}
		vars := a.Var == "$vars"
		_, err := c.findChild(c.Sc.Offset, func(e *dwarf.Entry) (findResult, error) {
			if (e.Tag == dwarf.TagFormalParameter || (e.Tag == dwarf.TagVariable && vars)) && !goResult(c.CU, e) {
				err := c.varLocation(e, nil)
				var re *core.Error
				switch {
				case err == nil:
					out, dies = append(out, spec.Arg{Var: c.name(e), Raw: a.Var}), append(dies, e)
				case errors.As(err, &re):
					// A computed value perf would read as memory: left out.
					c.Im.Warnf("%s is left out of %s: it is computed at this address.", c.name(e), a.Var)
				case !errors.Is(err, errNoLocation) && !errors.Is(err, dwarfexpr.ErrUnsupported):
					return cbEnd, err
				}
			}
			if c.haspc(e, c.Addr) {
				return cbContinue, nil
			}
			return cbSibling, nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	if len(out) > probedef.MaxTraceArgs {
		return nil, nil, core.Errorf(core.ErrInvalid, "Too many arguments: %d (the kernel accepts at most %d).", len(out), probedef.MaxTraceArgs)
	}
	return out, dies, nil
}

// expanded reports an argument that came from $vars or $params.
func expanded(a *spec.Arg) bool { return a.Raw == "$vars" || a.Raw == "$params" }

// typeLabel is the -V type name of vr's type, for messages.
func (c *Scope) typeLabel(vr *dwarf.Entry) string {
	if s, ok, _ := c.typeName(vr); ok {
		return s
	}
	return "(unknown_type)"
}

// findVariable is perf's find_variable + convert_variable for one arg. die,
// when not nil, is the variable $vars or $params named: perf looks the
// name up again and so reads the first variable of that name, which for
// a variable shadowing another (a block's n hiding the parameter n, the
// parameters of nested inline instances) is the wrong one.
func (c *Scope) findVariable(a *spec.Arg, die *dwarf.Entry, skipEmpty bool) (*core.TraceArg, error) {
	t := &core.TraceArg{}
	if !spec.IsCVarname(a.Var) {
		t.Value, t.Found = a.Var, true
		if a.HasName {
			t.Name = a.Name
		}
		if a.HasType {
			t.Type = a.Type
		}
		return t, nil
	}
	if a.HasName {
		t.Name = a.Name
	} else {
		t.Name = strings.Replace(a.String(), ":", "_", 1)
	}
	vr, err := die, error(nil)
	if vr == nil {
		vr, err = c.findVariableAt(c.Sc.Offset, a.Var, c.Addr)
	}
	if err != nil {
		return nil, err
	}
	if vr != nil && c.EntryOnly && isLocal(vr) {
		return nil, errLocalAtEntry(a.Var, c.Func.Name)
	}
	if vr == nil {
		if vr, err = c.findVariableAt(c.CU.Lines.Offset, a.Var, 0); err != nil {
			return nil, err
		}
	}
	if vr == nil {
		if skipEmpty {
			return t, nil
		}
		c.Im.Warnf("Failed to find '%s' in this function.", a.Var)
		return nil, core.Errorf(core.ErrNotFound, "")
	}
	err = c.varLocation(vr, t)
	var computed error
	if errors.Is(err, errComputed) {
		computed, err = err, nil
	}
	switch {
	case errors.Is(err, errNoLocation) && skipEmpty:
		t.Value, t.Refs = "", nil
		return t, nil
	case errors.Is(err, errNoLocation):
		return nil, core.Errorf(core.ErrNotFound, "%s", dwarfexpr.NotFoundMessage(a.Var))
	case errors.As(err, new(*core.Error)):
		return nil, err
	case errors.Is(err, dwarfexpr.ErrUnsupported):
		return nil, core.Errorf(core.ErrUnsupported, "Sorry, we don't support this variable location yet.")
	case err != nil:
		return nil, err
	}
	if len(a.Fields) > 0 {
		if vr, err = c.fields(vr, a.Var, a.Fields, t, a.User); err != nil {
			return nil, err
		}
	}
	if err := c.convertType(vr, t, a); err != nil {
		return nil, err
	}
	if computed != nil {
		return nil, computed
	}
	t.Found = true
	return t, nil
}

// TraceArgs converts the probe's arguments at one address.
func (c *Scope) TraceArgs(args []spec.Arg, skipEmpty bool) ([]*core.TraceArg, error) {
	expanded, dies, err := c.expandArgs(args)
	if err != nil {
		return nil, err
	}
	out := make([]*core.TraceArg, 0, len(expanded))
	for i := range expanded {
		t, err := c.findVariable(&expanded[i], dies[i], skipEmpty)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	c.distinctNames(expanded, out)
	return out, nil
}

// distinctNames renames an argument that $vars or $params named after an
// argument before it: two variables of one name, the parameters of two
// nested inline instances (perf writes both, which the kernel refuses:
// "This argument name is already used"). The later one becomes NAME_1
// (NAME_2, ...), with a warning.
func (c *Scope) distinctNames(args []spec.Arg, out []*core.TraceArg) {
	used := map[string]bool{}
	for _, t := range out {
		used[t.Name] = true
	}
	seen := map[string]bool{}
	for i, t := range out {
		if t.Name != "" && seen[t.Name] && expanded(&args[i]) {
			name := t.Name
			for n := 1; used[name]; n++ {
				name = t.Name + "_" + strconv.Itoa(n)
			}
			c.Im.Warnf("%s at %s+0x%x: two variables are named %s; the second is written %s (the kernel refuses an argument name twice).",
				args[i].Raw, c.Func.Name, c.Addr-c.funcEntry(), t.Name, name)
			t.Name, used[name] = name, true
		}
		seen[t.Name] = true
	}
}

// funcEntry is the entry address of the real function holding the scope.
func (c *Scope) funcEntry() uint64 {
	if c.Func != nil {
		if a, ok := c.Func.LowestPC(); ok {
			return a
		}
	}
	return c.Addr
}

// FillEmpty is perf's fill_empty_trace_arg: an argument found at some
// addresses but not others gets the magic immediate where it is missing.
func FillEmpty(args []spec.Arg, tps []core.TracePoint) error {
	if len(tps) == 0 {
		return core.Errorf(core.ErrNotFound, "")
	}
	// perf walks the arguments as written: a $params or $vars that expanded
	// to nothing anywhere is "not found" too.
	for i := range args {
		var typ string
		found := false
		for _, tp := range tps {
			if i < len(tp.Args) && tp.Args[i].Found {
				typ, found = tp.Args[i].Type, true
				break
			}
		}
		if !found {
			return core.Errorf(core.ErrNotFound, "%s", dwarfexpr.NotFoundMessage(args[i].Var))
		}
		for _, tp := range tps {
			if i < len(tp.Args) && !tp.Args[i].Found {
				tp.Args[i].Value = "\\" + strconv.FormatUint(probeMagic, 16)
				tp.Args[i].Refs = nil
				tp.Args[i].Type = typ
				tp.Args[i].Found = true
			}
		}
	}
	return nil
}

// probeMagic is perf's DEFAULT_PROBE_MAGIC_NUM.
const probeMagic = 0xdeade12d

// errLocalAtEntry refuses a function's local variable: it has no value
// when the function is called.
func errLocalAtEntry(name, fn string) error {
	return core.Errorf(core.ErrInvalid, "'%s' is a local variable of %s: at a function's entry only its parameters have values. Probe a line of %s with a kprobe to read it.", name, fn, fn)
}

// isLocal reports whether vr, found in the function's own scope, is a local
// variable (not a parameter, not a global).
func isLocal(vr *dwarf.Entry) bool {
	return vr.Tag == dwarf.TagVariable && vr.AttrField(dwarf.AttrExternal) == nil
}
