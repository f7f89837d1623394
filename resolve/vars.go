package resolve

import (
	"fmt"
	"io"
	"strings"
)

// WriteVars prints -V's answer as perf's show_available_vars does:
// "Available variables at POINT", then for each address "@<FUNC+OFF>" and
// the "TYPE\tNAME" entries whose name match keeps, or "(No matched
// variables)".
func WriteVars(w io.Writer, point string, vls []VarList, match func(name string) bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Available variables at %s\n", point)
	for _, vl := range vls {
		fmt.Fprintf(&b, "\t@<%s+%d>\n", vl.Symbol, vl.Offset)
		n := 0
		for _, v := range vl.Vars {
			name := v[strings.IndexByte(v, '\t')+1:]
			if match(name) {
				fmt.Fprintf(&b, "\t\t%s\n", v)
				n++
			}
		}
		if n == 0 {
			b.WriteString("\t\t(No matched variables)\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
