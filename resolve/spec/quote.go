package spec

import "strings"

// Quoted names, from newer perf (6.14's strpbrk_esq and strdup_esq): a
// part of a probe point, event name or line range between double or
// single quotes is taken literally, so non-C names need no escapes:
// "ns::Klass::method" instead of ns\:\:Klass\:\:method. Without quotes
// both functions are perf 6.1's strpbrk_esc and strdup_esc.

// strpbrkEsq is strpbrkEsc that also skips quoted parts: a quote is
// matched by the next unescaped quote of the same kind. It returns -1
// when a quote is not closed.
func strpbrkEsq(s, stopset string) int {
	set := stopset + `"'`
	for off := 0; ; {
		i := strpbrkEsc(s[off:], set)
		if i < 0 {
			return -1
		}
		i += off
		q := s[i]
		if strings.IndexByte(stopset, q) >= 0 || q != '"' && q != '\'' {
			return i
		}
		j := strpbrkEsc(s[i+1:], string(q))
		if j < 0 {
			return -1
		}
		off = i + 1 + j + 1
	}
}

// strdupEsq is strdupEsc outside quotes; a quoted part loses its quotes
// and keeps its bytes, a backslash included, but for a backslash before
// the closing quote's kind ("a\"b" is a"b). ok is false for a quote that
// is not closed.
func strdupEsq(s string) (string, bool) {
	if strpbrkEsc(s, `"'`) < 0 {
		return strdupEsc(s), true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			i++
			if i < len(s) {
				b = append(b, s[i])
			}
		case '"', '\'':
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '\\' && i+1 < len(s) && s[i+1] == c {
					b = append(b, c)
					i++
					continue
				}
				if s[i] == c {
					closed = true
					break
				}
				b = append(b, s[i])
			}
			if !closed {
				return "", false
			}
		default:
			b = append(b, c)
		}
	}
	return string(b), true
}

// hasQuote reports an unescaped quote in s.
func hasQuote(s string) bool { return strpbrkEsc(s, `"'`) >= 0 }

func unclosedQuote(s string) error {
	return semErr("Unclosed quote in '%s'.", s)
}
