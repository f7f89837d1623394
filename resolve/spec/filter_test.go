package spec

import (
	"strings"
	"testing"
)

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

// TestMatchEvent: perf's event filter matches the event's name alone or
// GROUP:EVENT.
func TestMatchEvent(t *testing.T) {
	f, err := ParseFilter("probe:vfs_* | do_*")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		group, event string
		want         bool
	}{{"probe", "vfs_read", true}, {"other", "vfs_read", false}, {"other", "do_exit", true}, {"probe", "ksys_read", false}} {
		if got := f.MatchEvent(c.group, c.event); got != c.want {
			t.Errorf("MatchEvent(%s, %s) = %v", c.group, c.event, got)
		}
	}
}

func TestArgStrings(t *testing.T) {
	p, err := ParseProbe("vfs_read file->f_pos n=count:u32 $comm")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.ArgStrings(), " "); got != "f_pos=file->f_pos n=count:u32 $comm" {
		t.Errorf("ArgStrings = %q", got)
	}
	if p, _ := ParseProbe("vfs_read"); p.ArgStrings() != nil {
		t.Errorf("no arguments gave %q", p.ArgStrings())
	}
}
