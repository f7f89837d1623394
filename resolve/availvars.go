package resolve

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gprobe/gprobe/resolve/internal/dwarfexpr"
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
	// Range is perf's --range: every variable with a location anywhere
	// in the function, marked [VAL] (valid at the address), [INV] (not
	// there) or [EXT] (extern), with its location ranges.
	Range bool
}

// AvailableVars is perf's debuginfo__find_available_vars_at: for every
// address the probe point resolves to, the variables (and parameters) that
// have a location there. An empty result means the point was not found.
func (r *Resolver) AvailableVars(pp *spec.Point, opts VarsOptions) ([]VarList, error) {
	if r.f == nil || !r.f.HasDWARF() && r.hasBTF() {
		if opts.Range {
			return nil, errorf(ErrNeedsDWARF, "--range needs DWARF: BTF has no variable locations; use -k with a vmlinux that has debug info")
		}
		return r.btfVars(pp)
	}
	if !r.f.HasDWARF() {
		return nil, r.noDebugInfo()
	}
	vls, err := r.findVars(pp, opts)
	if err == nil && len(vls) == 0 {
		if alt, _ := r.alternative(pp); alt != nil {
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
	c.showRange = vc.opts.Range
	vl := VarList{Symbol: symbol, Offset: offset}
	seen := map[string]bool{}
	// add is perf's collect_variables_cb; parent is the DIE holding e.
	add := func(e *dwarf.Entry, parent uint64, external bool) (findResult, error) {
		if isVarTag(e.Tag) {
			err := c.varLocation(e, nil)
			inv := errors.Is(err, errOutOfRange)
			// Computed values are listed as perf lists them; using one
			// gives the reason it cannot be fetched.
			if err == nil || inv || errors.As(err, new(*Error)) {
				s, ok, err := c.varEntry(e, parent, external, inv)
				if err != nil {
					return cbEnd, err
				}
				if ok && !seen[s] {
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
	if _, err := c.findChildIn(c.sc.Offset, func(e *dwarf.Entry, parent uint64) (findResult, error) { return add(e, parent, false) }); err != nil {
		return err
	}
	if vc.opts.Externs {
		if _, err := c.findChildIn(c.cu.Lines.Offset, func(e *dwarf.Entry, parent uint64) (findResult, error) { return add(e, parent, true) }); err != nil {
			return err
		}
	}
	sort.Strings(vl.Vars)
	vc.addrs = append(vc.addrs, c.addr)
	vc.lists = append(vc.lists, vl)
	return nil
}

// varEntry is the line collect_variables_cb lists for variable e:
// "TYPE\tNAME", and with --range "[VAL]\t" (or "[INV]\t", or "[EXT]\t" for
// externs) before it and "\t@<FUNC+[RANGES]>" after it. ok is false when
// perf leaves the variable out (with --range: no location ranges to show).
func (c *scopeCtx) varEntry(e *dwarf.Entry, parent uint64, external, inv bool) (s string, ok bool, err error) {
	var b strings.Builder
	if c.showRange {
		switch {
		case external:
			b.WriteString("[EXT]\t")
		case inv:
			b.WriteString("[INV]\t")
		default:
			b.WriteString("[VAL]\t")
		}
	}
	name, err := c.varName(e)
	if err != nil {
		return "", false, err
	}
	b.WriteString(name)
	if c.showRange && !external {
		b.WriteByte('\t')
		if ok, err := c.varRange(&b, e, parent); err != nil || !ok {
			return "", false, err
		}
	}
	return b.String(), true, nil
}

// varRange is perf's die_get_var_range: the ranges of the variable's
// location list as offsets from the function's entry,
// "@<FUNC+[B-E,B-E]>"; for a single location, the ranges of the scope
// holding the variable (die_get_var_innermost_scope). Offsets are unsigned
// and wrap, as perf prints them.
func (c *scopeCtx) varRange(b *strings.Builder, e *dwarf.Entry, parent uint64) (bool, error) {
	entry, ok := c.sp.LowestPC()
	if !ok || c.sp.Name == "" {
		return false, nil
	}
	fld := e.AttrField(dwarf.AttrLocation)
	if fld == nil {
		return false, nil
	}
	ents, err := c.cu.LocationEntries(fld)
	if err != nil {
		return false, err
	}
	first := true
	for _, l := range ents {
		if l.Begin == 0 {
			// A single location: the scope's ranges, appended to what
			// was printed of the list (perf does the same).
			sc := c.cu.Scopes[parent]
			if sc == nil {
				return false, nil
			}
			c.writeRanges(b, sc.Ranges, entry)
			return true, nil
		}
		if first {
			fmt.Fprintf(b, "@<%s+[%d-%d", c.sp.Name, l.Begin-entry, l.End-entry)
			first = false
		} else {
			fmt.Fprintf(b, ",%d-%d", l.Begin-entry, l.End-entry)
		}
	}
	if !first {
		b.WriteString("]>")
	}
	return true, nil
}

// writeRanges prints perf's "@<FUNC+[B-E,...]>"; nothing for no ranges.
func (c *scopeCtx) writeRanges(b *strings.Builder, ranges [][2]uint64, entry uint64) {
	for i, r := range ranges {
		if i == 0 {
			fmt.Fprintf(b, "@<%s+[%d-%d", c.sp.Name, r[0]-entry, r[1]-entry)
		} else {
			fmt.Fprintf(b, ",%d-%d", r[0]-entry, r[1]-entry)
		}
	}
	if len(ranges) > 0 {
		b.WriteString("]>")
	}
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
