package brief

import (
	"fmt"
	"strings"
	"testing"
)

func TestJoin(t *testing.T) {
	many := make([]string, 200000)
	for i := range many {
		many[i] = fmt.Sprintf("f%d", i)
	}
	for _, c := range []struct {
		items []string
		sep   string
		want  string
	}{
		{nil, ", ", ""},
		{[]string{"a"}, ", ", "a"},
		{[]string{"a", "b"}, " | ", "a | b"},
		{many, ", ", "f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11 and 199988 more"},
		{[]string{strings.Repeat("x", 100)}, ", ", strings.Repeat("x", 80) + "..."},
		{[]string{strings.Repeat("x", 79) + "日本"}, ", ", strings.Repeat("x", 79) + "..."},
	} {
		if got := Join(c.items, c.sep); got != c.want {
			t.Errorf("Join(%d items) = %q, want %q", len(c.items), got, c.want)
		}
	}
}
