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
		// A literal tail after the last '*' (-F's "!*@plt").
		{"memcpy@plt", "*@plt", true},
		{"@plt", "*@plt", true},
		{"@pl", "*@plt", false},
		{"f@plt@plt", "*@plt", true},
		{"aaa", "*aa", true},
		{"ab", "a*ab", false},
		{"aab", "a*ab", true},
		{"x@plt\x00y", "*@plt", true}, // a NUL ends the string, as in C
		{"x\x00@plt", "*@plt", false},
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
