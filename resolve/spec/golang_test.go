package spec

import (
	"strings"
	"testing"

	"github.com/gprobe/gprobe/emit/probedef"
)

func TestGoEventName(t *testing.T) {
	for in, want := range map[string]string{
		"main.work":                        "main_work",
		"main.other":                       "main_other",
		"github.com/x/y.(*T).Method":       "y_T_Method",
		"github.com/x/y.T.Method":          "y_T_Method",
		"main.T.Value":                     "main_T_Value",
		"main.work.func1":                  "main_work_func1",
		"main.Map[go.shape.int]":           "main_Map",
		"main.(*Box[go.shape.string]).Get": "main_Box_Get",
		"main.(*Box[go.shape.*internal/sync.entry[go.shape.interface {}]]).Get": "main_Box_Get",
		"type:.eq.main.T":                       "type_eq_main_T",
		"gopkg.in/yaml.v3.(*decoder).unmarshal": "yaml_v3_decoder_unmarshal",
		"example.com/a-b/c-d.F":                 "c_d_F",
		"main.main":                             "main_main",
	} {
		got := GoEventName(in)
		if got != want {
			t.Errorf("GoEventName(%q) = %q, want %q", in, got, want)
		}
		if !IsCFuncName(got) {
			t.Errorf("GoEventName(%q) = %q is no C name", in, got)
		}
	}
	long := "example.com/very/" + strings.Repeat("Long", 20) + ".(*Receiver).Method"
	got := GoEventName(long)
	if !IsCFuncName(got) || len(got)+len("__retinsn_99") >= probedef.MaxEventNameLen || !strings.HasSuffix(got, "_Receiver_Method") {
		t.Errorf("GoEventName of a long name = %q (%d)", got, len(got))
	}
	if got := GoEventName("9"); !IsCFuncName(got) {
		t.Errorf("GoEventName(9) = %q", got)
	}
}

func TestGoFunctionPoint(t *testing.T) {
	for _, c := range []struct {
		in       string
		fn, file string
		line     int
		lazy     string
		ok       bool
	}{
		{"main.work:3", "main.work", "", 3, "", true},
		{"'github.com/x/y.(*T).Method:12'", "github.com/x/y.(*T).Method", "", 12, "", true},
		{"main.work;return *", "main.work", "", 0, "return *", true},
		{"main.go:22", "", "main.go", 22, "", false},
		{"runtime/proc.go:100", "", "runtime/proc.go", 100, "", false},
		{"main.work", "main.work", "", 0, "", false},
		{"main.work%return", "main.work", "", 0, "", false},
		{"main.work@main.go:3", "main.work", "main.go", 3, "", false},
		{"asm_amd64.s:10", "", "asm_amd64.s", 10, "", false},
	} {
		in := strings.Trim(c.in, "'")
		p, err := ParsePoint(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		g, ok := GoFunctionPoint(*p)
		if ok != c.ok || g.Function != c.fn || g.File != c.file || g.Line != c.line || g.Lazy != c.lazy || g.HasFunction != (c.fn != "") || g.HasFile != (c.file != "") {
			t.Errorf("%s: got %+v, %v", in, g, ok)
		}
	}
}

func TestGoFunctionRange(t *testing.T) {
	for _, c := range []struct {
		in, fn, file string
		start, end   int
		ok           bool
	}{
		{"main.work", "main.work", "", 0, 1<<31 - 1, true},
		{"main.work:3-5", "main.work", "", 3, 5, true},
		{"github.com/x/y.(*T).Method:1+2", "github.com/x/y.(*T).Method", "", 1, 2, true},
		{"main.go:10", "", "main.go", 10, 10, false},
		{"main.go", "", "main.go", 0, 1<<31 - 1, false},
		{"work", "work", "", 0, 1<<31 - 1, false},
	} {
		lr, err := ParseLineRange(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if c.in == "main.go:10" {
			c.end = lr.End
		}
		g, ok := GoFunctionRange(*lr)
		if ok != c.ok || g.Function != c.fn || g.File != c.file || g.Start != c.start || g.End != c.end {
			t.Errorf("%s: got %+v, %v", c.in, g, ok)
		}
	}
}

// FuzzGoEventName: any function name gives an event name the kernel
// takes, with room for gprobe's suffixes.
func FuzzGoEventName(f *testing.F) {
	for _, s := range []string{"main.work", "github.com/x/y.(*T).Method", "main.(*Box[go.shape.*internal/x.T]).Get", "[[[", "]]", "", "9", "ü.ö"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, fn string) {
		got := GoEventName(fn)
		if !IsCFuncName(got) || len(got)+len("__retinsn_99") >= probedef.MaxEventNameLen {
			t.Fatalf("GoEventName(%q) = %q", fn, got)
		}
		p, err := ParsePoint(fn + ":3")
		if err == nil {
			GoFunctionPoint(*p)
		}
	})
}
