package spec

import "math"

// The case tables below are shared by the unit tests and by the differential
// test against the real perf (TestParseAgainstPerf). Every expectation was
// confirmed with perf 6.1 (`perf probe -v -D` debug output and stderr).

// pointCase: in is given to ParsePoint; without white space it is also a
// complete probe definition for `perf probe -D`.
type pointCase struct {
	in   string
	want *Point // nil when an error is expected
	err  string // exact Error() text
	sdt  bool   // an SDT point: perf resolves it from its cache, not from -v output
}

func fn(name string) Point { return Point{Function: name, HasFunction: true} }

func with(p Point, f func(*Point)) *Point { f(&p); return &p }

// sdtPoint is an SDT point: the function is "%EVENT", as perf sets it.
func sdtPoint(group, event, target string) *Point {
	return &Point{SDT: true, Group: group, Event: event, Function: "%" + event, HasFunction: true,
		Target: target, HasTarget: target != ""}
}

var pointCases = []pointCase{
	// Plain functions, lines, offsets, numbers (strtoul base 0).
	{in: "vfs_read", want: with(fn("vfs_read"), func(p *Point) {})},
	{in: "vfs_read:5", want: with(fn("vfs_read"), func(p *Point) { p.Line = 5 })},
	{in: "vfs_read:0", want: with(fn("vfs_read"), func(p *Point) {})},
	{in: "vfs_read:", want: with(fn("vfs_read"), func(p *Point) {})},
	{in: "vfs_read+", want: with(fn("vfs_read"), func(p *Point) {})},
	{in: "vfs_read:010", want: with(fn("vfs_read"), func(p *Point) { p.Line = 8 })},
	{in: "vfs_read:0x10", want: with(fn("vfs_read"), func(p *Point) { p.Line = 16 })},
	{in: "vfs_read:0X10", want: with(fn("vfs_read"), func(p *Point) { p.Line = 16 })},
	{in: "vfs_read:-1", want: with(fn("vfs_read"), func(p *Point) { p.Line = -1 })},
	{in: "vfs_read:4294967297", want: with(fn("vfs_read"), func(p *Point) { p.Line = 1 })},
	{in: "vfs_read:4294967295", want: with(fn("vfs_read"), func(p *Point) { p.Line = -1 })},
	{in: "vfs_read:2147483648", want: with(fn("vfs_read"), func(p *Point) { p.Line = math.MinInt32 })},
	{in: "vfs_read:4294967296", want: with(fn("vfs_read"), func(p *Point) {})},
	{in: "vfs_read+0x10", want: with(fn("vfs_read"), func(p *Point) { p.Offset = 16 })},
	{in: "vfs_read+010", want: with(fn("vfs_read"), func(p *Point) { p.Offset = 8 })},
	{in: "vfs_read+-1", want: with(fn("vfs_read"), func(p *Point) { p.Offset = math.MaxUint64 })},
	{in: "vfs_read+99999999999999999999999", want: with(fn("vfs_read"), func(p *Point) { p.Offset = math.MaxUint64 })},
	{in: "vfs_read+4@k.c", want: with(fn("vfs_read"), func(p *Point) { p.Offset = 4; p.File = "k.c"; p.HasFile = true })},
	{in: "vfs_read+0:5", want: with(fn("vfs_read"), func(p *Point) { p.Line = 5 })},
	{in: "vfs_read%return", want: with(fn("vfs_read"), func(p *Point) { p.Return = true })},
	{in: "vfs_read%return%return", want: with(fn("vfs_read"), func(p *Point) { p.Return = true })},
	{in: "vfs_read%return@k.c", want: with(fn("vfs_read"), func(p *Point) { p.Return = true; p.File = "k.c"; p.HasFile = true })},
	{in: "vfs_read:0%return", want: with(fn("vfs_read"), func(p *Point) { p.Return = true })},
	// Files.
	{in: "vfs_read@k.c", want: with(fn("vfs_read"), func(p *Point) { p.File = "k.c"; p.HasFile = true })},
	{in: "vfs_read@k.c:5", want: with(fn("vfs_read"), func(p *Point) { p.File = "k.c"; p.HasFile = true; p.Line = 5 })},
	{in: "vfs_read:5@k.c", want: with(fn("vfs_read"), func(p *Point) { p.File = "k.c"; p.HasFile = true; p.Line = 5 })},
	{in: "vfs_read@", want: with(fn("vfs_read"), func(p *Point) { p.HasFile = true })},
	{in: "k.c:12", want: &Point{File: "k.c", HasFile: true, Line: 12}},
	{in: "dir/k.c:12", want: &Point{File: "dir/k.c", HasFile: true, Line: 12}},
	{in: "a.b.c:3", want: &Point{File: "a.b.c", HasFile: true, Line: 3}},
	{in: "k.c;ret*", want: &Point{File: "k.c", HasFile: true, Lazy: "ret*", HasLazy: true}},
	{in: "k.c;", want: &Point{File: "k.c", HasFile: true, HasLazy: true}},
	{in: "k.c:0;x", want: &Point{File: "k.c", HasFile: true, Lazy: "x", HasLazy: true}},
	{in: "@k.c:5", want: &Point{File: "k.c", HasFile: true, Line: 5}},
	{in: "@k.c;x", want: &Point{File: "k.c", HasFile: true, Lazy: "x", HasLazy: true}},
	{in: "a.c", want: with(fn("a.c"), func(p *Point) {})},
	{in: "a.c+4", want: with(fn("a.c"), func(p *Point) { p.Offset = 4 })},
	{in: "a.c%return", want: with(fn("a.c"), func(p *Point) { p.Return = true })},
	{in: "a.c@b.c:3", want: with(fn("a.c"), func(p *Point) { p.File = "b.c"; p.HasFile = true; p.Line = 3 })},
	{in: "k.c:5@x", want: with(fn("k.c"), func(p *Point) { p.File = "x"; p.HasFile = true; p.Line = 5 })},
	{in: "a.b+0:5", want: with(fn("a.b"), func(p *Point) { p.Line = 5 })},
	// Lazy patterns keep everything after ';', escapes included.
	{in: "vfs_read;*ret*:3", want: with(fn("vfs_read"), func(p *Point) { p.Lazy = "*ret*:3"; p.HasLazy = true })},
	{in: "vfs_read;", want: with(fn("vfs_read"), func(p *Point) { p.HasLazy = true })},
	{in: `vfs_read;a\;b\=c`, want: with(fn("vfs_read"), func(p *Point) { p.Lazy = `a\;b\=c`; p.HasLazy = true })},
	{in: "vfs_read;x%return", want: with(fn("vfs_read"), func(p *Point) { p.Lazy = "x%return"; p.HasLazy = true })},
	{in: "vfs_read@k.c;if*", want: with(fn("vfs_read"), func(p *Point) { p.File = "k.c"; p.HasFile = true; p.Lazy = "if*"; p.HasLazy = true })},
	// Escapes.
	{in: `foo\+bar.c:4`, want: &Point{File: "foo+bar.c", HasFile: true, Line: 4}},
	{in: `malloc_get_state\@GLIBC_2.2.5`, want: with(fn("malloc_get_state@GLIBC_2.2.5"), func(p *Point) {})},
	{in: `\:abc`, want: with(fn(":abc"), func(p *Point) {})},
	{in: `a\b`, want: with(fn("ab"), func(p *Point) {})},
	{in: `ab\`, want: with(fn("ab"), func(p *Point) {})},
	{in: `a\\b`, want: with(fn(`a\b`), func(p *Point) {})},
	{in: `\`, want: with(fn(""), func(p *Point) {})},
	{in: `vfs_read\\:5`, want: with(fn(`vfs_read\`), func(p *Point) { p.Line = 5 })},
	{in: `a\:\:b`, want: with(fn("a::b"), func(p *Point) {})},
	{in: `k\.c:5`, want: &Point{File: "k.c", HasFile: true, Line: 5}},
	// Event and group names.
	{in: "e=vfs_read", want: with(fn("vfs_read"), func(p *Point) { p.Event = "e" })},
	{in: "g:e=vfs_read", want: with(fn("vfs_read"), func(p *Point) { p.Group = "g"; p.Event = "e" })},
	{in: "_G9:_e9=vfs_read:5", want: with(fn("vfs_read"), func(p *Point) { p.Group = "_G9"; p.Event = "_e9"; p.Line = 5 })},
	{in: "e=k.c:5", want: &Point{Event: "e", File: "k.c", HasFile: true, Line: 5}},
	{in: `x=f\:g`, want: with(fn("f:g"), func(p *Point) { p.Event = "x" })},
	{in: `e\x=vfs_read`, want: with(fn("vfs_read"), func(p *Point) { p.Event = "ex" })},
	{in: "sdt_x:y=z", want: with(fn("z"), func(p *Point) { p.Group = "sdt_x"; p.Event = "y" })},
	{in: "sdt_x", want: with(fn("sdt_x"), func(p *Point) {})},
	{in: "\xc0\xe9=vfs_read", want: with(fn("vfs_read"), func(p *Point) { p.Event = "\xc0\xe9" })},
	// Absolute addresses.
	{in: "0x10", want: with(fn("0x10"), func(p *Point) { p.Abs = 16; p.IsAbs = true })},
	{in: "0x0", want: with(fn("0x0"), func(p *Point) { p.IsAbs = true })},
	{in: "0x10:5", want: with(fn("0x10"), func(p *Point) { p.Abs = 16; p.IsAbs = true; p.Line = 5 })},
	{in: "e=0xffffffff81000000", want: with(fn("0xffffffff81000000"), func(p *Point) { p.Event = "e"; p.Abs = 0xffffffff81000000; p.IsAbs = true })},
	{in: "0xffffffffffffffffff", want: with(fn("0xffffffffffffffffff"), func(p *Point) { p.Abs = math.MaxUint64; p.IsAbs = true })},
	{in: "0X10", want: with(fn("0X10"), func(p *Point) {})},
	{in: "010", want: with(fn("010"), func(p *Point) {})},
	// Accepted by perf's parser although nothing is probed (perf then fails
	// later; on ";x" perf 6.1 even crashes with SIGSEGV).
	{in: ":1", want: &Point{Line: 1}},
	{in: ";x", want: &Point{Lazy: "x", HasLazy: true}},
	{in: "e=;x", want: &Point{Event: "e", Lazy: "x", HasLazy: true}},

	// Errors.
	{in: "vfs_read:foo", err: "Semantic error :There is non-digit char in line number."},
	{in: "vfs_read:08", err: "Semantic error :There is non-digit char in line number."},
	{in: "vfs_read:0x", err: "Semantic error :There is non-digit char in line number."},
	{in: "vfs_read:1.5", err: "Semantic error :There is non-digit char in line number."},
	{in: "vfs_read:-", err: "Semantic error :There is non-digit char in line number."},
	{in: `vfs_read:\5`, err: "Semantic error :There is non-digit char in line number."},
	{in: `a\::b`, err: "Semantic error :There is non-digit char in line number."},
	{in: `a\\:b`, err: "Semantic error :There is non-digit char in line number."},
	{in: `a\\\:b`, err: "Semantic error :There is non-digit char in line number."},
	{in: "vfs_read+foo", err: "Semantic error :There is non-digit character in offset."},
	{in: "vfs_read+0b101", err: "Semantic error :There is non-digit character in offset."},
	{in: "vfs_read+-0x", err: "Semantic error :There is non-digit character in offset."},
	{in: "0x", err: "Semantic error :Invalid absolute address."},
	{in: "0xg", err: "Semantic error :Invalid absolute address."},
	{in: "0x10g:5", err: "Semantic error :Invalid absolute address."},
	{in: "e=0x1z", err: "Semantic error :Invalid absolute address."},
	{in: "f@@x", err: "Semantic error :SRC@SRC is not allowed."},
	{in: "vfs_read@a@b", err: "Semantic error :SRC@SRC is not allowed."},
	{in: "vfs_read%foo", err: "Semantic error :%foo is not supported."},
	{in: "vfs_read%", err: "Semantic error :% is not supported."},
	{in: "vfs_read%returnx", err: "Semantic error :%returnx is not supported."},
	{in: "vfs_read%return+4", err: "Semantic error :Offset/Line/Lazy pattern can't be used with return probe."},
	{in: "vfs_read:3%return", err: "Semantic error :Offset/Line/Lazy pattern can't be used with return probe."},
	{in: "vfs_read%return;x", err: "Semantic error :Offset/Line/Lazy pattern can't be used with return probe."},
	{in: "vfs_read@k.c;x%return", want: with(fn("vfs_read"), func(p *Point) { p.File = "k.c"; p.HasFile = true; p.Lazy = "x%return"; p.HasLazy = true })},
	{in: "vfs_read:3;x", err: "Semantic error :Lazy pattern can't be used with line number."},
	{in: "vfs_read:3;", err: "Semantic error :Lazy pattern can't be used with line number."},
	{in: "vfs_read+4;x", err: "Semantic error :Lazy pattern can't be used with offset."},
	{in: "vfs_read:3+4", err: "Semantic error :Offset can't be used with line number."},
	{in: "vfs_read+4:3", err: "Semantic error :Offset can't be used with line number."},
	{in: "@k.c:5+4", err: "Semantic error :Offset can't be used with line number."},
	{in: "@k.c", err: "Semantic error :File always requires line number or lazy pattern."},
	{in: "@k.c+4", err: "Semantic error :File always requires line number or lazy pattern."},
	{in: "k.c:0", err: "Semantic error :File always requires line number or lazy pattern."},
	{in: "k.c:", err: "Semantic error :File always requires line number or lazy pattern."},
	{in: "+4", err: "Semantic error :Offset requires an entry function."},
	{in: "@k.c;x+4", want: &Point{File: "k.c", HasFile: true, Lazy: "x+4", HasLazy: true}},
	{in: "g:e:x=vfs_read", err: "Semantic error :e:x is bad for event name -it must follow C symbol-naming rule."},
	{in: "1g:e=vfs_read", err: "Semantic error :1g is bad for event name -it must follow C symbol-naming rule."},
	{in: "g:1e=vfs_read", err: "Semantic error :1e is bad for event name -it must follow C symbol-naming rule."},
	{in: ":e=vfs_read", err: "Semantic error : is bad for event name -it must follow C symbol-naming rule."},
	{in: "=vfs_read", err: "Semantic error : is bad for event name -it must follow C symbol-naming rule."},
	{in: "g:=vfs_read", err: "Semantic error : is bad for event name -it must follow C symbol-naming rule."},
	{in: `g\:e=vfs_read`, err: `Semantic error :g\:e is bad for event name -it must follow C symbol-naming rule.`},
	{in: `e\=x=vfs_read`, err: `Semantic error :e\=x is bad for event name -it must follow C symbol-naming rule.`},
	{in: `g\x:e=vfs_read`, err: `Semantic error :g\x is bad for event name -it must follow C symbol-naming rule.`},
	{in: "e-x=vfs_read", err: "Semantic error :e-x is bad for event name -it must follow C symbol-naming rule."},
	{in: "e.x=vfs_read:foo", err: "Semantic error :e.x is bad for event name -it must follow C symbol-naming rule."},
	{in: "\xd7=vfs_read", err: "Semantic error :\xd7 is bad for event name -it must follow C symbol-naming rule."},
	// SDT.
	{in: "%sdt_x:y+1", err: "Semantic error :sdt_x:y+1 must be an SDT name."},
	{in: "%e=f", err: "Semantic error :e=f must be an SDT name."},
	{in: "sdt_a:b;c", err: "Semantic error :sdt_a:b;c must be an SDT name."},
	{in: "%sdt_x:y", sdt: true, want: sdtPoint("sdt_x", "y", "")},
	{in: "sdt_x:y", sdt: true, want: sdtPoint("sdt_x", "y", "")},
	{in: "%y", sdt: true, want: sdtPoint("", "y", "")},
	{in: "%x:y@/bin/ls", sdt: true, want: sdtPoint("x", "y", "/bin/ls")},
	{in: `%sdt_libc:setjmp@/lib/x\+y.so`, sdt: true, want: sdtPoint("sdt_libc", "setjmp", "/lib/x+y.so")},
	{in: "sdt_py*:gc__*", sdt: true, want: sdtPoint("sdt_py*", "gc__*", "")},
	{in: "%", sdt: true, want: sdtPoint("", "", "")},
}

// argCase: in is one argument; perf is run on "vfs_read <in>".
type argCase struct {
	in   string
	want *Arg
	err  string
}

var argCases = []argCase{
	{in: "a", want: &Arg{Var: "a"}},
	{in: "$retval", want: &Arg{Var: "$retval"}},
	{in: "$vars", want: &Arg{Var: "$vars"}},
	{in: "$params", want: &Arg{Var: "$params"}},
	{in: "%ax", want: &Arg{Var: "%ax"}},
	{in: "@sym", want: &Arg{Var: "@sym"}},
	{in: "+0(%di):u32", want: &Arg{Var: "+0(%di)", Type: "u32", HasType: true}},
	{in: "-8(%sp):s64", want: &Arg{Var: "-8(%sp)", Type: "s64", HasType: true}},
	{in: "9a.b", want: &Arg{Var: "9a.b"}},
	{in: "\xd7.x", want: &Arg{Var: "\xd7.x"}},
	{in: "filename:string", want: &Arg{Var: "filename", Type: "string", HasType: true}},
	{in: "x:y:z", want: &Arg{Var: "x", Type: "y:z", HasType: true}},
	{in: "e:", want: &Arg{Var: "e", HasType: true}},
	{in: "f=%ax:x32", want: &Arg{Name: "f", HasName: true, Var: "%ax", Type: "x32", HasType: true}},
	{in: "a=b=c", want: &Arg{Name: "a", HasName: true, Var: "b=c"}},
	{in: "a:b=c", want: &Arg{Name: "a:b", HasName: true, Var: "c"}},
	{in: "=c", want: &Arg{HasName: true, Var: "c"}},
	{in: "d=", want: &Arg{Name: "d", HasName: true}},
	{in: "a@user", want: &Arg{Var: "a", User: true}},
	{in: "a:u32@user", want: &Arg{Var: "a", Type: "u32", HasType: true, User: true}},
	{in: "a->b@user", want: &Arg{Name: "b", HasName: true, Var: "a", Fields: []Field{{Name: "b", Ref: true}}, User: true}},
	{in: "@user", want: &Arg{Var: "@user"}},
	{in: "a@b@user", want: &Arg{Var: "a@b@user"}},
	{in: "xx@user:u8", want: &Arg{Var: "xx@user", Type: "u8", HasType: true}},
	{in: "s@user.x", want: &Arg{Name: "x", HasName: true, Var: "s@user", Fields: []Field{{Name: "x"}}}},
	{in: "_a.b", want: &Arg{Name: "b", HasName: true, Var: "_a", Fields: []Field{{Name: "b"}}}},
	{in: "a.", want: &Arg{HasName: true, Var: "a", Fields: []Field{{}}}},
	{in: "b->", want: &Arg{HasName: true, Var: "b", Fields: []Field{{Ref: true}}}},
	{in: "a..b", want: &Arg{Name: "b", HasName: true, Var: "a", Fields: []Field{{}, {Name: "b"}}}},
	{in: "file->f_path.dentry", want: &Arg{Name: "dentry", HasName: true, Var: "file",
		Fields: []Field{{Name: "f_path", Ref: true}, {Name: "dentry"}}}},
	{in: "r.s->t[2][3]", want: &Arg{Name: "t", HasName: true, Var: "r", Fields: []Field{
		{Name: "s"}, {Name: "t", Ref: true}, {Name: "[2]", Index: 2, IsIndex: true, Ref: true}, {Name: "[3]", Index: 3, IsIndex: true, Ref: true}}}},
	{in: "a[1]", want: &Arg{Name: "a", HasName: true, Var: "a", Fields: []Field{{Name: "[1]", Index: 1, IsIndex: true, Ref: true}}}},
	{in: "i[0x10]", want: &Arg{Name: "i", HasName: true, Var: "i", Fields: []Field{{Name: "[0x10]", Index: 16, IsIndex: true, Ref: true}}}},
	{in: "i[010]", want: &Arg{Name: "i", HasName: true, Var: "i", Fields: []Field{{Name: "[010]", Index: 8, IsIndex: true, Ref: true}}}},
	{in: "i[-1]", want: &Arg{Name: "i", HasName: true, Var: "i", Fields: []Field{{Name: "[-1]", Index: -1, IsIndex: true, Ref: true}}}},
	{in: "a[9999999999999999999999]", want: &Arg{Name: "a", HasName: true, Var: "a", Fields: []Field{
		{Name: "[9999999999999999999999]", Index: math.MaxInt64, IsIndex: true, Ref: true}}}},
	{in: "n=a[1]", want: &Arg{Name: "n", HasName: true, Var: "a", Fields: []Field{{Name: "[1]", Index: 1, IsIndex: true, Ref: true}}}},
	{in: "a.b[1]:u8", want: &Arg{Name: "b", HasName: true, Var: "a", Type: "u8", HasType: true, Fields: []Field{
		{Name: "b"}, {Name: "[1]", Index: 1, IsIndex: true, Ref: true}}}},
	{in: "l[1]x>m", want: &Arg{Name: "m", HasName: true, Var: "l", Fields: []Field{
		{Name: "[1]", Index: 1, IsIndex: true, Ref: true}, {Name: "m", Ref: true}}}},
	{in: "a[1].", want: &Arg{HasName: true, Var: "a", Fields: []Field{{Name: "[1]", Index: 1, IsIndex: true, Ref: true}, {}}}},
	{in: "a.[1]", want: &Arg{Name: "a", HasName: true, Var: "a", Fields: []Field{{}, {Name: "[1]", Index: 1, IsIndex: true, Ref: true}}}},
	{in: "a->b>c", want: &Arg{Name: "b>c", HasName: true, Var: "a", Fields: []Field{{Name: "b>c", Ref: true}}}},
	{in: "é.x", want: &Arg{Name: "x", HasName: true, Var: "é", Fields: []Field{{Name: "x"}}}},
	// Errors.
	{in: "f[", err: "Semantic error :Array index must be a number."},
	{in: "g[]", err: "Semantic error :Array index must be a number."},
	{in: "h[1", err: "Semantic error :Array index must be a number."},
	{in: "h[1)", err: "Semantic error :Array index must be a number."},
	{in: "h[x]", err: "Semantic error :Array index must be a number."},
	{in: "h[0x]", err: "Semantic error :Array index must be a number."},
	{in: "a.b[", err: "Semantic error :Array index must be a number."},
	{in: "j[-1]k", err: "Semantic error :Argument parse error: [-1]k"},
	{in: "n[1]xy", err: "Semantic error :Argument parse error: [1]xy"},
	{in: "a[1]-", err: "Semantic error :Argument parse error: [1]-"},
	{in: "o-p", err: "Semantic error :Argument parse error: o-p"},
	{in: "q-", err: "Semantic error :Argument parse error: q-"},
	{in: "a-->b", err: "Semantic error :Argument parse error: a-->b"},
	{in: "a.b-c", err: "Semantic error :Argument parse error: b-c"},
	{in: "n=a->b-c:u8", err: "Semantic error :Argument parse error: b-c"},
}

// probeCase: in is a whole probe definition for ParseProbe / `perf probe -D`.
type probeCase struct {
	in   string
	want *Probe
	err  string
	sdt  bool
}

func manyArgs(n int, a string) string {
	s := "vfs_read"
	for i := 0; i < n; i++ {
		s += " " + a
	}
	return s
}

var probeCases = []probeCase{
	{in: "vfs_read", want: &Probe{Point: fn("vfs_read"), Args: []Arg{}}},
	{in: "vfs_read:5", want: &Probe{Point: *with(fn("vfs_read"), func(p *Point) { p.Line = 5; p.Event = "vfs_read_L5" }), Args: []Arg{}}},
	{in: "vfs_read:0x7", want: &Probe{Point: *with(fn("vfs_read"), func(p *Point) { p.Line = 7; p.Event = "vfs_read_L7" }), Args: []Arg{}}},
	{in: "vfs_read:-1", want: &Probe{Point: *with(fn("vfs_read"), func(p *Point) { p.Line = -1; p.Event = "vfs_read_L-1" }), Args: []Arg{}}},
	{in: "vfs_read+0:5", want: &Probe{Point: *with(fn("vfs_read"), func(p *Point) { p.Line = 5; p.Event = "vfs_read_L5" }), Args: []Arg{}}},
	{in: "vfs_read@k.c:5 a b", want: &Probe{Point: *with(fn("vfs_read"), func(p *Point) {
		p.Line = 5
		p.File = "k.c"
		p.HasFile = true
		p.Event = "vfs_read_L5"
	}), Args: []Arg{{Var: "a", Raw: "a"}, {Var: "b", Raw: "b"}}}},
	{in: "e=vfs_read:5", want: &Probe{Point: *with(fn("vfs_read"), func(p *Point) { p.Line = 5; p.Event = "e" }), Args: []Arg{}, UserEvent: true}},
	{in: "g:e=vfs_read", want: &Probe{Point: *with(fn("vfs_read"), func(p *Point) { p.Group = "g"; p.Event = "e" }), Args: []Arg{}, UserEvent: true}},
	{in: "k.c:12", want: &Probe{Point: Point{File: "k.c", HasFile: true, Line: 12}, Args: []Arg{}}},
	{in: "0x10:5", want: &Probe{Point: *with(fn("0x10"), func(p *Point) {
		p.Abs = 16
		p.IsAbs = true
		p.Line = 5
		p.Event = "0x10_L5"
	}), Args: []Arg{}}},
	{in: `\:x:5`, want: &Probe{Point: *with(fn(":x"), func(p *Point) { p.Line = 5; p.Event = ":x_L5" }), Args: []Arg{}}},
	{in: "  vfs_read%return \t$retval  %ax\v@sym\xa0+0(%di) ", want: &Probe{Point: *with(fn("vfs_read"), func(p *Point) { p.Return = true }), Args: []Arg{
		{Var: "$retval", Raw: "$retval"}, {Var: "%ax", Raw: "%ax"}, {Var: "@sym", Raw: "@sym"}, {Var: "+0(%di)", Raw: "+0(%di)"}}}},
	{in: "do_sys_open:7 fn=filename:string dfd", want: &Probe{Point: *with(fn("do_sys_open"), func(p *Point) {
		p.Line = 7
		p.Event = "do_sys_open_L7"
	}), Args: []Arg{{Name: "fn", HasName: true, Var: "filename", Type: "string", HasType: true, Raw: "fn=filename:string"}, {Var: "dfd", Raw: "dfd"}}}},
	// Errors.
	{in: "", err: ""},
	{in: " \t ", err: ""},
	{in: manyArgs(129, "%ax"), err: "Semantic error :Too many probe arguments (129)."},
	{in: "vfs_read:x" + manyArgs(129, "a")[len("vfs_read"):], err: "Semantic error :Too many probe arguments (129)."},
	{in: "vfs_read%return a", err: "Semantic error :You can't specify local variable for kretprobe."},
	{in: "vfs_read%return b=_x", err: "Semantic error :You can't specify local variable for kretprobe."},
	{in: "vfs_read%return c=é", err: "Semantic error :You can't specify local variable for kretprobe."},
	{in: "vfs_read%return a->b", err: "Semantic error :You can't specify local variable for kretprobe."},
	{in: "vfs_read%return $retval a[", err: "Semantic error :Array index must be a number."},
	{in: "vfs_read a[ b-", err: "Semantic error :Array index must be a number."},
	{in: "vfs_read:x a[", err: "Semantic error :There is non-digit char in line number."},
	{in: "%sdt_x:y a[", err: "Semantic error :Array index must be a number."},
	{in: "%sdt_x:y+1 a[", err: "Semantic error :sdt_x:y+1 must be an SDT name."},
	{in: "%sdt_x:y a", sdt: true, want: &Probe{Point: *sdtPoint("sdt_x", "y", ""), Args: []Arg{{Var: "a", Raw: "a"}}, UserEvent: true}},
	{in: "sdt_x:y", sdt: true, want: &Probe{Point: *sdtPoint("sdt_x", "y", ""), Args: []Arg{}, UserEvent: true}},
}

// lineCase: in is a -L argument.
type lineCase struct {
	in   string
	want *LineRange
	err  string
}

func lrFunc(f string, s, e int) *LineRange {
	return &LineRange{Function: f, HasFunction: true, Start: s, End: e}
}

func lrFile(f string, s, e int) *LineRange {
	return &LineRange{File: f, HasFile: true, Start: s, End: e}
}

const imax = math.MaxInt32

var lineCases = []lineCase{
	{in: "vfs_read", want: lrFunc("vfs_read", 0, imax)},
	{in: "vfs_read:10", want: lrFunc("vfs_read", 10, imax)},
	{in: "vfs_read:0-10", want: lrFunc("vfs_read", 0, 10)},
	{in: "vfs_read:2+10", want: lrFunc("vfs_read", 2, 11)},
	{in: "vfs_read:1+1", want: lrFunc("vfs_read", 1, 1)},
	{in: "vfs_read:+5", want: lrFunc("vfs_read", 5, imax)},
	{in: "vfs_read:-5", want: lrFunc("vfs_read", -5, imax)},
	{in: "vfs_read:-5--3", want: lrFunc("vfs_read", -5, -3)},
	{in: "vfs_read: 5", want: lrFunc("vfs_read", 5, imax)},
	{in: "vfs_read:\t\n5", want: lrFunc("vfs_read", 5, imax)},
	{in: "vfs_read:010", want: lrFunc("vfs_read", 8, imax)},
	{in: "vfs_read:0x10-0x20", want: lrFunc("vfs_read", 16, 32)},
	{in: "vfs_read:4294967297", want: lrFunc("vfs_read", 1, imax)},
	{in: "vfs_read:9223372036854775807", want: lrFunc("vfs_read", -1, imax)},
	{in: "vfs_read:-9223372036854775808", want: lrFunc("vfs_read", 0, imax)},
	{in: "vfs_read:-2147483649", want: lrFunc("vfs_read", imax, imax)},
	{in: "vfs_read:1+2147483647", want: lrFunc("vfs_read", 1, imax)},
	{in: "vfs_read:5--4294967291", want: lrFunc("vfs_read", 5, 5)},
	{in: "vfs_read@k.c", want: &LineRange{Function: "vfs_read", HasFunction: true, File: "k.c", HasFile: true, End: imax}},
	{in: "vfs_read@k.c:1-2", want: &LineRange{Function: "vfs_read", HasFunction: true, File: "k.c", HasFile: true, Start: 1, End: 2}},
	{in: "vfs_read@", want: &LineRange{Function: "vfs_read", HasFunction: true, HasFile: true, End: imax}},
	{in: "@k.c", want: &LineRange{HasFunction: true, File: "k.c", HasFile: true, End: imax}},
	{in: "a b@c", want: &LineRange{Function: "a b", HasFunction: true, File: "c", HasFile: true, End: imax}},
	{in: `vfs\@x`, want: &LineRange{Function: `vfs\`, HasFunction: true, File: "x", HasFile: true, End: imax}},
	{in: "f@a@b", want: &LineRange{Function: "f", HasFunction: true, File: "a@b", HasFile: true, End: imax}},
	{in: "k.c", want: lrFile("k.c", 0, imax)},
	{in: "k.c:1", want: lrFile("k.c", 1, imax)},
	{in: "k.c:1+1", want: lrFile("k.c", 1, 1)},
	{in: "k.c:1-10", want: lrFile("k.c", 1, 10)},
	{in: "x/y", want: lrFile("x/y", 0, imax)},
	{in: "/tmp/exp/k.c:3", want: lrFile("/tmp/exp/k.c", 3, imax)},
	{in: "a b.c", want: lrFile("a b.c", 0, imax)},
	{in: "_x9", want: lrFunc("_x9", 0, imax)},
	{in: "\xc0x", want: lrFunc("\xc0x", 0, imax)},
	// Errors.
	{in: "vfs_read:foo", err: "Semantic error :'start line' is not a valid number."},
	{in: "vfs_read:", err: "Semantic error :'start line' is not a valid number."},
	{in: "vfs_read:-", err: "Semantic error :'start line' is not a valid number."},
	{in: "vfs_read:\xa05", err: "Semantic error :'start line' is not a valid number."},
	{in: "vfs_read:99999999999999999999", err: "Semantic error :'start line' is not a valid number."},
	{in: "vfs_read:9223372036854775808", err: "Semantic error :'start line' is not a valid number."},
	{in: "vfs_read:1-foo", err: "Semantic error :'end line' is not a valid number."},
	{in: "vfs_read:1+foo", err: "Semantic error :'end line' is not a valid number."},
	{in: "vfs_read:5+", err: "Semantic error :'end line' is not a valid number."},
	{in: "vfs_read:1-99999999999999999999", err: "Semantic error :'end line' is not a valid number."},
	{in: "vfs_read:3-1", err: "Semantic error :Start line must be smaller than end line."},
	{in: "vfs_read:1+0", err: "Semantic error :Start line must be smaller than end line."},
	{in: "vfs_read:1+-3", err: "Semantic error :Start line must be smaller than end line."},
	{in: "vfs_read:2+2147483647", err: "Semantic error :Start line must be smaller than end line."},
	{in: "vfs_read:3-1x", err: "Semantic error :Start line must be smaller than end line."},
	{in: "vfs_read:2x", err: "Semantic error :Tailing with invalid str 'x'."},
	{in: "vfs_read:0x", err: "Semantic error :Tailing with invalid str 'x'."},
	{in: "vfs_read:0b11", err: "Semantic error :Tailing with invalid str 'b11'."},
	{in: "vfs_read:5 ", err: "Semantic error :Tailing with invalid str ' '."},
	{in: "vfs_read:1-2@k.c", err: "Semantic error :Tailing with invalid str '@k.c'."},
	{in: "vfs_read:1:2", err: "Semantic error :Tailing with invalid str ':2'."},
	{in: "vfs_read;lazy", err: "Semantic error :'vfs_read;lazy' is not a valid function name."},
	{in: `func;lazy\*pattern`, err: `Semantic error :'func;lazy\*pattern' is not a valid function name.`},
	{in: "1abc", err: "Semantic error :'1abc' is not a valid function name."},
	{in: "", err: "Semantic error :'' is not a valid function name."},
	{in: ":5", err: "Semantic error :'' is not a valid function name."},
	{in: "a b", err: "Semantic error :'a b' is not a valid function name."},
	{in: "vfs_read%return", err: "Semantic error :'vfs_read%return' is not a valid function name."},
	{in: "\xd7x", err: "Semantic error :'\xd7x' is not a valid function name."},
}
