package spec

import (
	"fmt"
	"strings"
)

// Filter is perf's strfilter (tools/perf/util/strfilter.c): glob patterns
// combined with '!' (not), '&' (and), '|' (or) and parentheses, e.g.
// "!_* & !__crc_*", parsed as perf parses it (its precedence, its error
// positions) and printed back as perf prints it.
type Filter struct{ root *filterNode }

type filterNode struct {
	op   byte // '|', '&', '!' or 0 for a pattern
	pat  string
	l, r *filterNode
}

// FilterError is a filter that does not parse, with perf's position of
// the error (1-based: perf's "err - str + 1").
type FilterError struct {
	Source string
	Pos    int
}

// Error is perf's message (params_add_filter): the position, the source
// and a caret under the position.
func (e *FilterError) Error() string {
	return fmt.Sprintf("Filter parse error at %d.\nSource: \"%s\"\n         %*c", e.Pos, e.Source, e.Pos, '^')
}

// ParseFilter parses a filter expression (perf's strfilter__new); a
// malformed one is a *FilterError.
func ParseFilter(s string) (*Filter, error) {
	n, ep := parseFilterNode(s, 0)
	if n == nil || ep != len(s) {
		return nil, &FilterError{Source: s, Pos: ep + 1}
	}
	return &Filter{root: n}, nil
}

// Or adds rules to f as perf's strfilter__or does: f becomes "(f)|(rules)".
// When rules do not parse, f is unchanged and the error is a *FilterError.
func (f *Filter) Or(rules string) error {
	n, ep := parseFilterNode(rules, 0)
	if n == nil || ep != len(rules) {
		return &FilterError{Source: rules, Pos: ep + 1}
	}
	f.root = &filterNode{op: '|', l: f.root, r: n}
	return nil
}

// String prints f as perf's strfilter__string does: operators without
// spaces, every operand that is itself an operation in parentheses.
func (f *Filter) String() string {
	var b strings.Builder
	f.root.print(&b)
	return b.String()
}

func (n *filterNode) print(b *strings.Builder) {
	switch n.op {
	case '|', '&':
		n.l.printParens(b)
		fallthrough
	case '!':
		b.WriteByte(n.op)
		n.r.printParens(b)
	default:
		b.WriteString(n.pat)
	}
}

func (n *filterNode) printParens(b *strings.Builder) {
	if n.r == nil {
		n.print(b)
		return
	}
	b.WriteByte('(')
	n.print(b)
	b.WriteByte(')')
}

// Match reports whether name passes the filter.
func (f *Filter) Match(name string) bool { return f.root.match(name) }

// MatchEvent is perf's filter on a trace event (-l, -d): its name alone or
// GROUP:EVENT.
func (f *Filter) MatchEvent(group, event string) bool {
	return f.Match(event) || f.Match(group+":"+event)
}

// OrFilters combines several filters the way perf's strfilter__or prints
// them (perf probe -d A -d B): "a|b", "(a|b)|c", "(a|b)|(!c)". A filter
// that does not parse is kept as written.
func OrFilters(filters []string) string {
	if len(filters) == 0 {
		return ""
	}
	f, err := ParseFilter(filters[0])
	if err != nil {
		return strings.Join(filters, "|")
	}
	for _, s := range filters[1:] {
		if f.Or(s) != nil {
			return strings.Join(filters, "|")
		}
	}
	return f.String()
}

func (n *filterNode) match(s string) bool {
	switch n.op {
	case '|':
		return n.l.match(s) || n.r.match(s)
	case '&':
		return n.l.match(s) && n.r.match(s)
	case '!':
		return !n.r.match(s)
	}
	return GlobMatch(s, n.pat)
}

func isFilterSep(c byte) bool { return c == '|' || c == '&' || c == '!' || c == '(' || c == ')' }

// filterToken is perf's get_token: the token starting at or after i (white
// space skipped), as its start and end. An operator or parenthesis is one
// byte; a pattern runs to the next operator or space, a '\' escaping the
// byte after it and "[!" staying inside the pattern.
func filterToken(s string, i int) (start, end int) {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i == len(s) {
		return i, i
	}
	p := i + 1
	if !isFilterSep(s[i]) {
		for {
			for p < len(s) && !isFilterSep(s[p]) && !isSpace(s[p]) {
				p++
			}
			if p < len(s) && (s[p-1] == '\\' || s[p] == '!' && s[p-1] == '[') {
				p++
				continue
			}
			break
		}
	}
	return i, p
}

// parseFilterNode is perf's strfilter_node__new from s[i:]: the tree, and
// where the parse stopped (the end, a ')' closing an outer parenthesis,
// or the token that was wrong when the tree is nil).
func parseFilterNode(s string, i int) (*filterNode, int) {
	var root filterNode
	cur, lastOp := &root, &root
	tok, e := filterToken(s, i)
	for tok < len(s) && s[tok] != ')' {
		switch s[tok] {
		case '&': // exchange the last operator's right with AND
			if cur.r == nil || lastOp.r == nil {
				return nil, tok
			}
			cur = &filterNode{op: '&', l: lastOp.r}
			lastOp.r = cur
			lastOp = cur
		case '|': // exchange the root with OR
			if cur.r == nil || root.r == nil {
				return nil, tok
			}
			cur = &filterNode{op: '|', l: root.r}
			root.r = cur
			lastOp = cur
		case '!': // NOT, a leaf of its own
			if cur.r != nil {
				return nil, tok
			}
			cur.r = &filterNode{op: '!'}
			cur = cur.r
		case '(':
			if cur.r != nil {
				return nil, tok
			}
			sub, ep := parseFilterNode(s, tok+1)
			if sub == nil || ep >= len(s) || s[ep] != ')' {
				return nil, ep
			}
			cur.r = sub
			e = ep + 1
		default:
			if cur.r != nil {
				return nil, tok
			}
			cur.r = &filterNode{pat: s[tok:e]}
		}
		tok, e = filterToken(s, e)
	}
	if cur.r == nil {
		return nil, tok
	}
	return root.r, tok
}
