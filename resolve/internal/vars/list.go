package vars

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfexpr"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/internal/golang"
)

// Collector gathers -V's lists over the addresses of a probe point (the
// state of perf's available_var_finder).
type Collector struct {
	Opts  core.VarsOptions
	Lists []core.VarList
	addrs []uint64
}

// Has reports whether addr was collected already.
func (vc *Collector) Has(addr uint64) bool { return slices.Contains(vc.addrs, addr) }

// Collect is perf's add_available_vars for one address.
func (c *Scope) Collect(vc *Collector, symbol string, offset uint64) error {
	c.showRange = vc.Opts.Range
	vl := core.VarList{Symbol: symbol, Offset: offset}
	seen := map[string]bool{}
	// add is perf's collect_variables_cb; parent is the DIE holding e.
	add := func(e *dwarf.Entry, parent uint64, external bool) (findResult, error) {
		if isVarTag(e.Tag) && !goResult(c.CU, e) {
			err := c.varLocation(e, nil)
			inv := errors.Is(err, errOutOfRange)
			// Computed values are listed as perf lists them; using one
			// gives the reason it cannot be fetched.
			if err == nil || inv || errors.As(err, new(*core.Error)) {
				s, ok, err := c.varEntry(e, parent, external, inv)
				if err != nil {
					return cbEnd, err
				}
				if ok {
					c.Im.Debugf("Add new var: %s", s)
				}
				if ok && !seen[s] {
					seen[s] = true
					vl.Vars = append(vl.Vars, s)
				}
			} else if !errors.Is(err, errNoLocation) && !errors.Is(err, dwarfexpr.ErrUnsupported) {
				return cbEnd, err
			}
		}
		if !external && c.haspc(e, c.Addr) {
			return cbContinue, nil
		}
		return cbSibling, nil
	}
	if _, err := c.findChildIn(c.Sc.Offset, func(e *dwarf.Entry, parent uint64) (findResult, error) { return add(e, parent, false) }); err != nil {
		return err
	}
	if vc.Opts.Externs {
		if _, err := c.findChildIn(c.CU.Lines.Offset, func(e *dwarf.Entry, parent uint64) (findResult, error) { return add(e, parent, true) }); err != nil {
			return err
		}
	}
	sort.Strings(vl.Vars)
	vc.addrs = append(vc.addrs, c.Addr)
	vc.Lists = append(vc.Lists, vl)
	return nil
}

// goResult reports a Go function's result (~r0, or a named one): Go's
// DWARF lists results among the parameters (DW_AT_variable_parameter);
// they have no value before the function returns, and perf leaves them
// out of $params.
func goResult(cu *dwarfinfo.CU, e *dwarf.Entry) bool {
	if cu.Language != golang.LangGo || e.Tag != dwarf.TagFormalParameter {
		return false
	}
	v, _ := e.Val(dwarf.AttrVarParam).(bool)
	return v
}

// varEntry is the line collect_variables_cb lists for variable e:
// "TYPE\tNAME", and with --range "[VAL]\t" (or "[INV]\t", or "[EXT]\t" for
// externs) before it and "\t@<FUNC+[RANGES]>" after it. ok is false when
// perf leaves the variable out (with --range: no location ranges to show).
func (c *Scope) varEntry(e *dwarf.Entry, parent uint64, external, inv bool) (s string, ok bool, err error) {
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
func (c *Scope) varRange(b *strings.Builder, e *dwarf.Entry, parent uint64) (bool, error) {
	entry, ok := c.Func.LowestPC()
	if !ok || c.Func.Name == "" {
		return false, nil
	}
	fld := e.AttrField(dwarf.AttrLocation)
	if fld == nil {
		return false, nil
	}
	ents, err := c.CU.LocationEntries(fld)
	if err != nil {
		return false, err
	}
	first := true
	for _, l := range ents {
		if l.Begin == 0 {
			// A single location: the scope's ranges, appended to what
			// was printed of the list (perf does the same).
			sc := c.CU.Scopes[parent]
			if sc == nil {
				return false, nil
			}
			c.writeRanges(b, sc.Ranges, entry)
			return true, nil
		}
		if first {
			fmt.Fprintf(b, "@<%s+[%d-%d", c.Func.Name, l.Begin-entry, l.End-entry)
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
func (c *Scope) writeRanges(b *strings.Builder, ranges [][2]uint64, entry uint64) {
	for i, r := range ranges {
		if i == 0 {
			fmt.Fprintf(b, "@<%s+[%d-%d", c.Func.Name, r[0]-entry, r[1]-entry)
		} else {
			fmt.Fprintf(b, ",%d-%d", r[0]-entry, r[1]-entry)
		}
	}
	if len(ranges) > 0 {
		b.WriteString("]>")
	}
}

// varName is perf's die_get_varname: "TYPE\tNAME".
func (c *Scope) varName(e *dwarf.Entry) (string, error) {
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
func (c *Scope) typeName(e *dwarf.Entry) (string, bool, error) {
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
