package spec

import (
	"errors"
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
	// perf probe 6.1's positions (perf probe -x /bin/true -F FILTER).
	for _, c := range []struct {
		bad string
		pos int
	}{
		{"", 1}, {"(a", 3}, {"a|", 3}, {"&a", 1}, {"a)", 2}, {"a b", 3}, {"!", 2}, {"()", 2},
		{"a|(b", 5}, {"(a)(b)", 4}, {"a & | b", 5}, {"!a!b", 3},
	} {
		_, err := ParseFilter(c.bad)
		var fe *FilterError
		if !errors.As(err, &fe) || fe.Pos != c.pos || fe.Source != c.bad {
			t.Errorf("ParseFilter(%q) = %v, want an error at %d", c.bad, err, c.pos)
		}
	}
	_, err := ParseFilter("(a")
	if want := "Filter parse error at 3.\nSource: \"(a\"\n           ^"; err.Error() != want {
		t.Errorf("message %q, want perf's %q", err, want)
	}
	if f, err := ParseFilter(`a\`); err != nil || f.String() != `a\` {
		t.Errorf("a trailing backslash: %v %v", f, err)
	}
}

// TestFilterString: a filter prints back as perf's strfilter__string
// prints it.
func TestFilterString(t *testing.T) {
	for in, want := range map[string]string{
		"a | b": "a|b", "!_* & !__crc_*": "(!_*)&(!__crc_*)", "a|b&c": "a|(b&c)", "a&b|c": "(a&b)|c",
		"(a|b)": "a|b", "!(a|b)": "!(a|b)", "x[!a]z": "x[!a]z",
	} {
		f, err := ParseFilter(in)
		if err != nil || f.String() != want {
			t.Errorf("%q prints %v (%v), want %q", in, f, err, want)
		}
	}
}

// FuzzFilter: any text parses or fails with a position inside it (or
// just after it), never a panic; what parses prints back to a filter
// that parses to the same text (unless a '\' escapes what follows it).
func FuzzFilter(f *testing.F) {
	for _, s := range []string{"!_* & !*@plt", "(a|b)&!c", "a\\ b", "x[!a]z", "((a))", "a|", "("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := ParseFilter(s)
		var fe *FilterError
		if err != nil {
			if !errors.As(err, &fe) || fe.Pos < 1 || fe.Pos > len(s)+1 {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		flt.Match(s)
		if strings.Contains(s, "\\") {
			return // a pattern's trailing '\' escapes the ')' printed after it, in perf too
		}
		again, err := ParseFilter(flt.String())
		if err != nil || again.String() != flt.String() {
			t.Fatalf("%q prints %q, which parses to %v (%v)", s, flt.String(), again, err)
		}
	})
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
