package spec

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
)

// checkErr verifies err against an expected perf message.
func checkErr(t *testing.T, in string, err error, wantMsg string) {
	t.Helper()
	if err == nil {
		t.Errorf("%q: got no error, want %q", in, wantMsg)
		return
	}
	var se *SyntaxError
	if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
		t.Errorf("%q: got %v (%T), want *SyntaxError", in, err, err)
		return
	}
	if se.Perf != wantMsg {
		t.Errorf("%q: got message %q, want %q", in, se.Perf, wantMsg)
	}
	if wantMsg != "" && err.Error() != wantMsg {
		t.Errorf("%q: Error() = %q, want %q", in, err.Error(), wantMsg)
	}
}

func TestParsePoint(t *testing.T) {
	for _, c := range pointCases {
		got, err := ParsePoint(c.in)
		if c.want == nil {
			checkErr(t, c.in, err, c.err)
			continue
		}
		if err != nil {
			t.Errorf("%q: unexpected error %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", c.in, *got, *c.want)
		}
	}
}

func TestParsePointEmpty(t *testing.T) {
	// parse_perf_probe_point("") succeeds with nothing set; only the command
	// level rejects an empty definition.
	p, err := ParsePoint("")
	if err != nil || !reflect.DeepEqual(*p, Point{}) {
		t.Fatalf("got %+v, %v", p, err)
	}
	// Whitespace is not special for ParsePoint (strtoul skips it).
	p, err = ParsePoint("vfs_read: 5")
	if err != nil || p.Line != 5 {
		t.Fatalf("got %+v, %v", p, err)
	}
	// C strings: everything after a NUL is ignored.
	p, err = ParsePoint("vfs_read:5\x00junk")
	if err != nil || p.Line != 5 {
		t.Fatalf("got %+v, %v", p, err)
	}
}

// TestSDTPoint: an SDT point keeps its arguments, which perf parses and
// ignores, and prints as perf names it in messages ("%EVENT").
func TestSDTPoint(t *testing.T) {
	p, err := ParseProbe(`sdt_python:function__entry foo=%ax`)
	if err != nil || !p.Point.SDT || len(p.Args) != 1 || p.Point.String() != "%function__entry" {
		t.Fatalf("got %+v, %v", p, err)
	}
}

