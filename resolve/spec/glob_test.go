package spec

import "testing"

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		s, pat string
		want   bool
	}{
		{"vfs_read", "vfs_read", true},
		{"vfs_read", "vfs_*", true},
		{"vfs_read", "*read", true},
		{"vfs_read", "vfs_?ead", true},
		{"vfs_read", "vfs_[rw]ead", true},
		{"vfs_write", "vfs_[!r]*", true},
		{"vfs_read", "vfs_[!r]*", false},
		{"vfs_read", "vfs_[a-z]ead", true},
		{"vfs_read", "vfs_[z-a]ead", false}, // broken range
		{"vfs_read", "vfs_[rw", false},      // unterminated class
		{"a*b", `a\*b`, true},
		{"axb", `a\*b`, false},
		{"", "*", true},
		{"", "", true},
		{"x", "", false},
		{"abc", "a*c*", true},
	}
	for _, c := range cases {
		if got := GlobMatch(c.s, c.pat); got != c.want {
			t.Errorf("GlobMatch(%q, %q) = %v, want %v", c.s, c.pat, got, c.want)
		}
	}
}

func TestLazyMatchIgnoresSpace(t *testing.T) {
	for _, line := range []string{"\ta = b;", "a=b;", "  a  =  b ;"} {
		if !LazyMatch(line, "a=*") {
			t.Errorf("LazyMatch(%q, %q) = false", line, "a=*")
		}
	}
	if LazyMatch("b = a;", "a=*") {
		t.Error("LazyMatch must match whole lines")
	}
}
