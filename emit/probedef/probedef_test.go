package probedef

import (
	"bufio"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/internal/testenv"
)

var testSymbols = map[string]int{"vfs_read": 1, "kernel_clone": 1, "do_exit": 1, "kfree": 1, "name_show": 2}

func testOptions() *Options {
	return &Options{Arch: arch.AMD64, Symbols: func(s string) int { return testSymbols[s] }}
}

// readmeFeatures are the features of testdata/readme/VERSION.txt, the
// tracefs README of a real kernel ("" is the default, Linux 6.1's).
func readmeFeatures(t testing.TB, version string) *Features {
	if version == "" {
		return nil
	}
	b, err := os.ReadFile("testdata/readme/" + version + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	f := ParseFeatures(string(b))
	return &f
}

// syntaxCase is one line of testdata/syntax_errors.txt.
type syntaxCase struct {
	line     string // without the caret
	pos      int    // caret position
	code     string
	existing []*probe.Probe
	readme   string // the kernel whose README features apply ("" = default)
}

// options are the Options a case is checked with: the test kernel's
// symbols, BTF and events, the README features of its section.
func (c syntaxCase) options(t testing.TB) *Options {
	o := testOptions()
	o.Features = readmeFeatures(t, c.readme)
	o.BTF = testBTF
	o.EventFields = testEventFields
	o.Existing = c.existing
	return o
}

func readSyntaxCases(t testing.TB) []syntaxCase {
	f, err := os.Open("testdata/syntax_errors.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []syntaxCase
	var existing []*probe.Probe
	readme := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(l, "readme:"); ok {
			readme, existing = strings.TrimSpace(rest), nil
			continue
		}
		if rest, ok := strings.CutPrefix(l, "existing:"); ok {
			existing = nil
			if rest = strings.TrimSpace(rest); rest != "" {
				d, err := Parse(rest, syntaxCase{readme: readme}.options(t))
				if err != nil {
					t.Fatalf("existing %q: %v", rest, err)
				}
				existing = []*probe.Probe{d}
			}
			continue
		}
		cmd, code, ok := strings.Cut(l, "\t")
		if !ok || strings.Count(cmd, "^") != 1 {
			t.Fatalf("bad case line %q", l)
		}
		pos := strings.IndexByte(cmd, '^')
		out = append(out, syntaxCase{line: strings.Replace(cmd, "^", "", 1), pos: pos, code: code, existing: existing, readme: readme})
	}
	return out
}

// TestSyntaxErrors: every error case of the kernel's ftrace selftests (and
// gprobe's extra ones) is refused with the kernel's error name and caret
// position; the rendered error_log text is kept in a golden file.
func TestSyntaxErrors(t *testing.T) {
	var golden strings.Builder
	for _, c := range readSyntaxCases(t) {
		_, err := Parse(c.line, c.options(t))
		e, ok := err.(*Error)
		if !ok {
			t.Errorf("%q: got %v, want %s at %d", c.line, err, c.code, c.pos)
			continue
		}
		if e.Code != c.code || e.Pos != c.pos {
			t.Errorf("%q: got %s at %d, want %s at %d", c.line, e.Code, e.Pos, c.code, c.pos)
		}
		if e.Text == "" {
			t.Errorf("%q: no message for %s", c.line, e.Code)
		}
		golden.WriteString(e.ErrorLog() + "\n" + e.Error() + "\n\n")
	}
	checkGolden(t, "testdata/syntax_errors.golden", golden.String())
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *testenv.Update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update to rewrite):\n%s", path, diffLines(string(want), got))
	}
}

func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n- " + x + "\n+ " + y
		}
	}
	return ""
}

