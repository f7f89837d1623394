package spec

import (
	"fmt"
	"strings"
	"unicode"
)

// Filter is perf's strfilter: glob patterns combined with '!' (not), '&'
// (and), '|' (or) and parentheses, e.g. "!_* & !__crc_*".
type Filter struct{ root *filterNode }

type filterNode struct {
	op   byte // '|', '&', '!' or 0 for a pattern
	pat  string
	l, r *filterNode
}

// ParseFilter parses a filter expression. Returns an error naming the
// position for a malformed expression.
func ParseFilter(s string) (*Filter, error) {
	p := &filterParser{toks: tokenizeFilter(s)}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.i != len(p.toks) {
		return nil, fmt.Errorf("filter %q: unexpected %q", s, p.toks[p.i])
	}
	return &Filter{root: n}, nil
}

// Match reports whether name passes the filter.
func (f *Filter) Match(name string) bool { return f.root.match(name) }

// MatchEvent is perf's filter on a trace event (-l, -d): its name alone or
// GROUP:EVENT.
func (f *Filter) MatchEvent(group, event string) bool {
	return f.Match(event) || f.Match(group+":"+event)
}

// OrFilters combines several filters the way perf's strfilter__or prints
// them (perf probe -d A -d B): "a|b", "(a|b)|c", "(a|b)|(!c)".
func OrFilters(filters []string) string {
	s := ""
	binary := false
	for i, p := range filters {
		pb := strings.ContainsAny(p, "|&!")
		if pb {
			p = "(" + p + ")"
		}
		if i == 0 {
			s, binary = filters[0], pb
			continue
		}
		if binary {
			s = "(" + s + ")"
		}
		s += "|" + p
		binary = true
	}
	return s
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

// tokenizeFilter splits like perf's get_token: operators and parentheses
// are tokens, white space separates, '\' escapes, and "[!" stays inside a
// pattern.
func tokenizeFilter(s string) []string {
	var toks []string
	i := 0
	isSep := func(c byte) bool { return strings.IndexByte("|&!()", c) >= 0 }
	for i < len(s) {
		if unicode.IsSpace(rune(s[i])) {
			i++
			continue
		}
		if isSep(s[i]) {
			toks = append(toks, s[i:i+1])
			i++
			continue
		}
		j := i + 1
		for j < len(s) {
			c := s[j]
			if c == '!' && s[j-1] == '[' || s[j-1] == '\\' {
				j++
				continue
			}
			if isSep(c) || unicode.IsSpace(rune(c)) {
				break
			}
			j++
		}
		toks = append(toks, s[i:j])
		i = j
	}
	return toks
}

type filterParser struct {
	toks []string
	i    int
}

func (p *filterParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *filterParser) or() (*filterNode, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peek() == "|" {
		p.i++
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = &filterNode{op: '|', l: l, r: r}
	}
	return l, nil
}

func (p *filterParser) and() (*filterNode, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.peek() == "&" {
		p.i++
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = &filterNode{op: '&', l: l, r: r}
	}
	return l, nil
}

func (p *filterParser) unary() (*filterNode, error) {
	switch t := p.peek(); t {
	case "":
		return nil, fmt.Errorf("filter: unexpected end")
	case "!":
		p.i++
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &filterNode{op: '!', r: r}, nil
	case "(":
		p.i++
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, fmt.Errorf("filter: missing ')'")
		}
		p.i++
		return n, nil
	case ")", "|", "&":
		return nil, fmt.Errorf("filter: unexpected %q", t)
	default:
		p.i++
		return &filterNode{pat: t}, nil
	}
}