func TestPointString(t *testing.T) {
	cases := []struct{ in, want string }{
		{"vfs_read", "vfs_read"},
		{"vfs_read:5", "vfs_read:5"},
		{"vfs_read:0", "vfs_read"},
		{"vfs_read:010", "vfs_read:8"},
		{"vfs_read:-1", "vfs_read:-1"},
		{"vfs_read+0x10", "vfs_read+16"},
		{"vfs_read+-1", "vfs_read+18446744073709551615"},
		{"vfs_read%return", "vfs_read%return"},
		{"vfs_read%return@k.c", "vfs_read%return@k.c"},
		{"vfs_read@k.c:5", "vfs_read:5@k.c"},
		{"vfs_read;*ret*", "vfs_read"},
		{"vfs_read@k.c;*ret*", "vfs_read@k.c"},
		{"vfs_read@", "vfs_read@"},
		{"k.c:12", "@k.c:12"},
		{"k.c;x", "@k.c"},
		{"e=vfs_read", "vfs_read"},
		{`foo\+bar.c:4`, "@foo+bar.c:4"},
		{"0x10", "0x10"},
		{`\`, ""},
		{"f@/usr/src/linux-6.1/fs/read_write.c", "f@src/linux-6.1/fs/read_write.c"},
		{"f@/usr/src/linux-6.1/fs/very_long_source_name_x.c", "f@fs/very_long_source_name_x.c"},
		{"f@abcdefghijklmnopqrstuvwxyz0123456789.c", "f@ijklmnopqrstuvwxyz0123456789.c"},
		{"f@abcdefghijklmnopqrstuvwxyz0123.c", "f@cdefghijklmnopqrstuvwxyz0123.c"},
		{"f@abcdefghijklmnopqrstuvwxyz0123", "f@abcdefghijklmnopqrstuvwxyz0123"},
		{"/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p.c:3", "@c/d/e/f/g/h/i/j/k/l/m/n/o/p.c:3"},
	}
	for _, c := range cases {
		p, err := ParsePoint(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := p.String(); got != c.want {
			t.Errorf("%q: String() = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseArg(t *testing.T) {
	for _, c := range argCases {
		got, err := ParseArg(c.in)
		if c.want == nil {
			checkErr(t, c.in, err, c.err)
			continue
		}
		if err != nil {
			t.Errorf("%q: unexpected error %v", c.in, err)
			continue
		}
		want := *c.want
		want.Raw = c.in
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("%q:\n got %#v\nwant %#v", c.in, *got, want)
		}
	}
}

func TestArgString(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a", "a"},
		{"$retval", "$retval"},
		{"a:u32", "a:u32"},
		{"a:", "a:"},
		{"n=a", "n=a"},
		{"=a", "=a"},
		{"a->b", "b=a->b"},
		{"file->f_path.dentry:x64", "dentry=file->f_path.dentry:x64"},
		{"r.s->t[2][0x3]", "t=r.s->t[2][0x3]"},
		{"a[1]", "a=a[1]"},
		{"l[1]x>m", "m=l[1]->m"},
		{"a@user", "a"},
		{"x=a->b:string@user", "x=a->b:string"},
		{"a.", "=a."},
		{"+0(%di):u32", "+0(%di):u32"},
	}
	for _, c := range cases {
		a, err := ParseArg(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := a.String(); got != c.want {
			t.Errorf("%q: String() = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseProbe(t *testing.T) {
	for _, c := range probeCases {
		got, err := ParseProbe(c.in)
		if c.want == nil {
			checkErr(t, c.in, err, c.err)
			continue
		}
		if err != nil {
			t.Errorf("%q: unexpected error %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", c.in, *got, *c.want)
		}
	}
}

func TestParseProbeMaxArgs(t *testing.T) {
	p, err := ParseProbe(manyArgs(probedef.MaxTraceArgs, "%ax"))
	if err != nil || len(p.Args) != probedef.MaxTraceArgs {
		t.Fatalf("128 args: %v", err)
	}
	_, err = ParseProbe(manyArgs(probedef.MaxTraceArgs+1, "%ax"))
	checkErr(t, "129 args", err, "Semantic error :Too many probe arguments (129).")
}

func TestProbeString(t *testing.T) {
	cases := []struct{ in, want string }{
		{"vfs_read", "vfs_read"},
		{"vfs_read:5 a", "probe:vfs_read_L5=vfs_read:5 a"},
		{"g:e=vfs_read%return $retval", "g:e=vfs_read%return $retval"},
		{"e=k.c:3 x->y:u8", "probe:e=@k.c:3 y=x->y:u8"},
	}
	for _, c := range cases {
		p, err := ParseProbe(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := p.String(); got != c.want {
			t.Errorf("%q: String() = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseLineRange(t *testing.T) {
	for _, c := range lineCases {
		got, err := ParseLineRange(c.in)
		if c.want == nil {
			checkErr(t, c.in, err, c.err)
			continue
		}
		if err != nil {
			t.Errorf("%q: unexpected error %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", c.in, *got, *c.want)
		}
		if got.End == math.MaxInt32 && !strings.Contains(c.in, ":") && got.Start != 0 {
			t.Errorf("%q: default start must be 0", c.in)
		}
	}
}

func TestLineRangeString(t *testing.T) {
	for _, c := range lineCases {
		if c.want == nil {
			continue
		}
		s := c.want.String()
		got, err := ParseLineRange(s)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q -> %q: got %+v, %v", c.in, s, got, err)
		}
	}
}

func TestIsCFuncName(t *testing.T) {
	cases := map[string]bool{
		"": false, "a": true, "_": true, "_a9": true, "A_b": true, "9a": false, "a-b": false,
		"a.b": false, "a b": false, "\xc0": true, "\xdf": true, "\xd7": false, "\xf7": false,
		"a\xff": true, "a\xa0": false, "a\x80": false, "é": false, "a\x00b": true,
	}
	for in, want := range cases {
		if got := IsCFuncName(in); got != want {
			t.Errorf("IsCFuncName(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestEventName(t *testing.T) {
	cases := []struct {
		base string
		ret  bool
		want string
	}{
		{"vfs_read", false, "vfs_read"},
		{"vfs_read", true, "vfs_read__return"},
		{"do_sys_open.isra.0", false, "do_sys_open"},
		{"foo.constprop.3", true, "foo__return"},
		{"malloc@GLIBC_2.2.5", false, "malloc"},
		{".foo.part.1", false, "foo"},
		{"vfs_read_L5", false, "vfs_read_L5"},
		// Names perf 6.1 refuses as event names: newer perf's rule.
		{"..foo", false, "foo"},
		{"@x", false, "x"},
		{".", false, ""},
		{"ns::Klass::method", false, "ns_Klass_method"},
		{"ns::Klass::method", true, "ns_Klass_method__return"},
		{"std::vector<int, std::allocator<int> >::size", false, "std_vector_int_std_allocator_int_size"},
		{"rs::work::{closure#0}", false, "rs_work_closure_0_"},
		{"__gnu_cxx::__verbose_terminate_handler", false, "gnu_cxx_verbose_terminate_handler"},
		{"~Klass", false, "Klass"},
		{"main.(*Server).poll", false, "main"},
		{"1abc", false, "1abc"},
		// A glob keeps perf 6.1's refusal.
		{"ksys_[rw]*_L2", false, "ksys_[rw]*_L2"},
		{"vfs_*", true, "vfs_*__return"},
	}
	if got := LanguageEventName("ns::f(char*, int[3])"); got != "ns_f_char_int_3_" {
		t.Errorf("LanguageEventName of a signature = %q", got)
	}
	for _, c := range cases {
		if got := EventName(c.base, c.ret); got != c.want {
			t.Errorf("EventName(%q, %v) = %q, want %q", c.base, c.ret, got, c.want)
		}
	}
	if got := probe.Suffixed(EventName("vfs_read.isra.0", false), 3); got != "vfs_read_3" {
		t.Errorf("suffixed name = %q", got)
	}
}

func TestUprobeGroup(t *testing.T) {
	cases := map[string]string{
		"/lib/x86_64-linux-gnu/libc.so.6": "probe_libc",
		"/bin/zsh":                        "probe_zsh",
		"/tmp/spec-exp/lib_x9-foo.so.1":   "probe_lib_x9",
		"/tmp/spec-exp/\xc0\xe9z\xd7q":    "probe_\xc0\xe9z",
		"/usr/lib/":                       "probe_lib",
		"/usr/lib//":                      "probe_lib",
		"a.out":                           "probe_a",
		"":                                "probe_",
		"/":                               "probe_",
		"///":                             "probe_",
		"/x/-y":                           "probe_",
		"/opt/ä":                          "probe_", // perf: "probe_\xc3", cut inside the character
		"/tmp/dä":                         "probe_d",
		"/tmp/d\u65e5x":                   "probe_d", // a three-byte character
		"/tmp/d\U0001F600":                "probe_d", // four bytes
		"/tmp/d\xc3":                      "probe_d", // a lone lead byte at the end
	}
	for in, want := range cases {
		if got := UprobeGroup(in); got != want {
			t.Errorf("UprobeGroup(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStrtoC(t *testing.T) {
	ul := []struct {
		in       string
		val      uint64
		end      int
		overflow bool
	}{
		{"", 0, 0, false},
		{"12", 12, 2, false},
		{" \t12x", 12, 4, false},
		{"0", 0, 1, false},
		{"08", 0, 1, false},
		{"0x", 0, 1, false},
		{"0xg", 0, 1, false},
		{"-0x", 0, 2, false},
		{"0x1F", 31, 4, false},
		{"-1", math.MaxUint64, 2, false},
		{"+7", 7, 2, false},
		{"-", 0, 0, false},
		{" ", 0, 0, false},
		{"18446744073709551615", math.MaxUint64, 20, false},
		{"18446744073709551616", math.MaxUint64, 20, true},
		{"-18446744073709551616", math.MaxUint64, 21, true},
		{"\xa05", 0, 0, false},
	}
	for _, c := range ul {
		v, end, of := strtoulC(c.in)
		if v != c.val || end != c.end || of != c.overflow {
			t.Errorf("strtoul(%q) = %d,%d,%v want %d,%d,%v", c.in, v, end, of, c.val, c.end, c.overflow)
		}
	}
	l := []struct {
		in       string
		val      int64
		end      int
		overflow bool
	}{
		{"9223372036854775807", math.MaxInt64, 19, false},
		{"9223372036854775808", math.MaxInt64, 19, true},
		{"-9223372036854775808", math.MinInt64, 20, false},
		{"-9223372036854775809", math.MinInt64, 20, true},
		{"-0x10", -16, 5, false},
		{"077", 63, 3, false},
	}
	for _, c := range l {
		v, end, of := strtolC(c.in)
		if v != c.val || end != c.end || of != c.overflow {
			t.Errorf("strtol(%q) = %d,%d,%v want %d,%d,%v", c.in, v, end, of, c.val, c.end, c.overflow)
		}
	}
}

func TestStrpbrkEscStrdupEsc(t *testing.T) {
	cases := []struct {
		in   string
		stop string
		want int
	}{
		{"abc", ":", -1},
		{":a", ":", 0},
		{`\:a`, ":", -1},
		{`\::a`, ":", 2},
		{`a\:b`, ":", -1},
		{`a\::b`, ":", 3},
		{`a\\:b`, ":", 3},
		{`a\\\:b`, ":", 4},
		{`a\:\:b`, ":", -1},
		{`a\:\::b`, ":", 5},
		{`\\:`, ":", 2},
	}
	for _, c := range cases {
		if got := strpbrkEsc(c.in, c.stop); got != c.want {
			t.Errorf("strpbrkEsc(%q) = %d, want %d", c.in, got, c.want)
		}
	}
	d := map[string]string{
		``: ``, `abc`: `abc`, `a\b`: `ab`, `a\\b`: `a\b`, `a\\\\b`: `a\\b`, `ab\`: `ab`, `\\\`: `\`, `\:\@`: `:@`,
	}
	for in, want := range d {
		if got := strdupEsc(in); got != want {
			t.Errorf("strdupEsc(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestArgvSplit(t *testing.T) {
	got := argvSplit(" a\tb\n\vc\fd\re\xa0f  ")
	want := []string{"a", "b", "c", "d", "e", "f"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q", got)
	}
	if argvSplit(" \t") != nil {
		t.Errorf("want no words")
	}
}

func TestNoUserAccess(t *testing.T) {
	opts := Options{NoUserAccess: true}
	_, err := ParseArgOpts("a[@user", opts)
	checkErr(t, "a[@user", err, "Semantic error :ftrace does not support user access")
	_, err = ParseProbeOpts("vfs_read %ax x->y:u8@user", opts)
	checkErr(t, "probe", err, UserAccessUnsupportedMsg)
	if _, err := ParseProbeOpts("vfs_read @user a@b@user", opts); err != nil {
		t.Errorf("no @user suffix: %v", err)
	}
}

// TestArgvSplitQuoted: white space inside quotes stays in the word (a
// quoted C++ signature); elsewhere words split as perf's argv_split.
func TestArgvSplitQuoted(t *testing.T) {
	for in, want := range map[string][]string{
		`"ns::K::m(char const*)" s`:  {`"ns::K::m(char const*)"`, "s"},
		`ev='a b'%return  $retval x`: {`ev='a b'%return`, "$retval", "x"},
		`f\" a`:                      {`f\"`, "a"},
		`"open a`:                    {`"open a`},
		" plain  words\t":            {"plain", "words"},
	} {
		if got := argvSplitQuoted(in); !slices.Equal(got, want) {
			t.Errorf("argvSplitQuoted(%q) = %q, want %q", in, got, want)
		}
	}
}
