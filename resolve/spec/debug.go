package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// DebugLines are the lines perf probe -v prints while it parses p (perf's
// pr_debug in parse_perf_probe_point and parse_perf_probe_arg): the point
// as perf stores it, each argument as it was split, and their count.
func (p *Probe) DebugLines() []string {
	pt := &p.Point
	null := func(s string, ok bool) string {
		if !ok {
			return "(null)"
		}
		return s
	}
	ret := 0
	if pt.Return {
		ret = 1
	}
	out := []string{fmt.Sprintf("symbol:%s file:%s line:%d offset:%d return:%d lazy:%s",
		null(pt.Function, pt.HasFunction), null(pt.File, pt.HasFile), pt.Line, pt.Offset, ret, null(pt.Lazy, pt.HasLazy))}
	for i := range p.Args {
		out = append(out, p.Args[i].debugLine())
	}
	return append(out, strconv.Itoa(len(p.Args))+" arguments")
}

// debugLine is perf's "parsing arg: RAW into [name:N ][user_access ][type:T ]VAR[, FIELD(REF)...]".
func (a *Arg) debugLine() string {
	var b strings.Builder
	fmt.Fprintf(&b, "parsing arg: %s into ", a.Raw)
	if name, _, ok := strings.Cut(a.Raw, "="); ok {
		fmt.Fprintf(&b, "name:%s ", name)
	}
	if a.User {
		b.WriteString("user_access ")
	}
	if a.HasType {
		fmt.Fprintf(&b, "type:%s ", a.Type)
	}
	b.WriteString(a.Var)
	for _, f := range a.Fields {
		b.WriteString(", ")
		ref := 0
		if f.Ref {
			ref = 1
		}
		fmt.Fprintf(&b, "%s(%d)", f.Name, ref)
	}
	return b.String()
}
