package clikit

import (
	"testing"

	"github.com/urfave/cli/v2"
)

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

// TestSuggestCommand and TestFinish: an app's command names, its usage
// errors and usage lines.
func TestSuggestCommand(t *testing.T) {
	app := &cli.App{Name: "gprobe", Commands: []*cli.Command{{Name: "record", ArgsUsage: "[-- CMD]"}, {Name: "check", UsageText: "mine"}}}
	if s := SuggestCommand(app, "recrod"); s != "record" {
		t.Errorf("SuggestCommand(recrod) = %q", s)
	}
	if s := SuggestCommand(app, "vfs_read"); s != "" {
		t.Errorf("SuggestCommand(vfs_read) = %q", s)
	}
	called := 0
	Finish(app, func(*cli.Context, error, bool) error { called++; return nil })
	for _, f := range []cli.OnUsageErrorFunc{app.OnUsageError, app.Commands[0].OnUsageError, app.Commands[1].OnUsageError} {
		f(nil, nil, false)
	}
	if called != 3 || app.Commands[0].UsageText != "gprobe record [options] [-- CMD]" || app.Commands[1].UsageText != "mine" {
		t.Errorf("Finish: %d handlers, usage %q and %q", called, app.Commands[0].UsageText, app.Commands[1].UsageText)
	}
}
