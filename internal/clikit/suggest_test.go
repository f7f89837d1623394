package clikit

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"record", "record", 0},
		{"analyse", "analyze", 1}, {"recrod", "record", 1}, {"ca", "abc", 3},
		{"kitten", "sitting", 3}, {"lsit", "list", 1}, {"exprot", "export", 1}, {"vfs_read", "vfs_raed", 1}, {"abcd", "badc", 2},
	} {
		if d := Distance(c.a, c.b); d != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
		if d := Distance(c.b, c.a); d != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.b, c.a, d, c.d)
		}
	}
}

func TestSuggest(t *testing.T) {
	commands := []string{"line", "funcs", "add", "del", "list", "vars", "record", "analyze", "latency", "export", "check"}
	for word, want := range map[string]string{
		"analyse": "analyze", "recrod": "record", "Analyze": "analyze", "anlyze": "analyze", "analyz": "analyze",
		"reccord": "record", "exprot": "export", "lst": "list", "lsit": "list", "ad": "add", "chek": "check", "latncy": "latency",
		// Not close enough: probe points, most likely.
		"analyze": "", "vfs_read": "", "anlz": "", "rec": "", "a": "", "do": "", "set": "", "put": "", "get": "", "sched": "",
		"kmalloc": "", "record_it": "", "checks2": "",
	} {
		if got := Suggest(word, commands); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", word, got, want)
		}
	}
}
