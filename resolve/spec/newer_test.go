package spec

import (
	"reflect"
	"testing"
)

// newerCase is an input gprobe parses as newer perf (6.14) does, unlike
// perf 6.1: quoted names and FUNC@*. perf61 is what perf 6.1 parses it
// into (TestNewerAgainstPerf61 proves it), nil with perf61Err when 6.1
// rejects it.
type newerCase struct {
	in        string
	want      *Point
	err       string
	perf61    *Point
	perf61Err string
}

var newerCases = []newerCase{
	{in: "vfs_read@*", want: with(fn("vfs_read"), func(*Point) {}),
		perf61: with(fn("vfs_read"), func(p *Point) { p.File = "*"; p.HasFile = true })},
	{in: "vfs_read@*:3", want: with(fn("vfs_read"), func(p *Point) { p.Line = 3 }),
		perf61: with(fn("vfs_read"), func(p *Point) { p.File = "*"; p.HasFile = true; p.Line = 3 })},
	{in: "main.main@*", want: with(fn("main.main"), func(*Point) {}),
		perf61: with(fn("main.main"), func(p *Point) { p.File = "*"; p.HasFile = true })},
	{in: `"ns::Klass::method"`, want: with(fn("ns::Klass::method"), func(*Point) {}),
		perf61Err: "Semantic error :There is non-digit char in line number."},
	{in: `'ns::Klass::method':3`, want: with(fn("ns::Klass::method"), func(p *Point) { p.Line = 3 }),
		perf61Err: "Semantic error :There is non-digit char in line number."},
	{in: `"ns::Klass::method"+8`, want: with(fn("ns::Klass::method"), func(p *Point) { p.Offset = 8 }),
		perf61Err: "Semantic error :There is non-digit char in line number."},
	{in: `"ns::Klass::method"%return`, want: with(fn("ns::Klass::method"), func(p *Point) { p.Return = true }),
		perf61Err: "Semantic error :There is non-digit char in line number."},
	{in: `ev="ns::f<int>"`, want: with(fn("ns::f<int>"), func(p *Point) { p.Event = "ev" }),
		perf61Err: "Semantic error :There is non-digit char in line number."},
	{in: `g:ev="a::b"@x.cc`, want: with(fn("a::b"), func(p *Point) { p.Group, p.Event, p.File, p.HasFile = "g", "ev", "x.cc", true }),
		perf61Err: "Semantic error :There is non-digit char in line number."},
	{in: `"a::b"@"dir/x.cc":4`, want: with(fn("a::b"), func(p *Point) { p.File, p.HasFile, p.Line = "dir/x.cc", true, 4 }),
		perf61Err: "Semantic error :There is non-digit char in line number."},
	{in: `"x+y"`, want: with(fn("x+y"), func(*Point) {}),
		perf61Err: "Semantic error :There is non-digit character in offset."},
	{in: `"a\"b"`, want: with(fn(`a"b`), func(*Point) {}),
		perf61: with(fn(`"a"b"`), func(*Point) {})},
	{in: `"a\b"`, want: with(fn(`a\b`), func(*Point) {}),
		perf61: with(fn(`"ab"`), func(*Point) {})},
	{in: `x"a:b"y`, want: with(fn("xa:by"), func(*Point) {}),
		perf61Err: "Semantic error :There is non-digit char in line number."},
	// A '.' before the ':' makes a file spec, quoted or not (perf's memchr).
	{in: `"main.main":3`, want: &Point{File: "main.main", HasFile: true, Line: 3},
		perf61: &Point{File: `"main.main"`, HasFile: true, Line: 3}},
	{in: `"main.main"@*:3`, want: with(fn("main.main"), func(p *Point) { p.Line = 3 }),
		perf61: with(fn(`"main.main"`), func(p *Point) { p.File = "*"; p.HasFile = true; p.Line = 3 })},
	{in: `"ns::f`, err: `Semantic error :Unclosed quote in '"ns::f'.`,
		perf61Err: "Semantic error :There is non-digit char in line number."},
	{in: `ev="x`, err: `Semantic error :Unclosed quote in '"x'.`,
		perf61: with(fn(`"x`), func(p *Point) { p.Event = "ev" })},
}