// TestAccepted: the forms the selftests and perf write must pass, and the
// parsed value must render back to the same line.
func TestAccepted(t *testing.T) {
	lines := []string{
		"p:probe/vfs_read vfs_read+0",
		"p:probe/vfs_read vfs_read+0 count=%dx:x64 name=+0(+40(+24(%di))):string",
		"r:probe/vfs_read__return vfs_read+0 $retval",
		"r16:probe/x vfs_read",
		"p:testprobe kernel_clone $stack $stack0 +0($stack)",
		"p vfs_read %ax @_sdata @0xffffffff82000000 @_sdata+10 @_sdata-10",
		"p vfs_read $stack $stack0 $stack1 $comm",
		"r vfs_read $retval",
		"p vfs_read +0(%ax) -0(%ax) +10($stack) +0($stack1) +10(@_sdata-10) +0(+10(+20($stack)))",
		"p vfs_read varname=%ax %ax:x16 $comm:string +0($stack):string",
		"p:myevent vfs_read path=+0($arg2):ustring path2=+u0($arg2):string",
		"p vfs_read arg1=+0(%di):char arg2=+0(%di):char[4] b=+0(%di):b3@2/8 s=+0(%di):string[2]",
		"p vfs_read%return",
		"p:kprobes/testevent kernel_clone abcd=\\1 e=\\-3 f=\\+4 g=\\\"foo\"",
		"p:probe_prog/work /bin/sh:0x1139 n=%di:s32",
		"p:probe_prog/work /bin/sh:0x0000000000001139 arg1=%ip arg2=%ax",
		"p:uprobes/x /bin/sh:10%return(10)",
		"p /bin/sh:10 @+10 @0x10 +u0(%sp):ustring",
		"p:grp-1/ev /bin/sh:10",
		"p:foo/ vfs_read",
		"p 0xffffffff81000000",
		"p ext4:ext4_sync_fs+4",
	}
	for _, l := range lines {
		d, err := Parse(l, testOptions())
		if err != nil {
			t.Errorf("%q: %v", l, err)
			continue
		}
		if got := d.String(); got != strings.Join(strings.Fields(l), " ") {
			t.Errorf("%q renders as %q", l, got)
		}
	}
	// Deletions are not definitions.
	for _, l := range []string{"-:probe/vfs_read", "-:vfs_read"} {
		if e, ok := err2Error(Parse(l, testOptions())); !ok || e.Code != "DELETE_LINE" {
			t.Errorf("%q: got %v, want DELETE_LINE", l, e)
		}
	}
	// 128 arguments is the limit, not an error.
	var b strings.Builder
	b.WriteString("p vfs_read")
	for i := 1; i <= MaxTraceArgs; i++ {
		b.WriteString(" \\" + strconv.Itoa(i))
	}
	if _, err := Parse(b.String(), testOptions()); err != nil {
		t.Errorf("128 args: %v", err)
	}
}

// TestRegisterNames: %REG takes exactly the names arch.Arch lists for the
// target, and any name on an architecture gprobe does not know.
func TestRegisterNames(t *testing.T) {
	line := func(reg string) string { return "p vfs_read a=%" + reg }
	for _, tc := range []struct {
		arch  arch.Arch
		other arch.Arch
	}{{arch.AMD64, arch.ARM64}, {arch.ARM64, arch.AMD64}} {
		o := testOptions()
		o.Arch = tc.arch
		own := tc.arch.FetchRegisters()
		for _, r := range own {
			if _, err := Parse(line(r), o); err != nil {
				t.Errorf("%v: %%%s: %v", tc.arch, r, err)
			}
		}
		for _, r := range append(tc.other.FetchRegisters(), "x31", "x01", "rax", "") {
			if slices.Contains(own, r) {
				continue
			}
			if e, ok := err2Error(Parse(line(r), o)); !ok || e.Code != "BAD_REG_NAME" {
				t.Errorf("%v: %%%s: got %v, want BAD_REG_NAME", tc.arch, r, e)
			}
		}
	}
	o := testOptions()
	o.Arch = arch.Arch(99)
	if _, err := Parse(line("anything"), o); err != nil {
		t.Errorf("unknown arch: %v", err)
	}
}

func err2Error(_ *probe.Probe, err error) (*Error, bool) {
	e, ok := err.(*Error)
	return e, ok
}

func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		pos  int
		want string
	}{
		{"p vfs_read %none_reg", 11, `X (argument 1 "^%none_reg")`},
		{"p:foo/bar.1 vfs_read", 6, `X (event "p:foo/^bar.1")`},
		{"p /bin/sh:10a", 10, `X (probe place "/bin/sh:^10a")`},
		{"p vfs_read arg1=", 16, `X (argument 1 "arg1=^")`},
		{"p:e vfs_read", 13, `X (after the last argument of "p:e vfs_read")`},
	} {
		if got := Describe(c.cmd, c.pos, "X"); got != c.want {
			t.Errorf("Describe(%q, %d) = %s, want %s", c.cmd, c.pos, got, c.want)
		}
	}
}

