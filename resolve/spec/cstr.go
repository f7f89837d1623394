package spec

import "strings"

// Character classes of the kernel tools' own ctype table (tools/lib/ctype.c),
// which perf's probe code uses instead of the C library's. It is Latin-1
// aware: 0xA0 is a space, 0xC0-0xFF (except 0xD7 and 0xF7) are letters.
const (
	ctU  = 0x01 // upper
	ctL  = 0x02 // lower
	ctD  = 0x04 // digit
	ctS  = 0x20 // white space
	ctSP = 0x80 // hard space
)

var toolsCtype = func() (t [256]uint8) {
	for c := 9; c <= 13; c++ {
		t[c] = ctS
	}
	t[' '] = ctS | ctSP
	for c := '0'; c <= '9'; c++ {
		t[c] = ctD
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = ctU
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = ctL
	}
	t[0xA0] = ctS | ctSP
	for c := 0xC0; c <= 0xDE; c++ {
		t[c] = ctU
	}
	for c := 0xDF; c <= 0xFF; c++ {
		t[c] = ctL
	}
	t[0xD7] = 0
	t[0xF7] = 0
	return t
}()

func toolsIsAlpha(c byte) bool { return toolsCtype[c]&(ctU|ctL) != 0 }
func toolsIsDigit(c byte) bool { return toolsCtype[c]&ctD != 0 }
func toolsIsAlnum(c byte) bool { return toolsCtype[c]&(ctU|ctL|ctD) != 0 }
func toolsIsSpace(c byte) bool { return toolsCtype[c]&ctS != 0 }

// cIsSpace is glibc's isspace in the C locale, used by strtol/strtoul.
func cIsSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// cString cuts s at its first NUL byte: perf sees C strings.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// strpbrkEsc returns the index of the first byte of s that is in stopset and
// that perf's strpbrk_esc() considers unescaped, or -1. perf only inspects
// the two bytes before a candidate: it is skipped when preceded by '\' unless
// that '\' is itself preceded by '\'. A candidate right at the start of the
// current search position is always taken. Bytes before the start of s are
// treated as non-backslash (in perf they are NUL or a delimiter).
func strpbrkEsc(s, stopset string) int {
	str := 0
	for {
		i := strings.IndexAny(s[str:], stopset)
		if i < 0 {
			return -1
		}
		ptr := str + i
		if ptr == str || (ptr == str+1 && s[ptr-1] != '\\') {
			return ptr
		}
		str = ptr + 1
		escaped := s[ptr-1] == '\\' && (ptr < 2 || s[ptr-2] != '\\')
		if !escaped {
			return ptr
		}
	}
}

// strdupEsc is perf's strdup_esc(): every backslash is dropped and the byte
// after it is kept literally; a trailing lone backslash is dropped.
func strdupEsc(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			if i == len(s) {
				break
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

// cDigit returns the value of c as a digit in bases up to 36, or 99.
func cDigit(c byte) uint64 {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0')
	case c >= 'a' && c <= 'z':
		return uint64(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return uint64(c-'A') + 10
	}
	return 99
}

// strtoulC mimics glibc 2.36 strtoul(s, &end, 0) on LP64. It returns the
// value, the number of bytes consumed (0 when nothing was converted, in which
// case end == nptr) and whether the magnitude overflowed (errno == ERANGE).
func strtoulC(s string) (val uint64, end int, overflow bool) {
	mag, neg, end, overflow := strtoxC(s)
	if overflow {
		return ^uint64(0), end, true
	}
	if neg {
		mag = -mag
	}
	return mag, end, false
}

// strtolC mimics glibc 2.36 strtol(s, &end, 0) on LP64 (long is 64-bit).
func strtolC(s string) (val int64, end int, overflow bool) {
	mag, neg, end, overflow := strtoxC(s)
	const minMag = uint64(1) << 63
	if !overflow {
		if neg && mag > minMag || !neg && mag > minMag-1 {
			overflow = true
		}
	}
	if overflow {
		if neg {
			return -1 << 63, end, true
		}
		return 1<<63 - 1, end, true
	}
	if neg {
		return int64(-mag), end, false
	}
	return int64(mag), end, false
}

// strtoxC is the common part of strtoulC/strtolC: base-0 prefix detection,
// glibc's "0x without hex digits" rule, and 64-bit overflow detection.
func strtoxC(s string) (mag uint64, neg bool, end int, overflow bool) {
	i := 0
	for i < len(s) && cIsSpace(s[i]) {
		i++
	}
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	if i < len(s) && s[i] == '0' {
		if i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X') {
			base = 16
			i += 2
		} else {
			base = 8
		}
	}
	start := i
	cutoff := ^uint64(0) / base
	cutlim := ^uint64(0) % base
	for ; i < len(s); i++ {
		d := cDigit(s[i])
		if d >= base {
			break
		}
		if mag > cutoff || (mag == cutoff && d > cutlim) {
			overflow = true
			continue
		}
		mag = mag*base + d
	}
	if i == start {
		// Nothing converted. "0x" followed by a non-hex byte converts the
		// "0" and leaves end at the 'x'.
		if base == 16 {
			return 0, false, start - 1, false
		}
		return 0, false, 0, false
	}
	return mag, neg, i, overflow
}

// argvSplit is perf's argv_split(): words separated by runs of (tools ctype)
// white space, no quoting.
func argvSplit(s string) []string { return splitWords(s, false) }

// argvSplitQuoted is argvSplit that keeps white space inside quotes (as
// quoted names take it: "ns::Klass::method(char const*)"), an extension of
// newer perf's quoted names, whose argv_split cuts them there. A backslash
// escapes the byte after it; an unclosed quote runs to the end.
func argvSplitQuoted(s string) []string { return splitWords(s, hasQuote(s)) }

// splitWords splits s at runs of white space, outside quotes when quotes.
func splitWords(s string, quotes bool) []string {
	var argv []string
	i := 0
	for i < len(s) {
		for i < len(s) && toolsIsSpace(s[i]) {
			i++
		}
		if i == len(s) {
			break
		}
		j := i
		var quote byte
	word:
		for ; j < len(s); j++ {
			switch c := s[j]; {
			case quote != 0 && c == '\\':
				j++
			case quote != 0:
				if c == quote {
					quote = 0
				}
			case toolsIsSpace(c):
				break word
			case quotes && c == '\\':
				j++
			case quotes && (c == '"' || c == '\''):
				quote = c
			}
		}
		j = min(j, len(s))
		argv = append(argv, s[i:j])
		i = j
	}
	return argv
}

// xpgBasename is glibc's POSIX basename() from <libgen.h> (which perf uses):
// trailing slashes are ignored, "" gives ".", and a path of only slashes
// gives "/".
func xpgBasename(p string) string {
	if p == "" {
		return "."
	}
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return p
	}
	if i+1 < len(p) {
		return p[i+1:]
	}
	// Trailing slash(es).
	for i > 0 && p[i-1] == '/' {
		i--
	}
	if i == 0 {
		return "/"
	}
	end := i
	for i > 0 && p[i-1] != '/' {
		i--
	}
	return p[i:end]
}
