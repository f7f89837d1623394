package spec

import "testing"

func TestFilter(t *testing.T) {
	for _, c := range []struct {
		filter string
		match  []string
		miss   []string
	}{
		{"!_*", []string{"vfs_read"}, []string{"_start", "__x"}},
		{"vfs_* | do_*", []string{"vfs_read", "do_x"}, []string{"ksys_read"}},
		{"(sys_*|ksys_*)&!*write*", []string{"sys_read", "ksys_read"}, []string{"sys_write", "vfs_read"}},
		{"!(a*|b*)", []string{"c"}, []string{"a", "b1"}},
		{"x[!a]z", []string{"xbz"}, []string{"xaz"}},
	} {
		f, err := ParseFilter(c.filter)
		if err != nil {
			t.Fatalf("%q: %v", c.filter, err)
		}
		for _, m := range c.match {
			if !f.Match(m) {
				t.Errorf("%q should match %q", c.filter, m)
			}
		}
		for _, m := range c.miss {
			if f.Match(m) {
				t.Errorf("%q should not match %q", c.filter, m)
			}
		}
	}
	for _, bad := range []string{"", "(a", "a|", "&a", "a)"} {
		if _, err := ParseFilter(bad); err == nil {
			t.Errorf("ParseFilter(%q) accepted", bad)
		}
	}
}

func TestOrFilters(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"probe:*"}, "probe:*"},
		{[]string{"a", "b"}, "a|b"},
		{[]string{"a", "b", "c"}, "(a|b)|c"},
		{[]string{"a", "b", "!c"}, "(a|b)|(!c)"},
		{[]string{"a|b", "c"}, "(a|b)|c"},
	} {
		if got := OrFilters(c.in); got != c.want {
			t.Errorf("OrFilters(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