// FuzzParse: no input panics, errors carry a position inside (or just past)
// the command, and accepted lines round-trip through String.
func FuzzParse(f *testing.F) {
	for _, c := range readSyntaxCases(f) {
		f.Add(c.line)
	}
	f.Add("p:probe/vfs_read vfs_read+0 count=%dx:x64 name=+0(+40(+24(%di))):string")
	f.Add("r:uprobes/x /bin/sh:10%return(10) a=+u0(%sp):ustring")
	f.Add("f8:probe/vfs_read__return vfs_read%return $retval count=$arg3 f_pos=+112($arg1):s64 name=file->f_path.dentry->d_name.name:string")
	f.Add("t:probe/kfree kfree $arg* site=call_site:symbol")
	f.Add("e:probe/openat syscalls.sys_enter_openat f=+0($filename):ustring if dfd == -100")
	f.Add("u:request u32 id; char[16] tag; __data_loc char[] msg; struct s v 20")
	f.Fuzz(func(t *testing.T, line string) {
		// Each line is read as Linux 6.1 and as Linux 6.12 would.
		for _, o := range []*Options{testOptions(), syntaxCase{readme: "6.12"}.options(t)} {
			o.Stat = RegularFile
			fuzzOne(t, line, o)
		}
	})
}

func fuzzOne(t *testing.T, line string, o *Options) {
	{
		d, err := Parse(line, o)
		if err != nil {
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("%q: %T %v", line, err, err)
			}
			if e.Pos < 0 || e.Pos > len(e.Command)+1 {
				t.Fatalf("%q: position %d outside %q", line, e.Pos, e.Command)
			}
			_ = e.Error()
			return
		}
		again, err := Parse(d.String(), o)
		if err != nil {
			t.Fatalf("%q parsed, but its rendering %q does not: %v", line, d.String(), err)
		}
		if again.String() != d.String() {
			t.Fatalf("%q: %q then %q", line, d.String(), again.String())
		}
	}
}

// TestAccepted612: lines of the kernel's documentation and selftests for
// Linux 6.12's dynamic events pass with that kernel's features, and render
// back to the same line.
func TestAccepted612(t *testing.T) {
	o := syntaxCase{readme: "6.12"}.options(t)
	for _, l := range []string{
		"f:probe/vfs_read vfs_read f_pos=+64($arg1):s64 count=$arg3:u64",
		"f:probe/vfs_read__return vfs_read%return r=$retval count=$arg3",
		"f:probe/vfs_read_btf vfs_read count file->f_pos",
		"f vfs_read $arg*",
		"f kfree%return",
		"f8:g/e vfs_read%return $retval",
		"f vfs_read name=file->f_path.dentry->d_name.name:string",
		"f vfs_read $retval",
		"f vfs_read $arg2:string",
		"t:probe/sched_process_exec sched_process_exec comm=+0($arg1):u64",
		"t kfree $arg*",
		"t kfree call_site:symbol",
		"e:probe/openat syscalls.sys_enter_openat filename=+0($filename):ustring",
		"e:g/e syscalls.sys_enter_openat $filename:ustring if dfd == -100",
		"e syscalls/sys_enter_openat $comm $filename:symstr",
		"r vfs_read $arg1 $retval",
		"p vfs_read%return f_pos=+112($arg1):s64 count",
		"p vfs_read count file->f_pos",
		"p vfs_read +0(%di):%pd",
	} {
		d, err := Parse(l, o)
		if err != nil {
			t.Errorf("%q: %v", l, err)
			continue
		}
		if got := d.String(); got != l {
			t.Errorf("%q renders as %q", l, got)
		}
	}
	// perf rebases a kretprobe on _text when README offers kretprobe
	// offsets: the kernel, not the checker, knows that address is an entry.
	noSyms := syntaxCase{readme: "6.12"}.options(t)
	noSyms.Symbols = nil
	if _, err := Parse("r:probe/vfs_read__return _text+4478080 $retval count=$arg3:x64", noSyms); err != nil {
		t.Errorf("a kretprobe on _text+N: %v", err)
	}
	// 6.1's README offers none of fprobes, tprobes and BTF names: each is
	// refused naming the release that brought it.
	o61 := testOptions()
	o61.Features = readmeFeatures(t, "6.1")
	for l, code := range map[string]string{"f vfs_read": "NO_FPROBES", "t kfree": "NO_TPROBES", "p vfs_read count": "BAD_FETCH_ARG"} {
		if e, ok := err2Error(Parse(l, o61)); !ok || e.Code != code || (code != "BAD_FETCH_ARG" && !strings.Contains(e.Error(), "Linux 6.5")) {
			t.Errorf("%q on 6.1: got %v, want %s", l, e, code)
		}
	}
}

