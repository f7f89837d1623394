// Package brief keeps the lists in messages short: an error that names
// what was available (an event's fields, a function's parameters, the
// prototypes of same-named functions) stays one readable line whatever
// the input held (a format file with 200,000 fields once made a
// megabyte-long error line).
package brief

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits of Join.
const (
	MaxItems   = 12
	MaxItemLen = 80
)

// Join joins items with sep: at most MaxItems of them, each cut to
// MaxItemLen bytes on a character boundary ("..." marking the cut), then
// how many were left out ("a, b, c and 7 more").
func Join(items []string, sep string) string {
	var b strings.Builder
	for i, it := range items {
		if i == MaxItems {
			fmt.Fprintf(&b, " and %d more", len(items)-i)
			break
		}
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(Cut(it, MaxItemLen))
	}
	return b.String()
}

// Cut returns s, or its first bytes up to n (not splitting a UTF-8
// character) and "...".
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && i > n-utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}
