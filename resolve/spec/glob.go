package spec

import "strings"

// GlobMatch reports whether s matches perf's glob pattern pat: '*', '?',
// character classes "[abc]", "[a-z]", "[!x]", and '\' escapes. A broken
// pattern matches nothing (perf's strglobmatch).
func GlobMatch(s, pat string) bool { return matchGlob(s, pat, false) }

// LazyMatch is perf's strlazymatch: a glob match in which white space in
// both the line and the pattern is ignored. It decides which source lines a
// lazy pattern (FUNC;PTN) selects.
func LazyMatch(line, pat string) bool { return matchGlob(line, pat, true) }

// IsGlob reports whether s contains a glob metacharacter (perf's strisglob).
func IsGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func matchGlob(str, pat string, ignoreSpace bool) bool {
	i, j := 0, 0
	for at(str, i) != 0 && at(pat, j) != 0 && at(pat, j) != '*' {
		if ignoreSpace {
			if isSpace(str[i]) {
				i++
				continue
			}
			if isSpace(pat[j]) {
				j++
				continue
			}
		}
		switch pat[j] {
		case '?':
			i++
			j++
			continue
		case '[':
			next, ok := matchCharClass(pat, j+1, str[i])
			if !ok {
				return false
			}
			i++
			j = next
			continue
		case '\\':
			j++
		}
		if at(str, i) != at(pat, j) {
			return false
		}
		i++
		j++
	}
	if at(pat, j) == '*' {
		for at(pat, j) == '*' {
			j++
		}
		if at(pat, j) == 0 {
			return true
		}
		for at(str, i) != 0 {
			if matchGlob(str[i:], pat[j:], ignoreSpace) {
				return true
			}
			i++
		}
	}
	return at(str, i) == 0 && at(pat, j) == 0
}

// matchCharClass matches c against the class starting at pat[p] (just after
// '['). It returns the index after the closing ']' and whether c matched;
// a class without ']' never matches.
func matchCharClass(pat string, p int, c byte) (int, bool) {
	complement := false
	if at(pat, p) == '!' {
		complement = true
		p++
	}
	matched := true
	first := at(pat, p)
	p++
	if first != c {
		matched = false
		for at(pat, p) != 0 && at(pat, p) != ']' {
			if at(pat, p) == '-' && at(pat, p+1) != ']' {
				lo, hi := at(pat, p-1), at(pat, p+1)
				if lo <= c && c <= hi {
					matched = true
					break
				}
				if lo > hi {
					return 0, false
				}
				p += 2
			} else {
				p++
				if at(pat, p-1) == c {
					matched = true
					break
				}
			}
		}
		if !matched && at(pat, p) == 0 {
			return 0, false
		}
	}
	for at(pat, p) != 0 && at(pat, p) != ']' {
		p++
	}
	if at(pat, p) == 0 {
		return 0, false
	}
	if complement {
		return p + 1, !matched
	}
	return p + 1, matched
}
