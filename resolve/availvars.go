package resolve

import (
	"debug/dwarf"
	"errors"
	"sort"

	"github.com/gprobe/gprobe/resolve/dwarfexpr"
	"github.com/gprobe/gprobe/resolve/spec"
)

// VarList is the -V answer for one probe address (perf's variable_list):
// the DWARF function and offset, and "TYPE\tNAME" entries sorted and
// deduplicated as perf's strlist keeps them.
type VarList struct {
	Symbol string
	Offset uint64
	Vars   []string
}

// VarsOptions tune AvailableVars.
type VarsOptions struct {
	Externs bool // --externs: the unit's global variables too
}

// AvailableVars is perf's debuginfo__find_available_vars_at: for every
// address the probe point resolves to, the variables (and parameters) that
// have a location there. An empty result means the point was not found.
func (r *Resolver) AvailableVars(pp *spec.Point, opts VarsOptions) ([]VarList, error) {
	if !r.f.HasDWARF() {
		return nil, errorf(ErrNotFound, "The %s file has no debug information.\nRebuild with CONFIG_DEBUG_INFO=y, or install an appropriate debuginfo package.", r.f.Path)
	}
	vls, err := r.findVars(pp, opts)
	if err == nil && len(vls) == 0 {
		if alt, ok := r.alternative(pp); ok {
			vls, err = r.findVars(alt, opts)
		}
	}
	return vls, err
}

func (r *Resolver) findVars(pp *spec.Point, opts VarsOptions) ([]VarList, error) {
	f := &finder{r: r, pp: pp, vars: &varsCollector{opts: opts}}
	if _, err := r.runFinder(f); err != nil {
		return nil, err
	}
	return f.vars.lists, nil
}

// varsCollector is the state of perf's available_var_finder.
type varsCollector struct {
	opts  VarsOptions
	lists []VarList
	addrs []uint64
}

// collect is perf's add_available_vars for one address.
func (c *scopeCtx) collect(vc *varsCollector, symbol string, offset uint64) error {
	vl := VarList{Symbol: symbol, Offset: offset}
	seen := map[string]bool{}
	add := func(e *dwarf.Entry, external bool) (findResult, error) {
		if isVarTag(e.Tag) {
			err := c.varLocation(e, nil)
			if err == nil {
				s, err := c.varName(e)
				if err != nil {
					return cbEnd, err
				}
				if !seen[s] {
					seen[s] = true
					vl.Vars = append(vl.Vars, s)
				}
			} else if !errors.Is(err, errNoLocation) && !errors.Is(err, dwarfexpr.ErrUnsupported) {
				return cbEnd, err
			}
		}
		if !external && c.haspc(e, c.addr) {
			return cbContinue, nil
		}
		return cbSibling, nil
	}
	if _, err := c.findChild(c.sc.Offset, func(e *dwarf.Entry) (findResult, error) { return add(e, false) }); err != nil {
		return err
	}
	if vc.opts.Externs {
		if _, err := c.findChild(c.cu.Lines.Offset, func(e *dwarf.Entry) (findResult, error) { return add(e, true) }); err != nil {
			return err
		}
	}
	sort.Strings(vl.Vars)
	vc.addrs = append(vc.addrs, c.addr)
	vc.lists = append(vc.lists, vl)
	return nil
}

// varName is perf's die_get_varname: "TYPE\tNAME".
func (c *scopeCtx) varName(e *dwarf.Entry) (string, error) {
	t, ok, err := c.typeName(e)
	if err != nil {
		return "", err
	}
	if !ok {
		t = "(unknown_type)"
	}
	return t + "\t" + c.name(e), nil
}

// typeName is perf's die_get_typename: typedef names kept, "*" for
// pointers and arrays, "(function_type)" for function pointers.
func (c *scopeCtx) typeName(e *dwarf.Entry) (string, bool, error) {
	t, err := c.qualifiedType(e)
	if err != nil || t == nil {
		return "", false, err
	}
	switch t.Tag {
	case dwarf.TagArrayType, dwarf.TagPointerType:
		s, ok, err := c.typeName(t)
		if err != nil || !ok {
			return "", false, err
		}
		return s + "*", true, nil
	case dwarf.TagSubroutineType:
		return "(function_type)", true, nil
	}
	n := c.name(t)
	if n == "" {
		return "", false, nil
	}
	switch t.Tag {
	case dwarf.TagUnionType:
		n = "union " + n
	case dwarf.TagStructType:
		n = "struct " + n
	case dwarf.TagEnumerationType:
		n = "enum " + n
	}
	return n, true, nil
}