// TestReadmeFeatures: what the tracefs README of real kernels offers.
func TestReadmeFeatures(t *testing.T) {
	f61, f612, f618 := readmeFeatures(t, "6.1"), readmeFeatures(t, "6.12"), readmeFeatures(t, "6.18")
	if f61.modern() || f61.Fprobes || f61.Tprobes || f61.BTFArgs || f61.ReturnArgs || !f61.Eprobes || !f61.EprobeFilter {
		t.Errorf("6.1: %+v", *f61)
	}
	if !f612.modern() || !f612.Fprobes || !f612.Tprobes || !f612.BTFArgs || !f612.BTFFields || !f612.ReturnArgs || !f612.Eprobes ||
		!contains(f612.Types, "char") || !contains(f612.Types, "%pd") {
		t.Errorf("6.12: %+v", *f612)
	}
	// This machine's 6.18 has uprobes and eprobes only, and the 6.5 parser.
	if !f618.modern() || f618.Fprobes || f618.Tprobes || f618.BTFArgs || !f618.ReturnArgs || !f618.Eprobes {
		t.Errorf("6.18: %+v", *f618)
	}
}

// TestUserEvents: u: lines as kernel/trace/trace_events_user.c reads them,
// printed back as dynamic_events lists them.
func TestUserEvents(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"u:test", "u:test"},
		{"u:test u32 count", "u:test u32 count"},
		{"u:test u32 a;u64 b", "u:test u32 a; u64 b"},
		{"u:test  unsigned int a ;  char[16] name; __data_loc char[] msg", "u:test unsigned int a; char[16] name; __data_loc char[] msg"},
		{"u:test struct mytype v 20;s8 x;", "u:test struct mytype v 20; s8 x"},
		{"u:test __rel_loc unsigned char[] raw; unsigned char[0x10] h", "u:test __rel_loc unsigned char[] raw; unsigned char[0x10] h"},
	} {
		p, err := Parse(c.line, nil)
		if err != nil {
			t.Errorf("%q: %v", c.line, err)
			continue
		}
		if p.Kind != probe.UserEvent || p.GroupOrDefault() != "user_events" || p.String() != c.want {
			t.Errorf("%q: kind %v group %s, prints %q, want %q", c.line, p.Kind, p.GroupOrDefault(), p.String(), c.want)
		}
	}
	for _, c := range []struct{ line, code string }{
		{"u:test:BPF u32 a", "USER_FLAGS"},
		{"u:test long a", "BAD_USER_FIELD"},
		{"u:test u32", "BAD_USER_FIELD"},
		{"u:test u32 a 4", "BAD_USER_FIELD"},
		{"u:test struct s v", "BAD_USER_FIELD"},
		{"u:test struct s v 0", "BAD_USER_FIELD"},
		{"u:test char[0] a", "USER_ARRAY_SIZE"},
		{"u:test char[1025] a", "USER_ARRAY_SIZE"},
		{"u:test char[x] a", "BAD_USER_FIELD"},
		{"u:test u32 a; u64 a", "USER_DUP_FIELD"},
		{"u:1test", "BAD_EVENT_NAME"},
		{"u:", "NO_EVENT_NAME"},
	} {
		_, err := Parse(c.line, nil)
		var pe *Error
		if !errors.As(err, &pe) || pe.Code != c.code {
			t.Errorf("%q: got %v, want %s", c.line, err, c.code)
		}
	}
}

// TestRefCtrNeedsReadme: a uprobe's reference counter (an SDT marker's
// semaphore) is read on kernels whose README offers ref_ctr_offset (all
// three kernels of the tests), and refused, at its brace, on one that
// does not (Linux before 4.20, which would read the brace as part of the
// offset).
func TestRefCtrNeedsReadme(t *testing.T) {
	const line = "p:sdt_python/gc__start /bin/sh:0x287f3(0x68326e) arg1=+112(%sp):s32"
	for _, v := range []string{"6.1", "6.12", "6.18"} {
		f := readmeFeatures(t, v)
		if !f.RefCtr {
			t.Errorf("%s: README without ref_ctr_offset", v)
		}
		p, err := Parse(line, &Options{Features: f, NoStat: true})
		if err != nil || !p.Target.HasRefCtr || p.Target.RefCtr != 0x68326e || p.Target.Offset != 0x287f3 || p.String() != line {
			t.Errorf("%s: %+v %v", v, p, err)
		}
	}
	old := *readmeFeatures(t, "6.1")
	old.RefCtr = false
	e, ok := err2Error(Parse(line, &Options{Features: &old, NoStat: true}))
	if !ok || e.Code != "NO_REF_CTR" || e.Pos != strings.Index(line, "(") || !strings.Contains(e.Error(), "4.20") {
		t.Errorf("without ref_ctr_offset: %v", e)
	}
	if _, err := Parse("p /bin/sh:0x10", &Options{Features: &old, NoStat: true}); err != nil {
		t.Errorf("a uprobe without a reference counter: %v", err)
	}
}