func TestNewerPoints(t *testing.T) {
	for _, c := range newerCases {
		got, err := ParsePoint(c.in)
		if c.want == nil {
			checkErr(t, c.in, err, c.err)
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", c.in, *got, *c.want)
		}
	}
}

var newerLineCases = []lineCase{
	{in: "vfs_read@*", want: lrFunc("vfs_read", 0, imax)},
	{in: "vfs_read@*:2-3", want: lrFunc("vfs_read", 2, 3)},
	{in: "@*", err: "Semantic error :Only '@*' is not allowed."},
	{in: `"ns::Klass::smethod"`, want: lrFunc("ns::Klass::smethod", 0, imax)},
	{in: `"ns::Klass::smethod":1-3`, want: lrFunc("ns::Klass::smethod", 1, 3)},
	{in: `"main.main":2`, want: lrFunc("main.main", 2, imax)},
	{in: `"a::b"@x.cc:5`, want: &LineRange{Function: "a::b", HasFunction: true, File: "x.cc", HasFile: true, Start: 5, End: imax}},
	{in: `"a::b"@*`, want: lrFunc("a::b", 0, imax)},
	{in: `"dir/x.cc":3`, want: lrFunc("dir/x.cc", 3, imax)},
	{in: `dir/"x y.cc":3`, want: lrFile("dir/x y.cc", 3, imax)},
	{in: `"@*"`, want: lrFunc("@*", 0, imax)},
	{in: `"a::b":x`, err: "Semantic error :'start line' is not a valid number."},
	{in: `"a::b`, err: `Semantic error :Unclosed quote in '"a::b'.`},
}

func TestNewerLineRanges(t *testing.T) {
	for _, c := range newerLineCases {
		got, err := ParseLineRange(c.in)
		if c.want == nil {
			checkErr(t, c.in, err, c.err)
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", c.in, *got, *c.want)
		}
	}
}

func TestStrpbrkEsq(t *testing.T) {
	for _, c := range []struct {
		in, set string
		want    int
	}{
		{"abc", ":", -1},
		{"a:b", ":", 1},
		{`"a:b":c`, ":", 5},
		{`'a:b':c`, ":", 5},
		{`'a":b':c`, ":", 6},
		{`"a\":b":c`, ":", 7},
		{`a\:b:c`, ":", 4},
		{`"a:b`, ":", -1},
		{`x"y"z`, `"`, 1},
	} {
		if got := strpbrkEsq(c.in, c.set); got != c.want {
			t.Errorf("strpbrkEsq(%q, %q) = %d, want %d", c.in, c.set, got, c.want)
		}
	}
}

func TestStrdupEsq(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{`abc`, "abc", true},
		{`a\:b`, "a:b", true},
		{`"a::b"`, "a::b", true},
		{`'a::b'`, "a::b", true},
		{`"a\b"`, `a\b`, true},
		{`"a\"b"`, `a"b`, true},
		{`'a\'b'`, `a'b`, true},
		{`'a"b'`, `a"b`, true},
		{`x"y"\z`, "xyz", true},
		{`\"a`, `"a`, true},
		{`"a`, "", false},
	} {
		got, ok := strdupEsq(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("strdupEsq(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestNewerAgainstPerf61 proves what perf 6.1 makes of the newer forms:
// the values gprobe documents as differences.
func TestNewerAgainstPerf61(t *testing.T) {
	perf, elf := perfSetup(t)
	for _, c := range newerCases {
		if c.perf61 == nil {
			checkPerfRejects(t, perf, elf, "-D", c.in, c.perf61Err)
			continue
		}
		checkPerfPoint(t, perf, elf, c.in, c.perf61, nil)
	}
}
