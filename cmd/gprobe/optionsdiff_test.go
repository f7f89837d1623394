package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/perfprobe"
	"github.com/gprobe/gprobe/internal/testenv"
)

// The option errors and exit statuses of perf probe 6.1 (builtin-probe.c
// and tools/lib/subcmd/parse-options.c), asked of perf and of gprobe.
// Answers must be the same byte for byte, with perf's usage read for
// gprobe (sameUsage): "perf probe" is "gprobe" there, gprobe's usage has a
// line for its commands, and its option list has gprobe's options where
// perf's has perf's (each option both have is printed the same).

// optionBlock is one option's help in perf's usage: its first line names
// it ("    -k, --vmlinux <file>  ...", "        --max-probes <n> ...").
var optionBlock = regexp.MustCompile(`^    (?:-\S, |    )--([\w-]+)`)

// usageBlocks splits stderr into its option help blocks, by long name
// ("" for text outside any), in order.
func usageBlocks(s string) (names, blocks []string) {
	in := false
	for _, l := range strings.SplitAfter(s, "\n") {
		if m := optionBlock.FindStringSubmatch(l); m != nil {
			names, blocks = append(names, m[1]), append(blocks, l)
			in = true
			continue
		}
		// An option's help goes on below its names, indented.
		if in && (strings.HasPrefix(l, "                ") || strings.HasPrefix(l, "\t")) {
			blocks[len(blocks)-1] += l
			continue
		}
		in = false
		names, blocks = append(names, ""), append(blocks, l)
	}
	return names, blocks
}

// sameUsage compares perf's stderr p with gprobe's g as described above;
// gprobe's "Did you mean" line (its suggestion for an unknown option) is
// not perf's.
func sameUsage(p, g string) bool {
	p = strings.ReplaceAll(p, "perf probe", "gprobe")
	ours := map[string]bool{}
	for _, o := range newApp(nil, nil).perfOptions(nil).Options {
		ours[o.Long] = true
	}
	keep := func(s string, have func(string) bool) string {
		var b strings.Builder
		names, blocks := usageBlocks(s)
		for i, n := range names {
			if strings.HasPrefix(blocks[i], "    or: gprobe COMMAND") || strings.HasPrefix(blocks[i], "  Did you mean --") {
				continue
			}
			if n == "" || have(n) {
				b.WriteString(blocks[i])
			}
		}
		return b.String()
	}
	return keep(p, func(n string) bool { return ours[n] }) == keep(g, func(n string) bool { return perfprobe.IsPerfOption(n) })
}

// TestPerfDiffOptionErrors: every option error and exit status of perf
// probe's command line, asked of both.
func TestPerfDiffOptionErrors(t *testing.T) {
	perf := testenv.RequirePerf(t)
	fx := fixture
	bin := testenv.BuildC(t, "gcc", "testdata/uprobe/prog.c", "optprog", "-O2", "-g")
	args129 := []string{"-k", fx, "-D", "vfs_read"}
	for i := 0; i < 129; i++ {
		args129[3] += fmt.Sprintf(" a%d", i)
	}
	many := []string{"-k", fx}
	for i := 0; i < perfprobe.MaxProbes; i++ {
		many = append(many, "-D", "vfs_read")
	}
	cases := [][]string{
		{},
		{"-k", fx},
		{"-k", fx, "-D", "vfs_read", "vfs_write"}, // -D X Y: Y is not dropped
		{"-k", fx, "-L", "vfs_read", "x"},
		{"-k", fx, "-l", "probe:x", "extra"},
		{"-k", fx, "-D", "vfs_read", "-"},
		{"-"},
		{"-q", "-v", "-k", fx, "-D", "vfs_read"},
		{"-v", "-q", "-k", fx, "-L", "vfs_read"},
		{"-l", "-x", bin},
		{"-x", bin, "-l"},
		{"-k", fx, "-V", "vfs_read", "-D", "vfs_read"},
		{"-k", fx, "-L", "vfs_read", "-F"},
		{"-k", fx, "-F", "-L", "vfs_read"},
		{"--vars=x", "--definition", "y"},
		{"-k", fx, "-a", "vfs_read", "-D", "x"},
		{"-d", "x", "-l"},
		{"-k", fx, "--max-probes=1", "-D", "vfs_*"},
		{"-k", fx, "--max-probes=1", "-D", "vfs_*%return"},
		{"-k", fx, "--max-probes=1", "-D", "vfs_* $params"},
		{"-k", fx, "--max-probes=1", "-V", "vfs_*"},
		{"-k", fx, "--max-probes", "x", "vfs_read"},
		{"-k", fx, "--max-probes=2x", "-D", "vfs_read"},
		{"-x", "ls", "-D", "main"}, // no ls here
		{"-x", "/nonexistent/prog", "-F"},
		{"-m", "/nonexistent/mod.ko", "-F"},
		{"-k", "/nonexistent", "-D", "vfs_read"},
		{"-k", "/nonexistent", "-L", "vfs_read"},
		{"-k", fx, "-D", "vfs_read", "-x", bin},
		{"-x", bin, "-k", fx, "-D", "main", "-m", "/nonexistent"},
		{"--bogus"},
		{"-Z"},
		{"-nZ"},
		{"--vmlinx", "x"},
		{"-force"},
		{"-verbose"},
		{"--li", "x"},
		{"--force=1", "-D", "x"},
		{"--no-vmlinux=x"},
		{"-L"},
		{"-k"},
		{"-d"},
		{"--definition"},
		{"-k", fx, "-F", "--filter=("},
		{"-k", fx, "-F", "a|"},
		{"-k", fx, "--funcs=vfs_rea*", "--filter=*_readv"},
		{"-k", fx, "-F", "vfs_*", "--filter", "do_*"},
		{"-k", fx, "--filter", "do_*", "-F"},
		{"-k", fx, "-F", "--filter", "!*"},
		{"-k", fx, "-Fvfs_*"},
		{"-k", fx, "-D", "vfs_read:x"},
		{"-k", fx, "-Dvfs_read:x"},
		{"-k", fx, "-nDvfs_read:x"},
		{"-k", fx, "--defin", "vfs_read:x"},
		{"-k", fx, "-V", "vfs_read file"},
		{"-k", fx, "-L", "vfs_read:3-1"},
		{"-k", fx, "-L", "vfs_read:1-2", "-L", "vfs_write"},
		{"-k", fx, "vfs_read:x"},
		{"-q", "-k", fx, "vfs_read:x"},
		{"-k", fx, "vfs_read%foo"},
		args129,
		many,
		{"-k", fx, "-D", "vfs_read", "--", "vfs_write"},
		{"-x", bin, "--bootconfig", "-D", "main"},
		{bin},                      // set_target: the path names the target, no definition follows
		{"-k", fx, "-D", "x", bin}, // another command except --add
	}
	same := 0
	for _, args := range cases {
		p, g := perf.Probe(args...), runGprobe(args...)
		if p.Code != g.Code || p.Stdout != g.Stdout || !sameUsage(p.Stderr, g.Stderr) {
			t.Errorf("%q:\nperf:   %s\ngprobe: %s", args, p, g)
			continue
		}
		same++
	}
	t.Logf("%d of %d command lines answered as perf answers them", same, len(cases))
}

// TestPerfDiffDryRunAdd: -a X Y adds both (Y is a definition of its
// own), as perf's dry run shows them.
func TestPerfDiffDryRunAdd(t *testing.T) {
	perf := testenv.RequirePerf(t)
	testenv.Tracefs(t)
	bin := testenv.BuildC(t, "gcc", "testdata/uprobe/prog.c", "optprog", "-O2", "-g")
	for _, args := range [][]string{
		{"-x", bin, "-n", "-a", "work", "add_item"},
		{"-x", bin, "-n", "-a", "work", "-a", "add_item", "walk"},
		{"-n", "-x", bin, "work", "n"},
	} {
		if p, g := perf.Live(args...), runGprobe(args...); p != g {
			t.Errorf("%q:\nperf:   %s\ngprobe: %s", args, p, g)
		}
	}
}

// TestOneTarget: perf probes each definition in the target given before
// it; gprobe takes one target per command and says so.
func TestOneTarget(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := runGprobe("-x", a, "-D", "main", "-x", b, "-D", "main")
	want := "  Error: gprobe takes one -x/-m target per command (" + a + ", then " + b + "): run it once per target.\n"
	if r.Code != exitEINVAL || r.Stderr != want {
		t.Errorf("%s\nwant status %d and %q", r, exitEINVAL, want)
	}
	if r := runGprobe("-x", a, "-D", "main", "-x", a, "-D", "main"); strings.Contains(r.Stderr, "one -x/-m target") {
		t.Errorf("the same target twice: %s", r)
	}
}

// TestPerfDiffVersionedSymbols: a versioned symbol of libc (found through
// the symbol table, then mapped back to the DWARF of an assembly function
// that has no declaration line) and GNU indirect functions, with libc's
// separate debug information (Debian's libc6-dbg).
func TestPerfDiffVersionedSymbols(t *testing.T) {
	perf := testenv.RequirePerf(t)
	libc := "/usr/lib/x86_64-linux-gnu/libc.so.6"
	if _, err := os.Stat(libc); err != nil {
		testenv.Missing(t, "%v", err)
	}
	for _, args := range [][]string{
		{"-x", libc, "-D", `memcpy\@GLIBC_2.2.5`},
		{"-x", libc, "-D", `memcpy\@GLIBC_2.2.5+3`}, // an instruction's start (+4 is inside one: gprobe refuses it)
		{"-x", libc, "-D", `memcpy\@GLIBC_2.2.5%return`},
		{"-x", libc, "-V", `memcpy\@GLIBC_2.2.5`},
		{"-x", libc, "-D", `memmove\@GLIBC_2.2.5`},
		{"-x", libc, "-D", `malloc\@GLIBC_2.2.5`},
		{"-x", libc, "-D", `memcpy@GLIBC_2.2.5`},
		{"-x", libc, "-D", "memcpy"},
		{"-x", libc, "-D", "strlen"},
		{"-x", libc, "-V", "strlen"},
		{"-x", libc, "-D", "memcpy%return"},
	} {
		if p, g := perf.Probe(args...), runGprobe(args...); p != g {
			t.Errorf("%q:\nperf:   %s\ngprobe: %s", args, p, g)
		}
	}
	// perf writes a probe inside an instruction; gprobe refuses it.
	if g := runGprobe("-x", libc, "-D", `memcpy\@GLIBC_2.2.5+4`); g.Code != exitEINVAL || !strings.Contains(g.Stderr, "is not an instruction boundary") {
		t.Errorf("+4, inside an instruction: %s", g)
	}
}

// TestPerfDiffVerbose: what -v prints is what perf -v prints of the same
// lookups: every line gprobe prints is one of perf's, in perf's order (perf
// prints more: its symbol maps, the files it opens), and the lookups that
// matter are there (the definition parsed, the image, the search, its
// result, the error's reason).
func TestPerfDiffVerbose(t *testing.T) {
	perf := testenv.RequirePerf(t)
	bin := testenv.BuildC(t, "gcc", "testdata/uprobe/prog.c", "optprog", "-O2", "-g")
	cases := []struct {
		args []string
		must []string // lines gprobe must print
	}{
		{[]string{"-v", "-k", fixture, "-D", "vfs_read"}, []string{"probe-definition(0): vfs_read", "0 arguments", "Use vmlinux: " + fixture,
			"Open Debuginfo file: " + fixture, "Try to find probe point from debuginfo.", "Matched function: vfs_read [7ada]",
			"Probe point found: vfs_read+0", "Found 1 probe_trace_events."}},
		{[]string{"-v", "-k", fixture, "-D", "vfs_read:3 file"}, []string{"parsing arg: file into file", "1 arguments",
			"An error occurred in debuginfo analysis (-2).", "  Error: Failed to add events. Reason: No such file or directory (Code: -2)"}},
		{[]string{"-v", "-k", fixture, "-D", "vfs_read%return $retval"}, []string{"symbol:vfs_read file:(null) line:0 offset:0 return:1 lazy:(null)"}},
		{[]string{"-v", "-k", fixture, "-D", "nosuch"}, []string{"Probe point 'nosuch' not found."}},
		{[]string{"-v", "-k", fixture, "-D", "vfs_read:8 file->f_pos buf[2] n=count:u32"}, []string{"parsing arg: file->f_pos into file, f_pos(1)",
			"parsing arg: buf[2] into buf, [2](1)", "parsing arg: n=count:u32 into name:n type:u32 count"}},
		{[]string{"-v", "-k", fixture, "-s", fixtureDir + "/src", "-D", "do_sys_openat2;*getname*"}, []string{"Probe line found: line:133 addr:0xffffffff81001528"}},
		{[]string{"-v", "-k", fixture, "-V", "vfs_read"}, []string{"Searching variables at vfs_read", "Add new var: struct file*\tfile"}},
		{[]string{"-v", "-k", fixture, "-L", "vfs_read:1-3"}, []string{"Line range is 1 to 3"}},
		{[]string{"-v", "-k", fixture, "--max-probes=1", "-D", "vfs_*"}, []string{"  Error: Failed to add events. Reason: Argument list too long (Code: -7)"}},
		{[]string{"-v", "-x", bin, "-D", "work"}, []string{"Open Debuginfo file: " + bin, "Probe point found: work+0"}},
		{[]string{"-v", "-x", bin, "-D", "nosuch"}, nil},
	}
	for _, c := range cases {
		p, g := perf.Probe(c.args...), runGprobe(c.args...)
		if p.Code != g.Code || p.Stdout != g.Stdout {
			t.Errorf("%q:\nperf:   %s\ngprobe: %s", c.args, p, g)
			continue
		}
		pl := strings.Split(p.Stderr, "\n")
		i := 0
		for _, l := range strings.Split(g.Stderr, "\n") {
			for i < len(pl) && pl[i] != l {
				i++
			}
			if i == len(pl) {
				t.Errorf("%q: gprobe's %q is not perf's (or not in perf's order):\nperf:\n%s\ngprobe:\n%s", c.args, l, p.Stderr, g.Stderr)
				break
			}
			i++
		}
		for _, m := range c.must {
			if !strings.Contains(g.Stderr, m+"\n") {
				t.Errorf("%q: gprobe -v does not print %q:\n%s", c.args, m, g.Stderr)
			}
		}
	}
}

// TestPerfDiffBootconfig: --bootconfig prints perf's lines as the kernel
// reads them: the key .probes where perf writes .probe (which the kernel
// ignores), and a return probe's place with the %return perf drops (the
// event would be an entry probe); each event enabled, and the boot's
// buffer kept (kernel.ftrace = nop), which perf does not write. Nothing
// else differs.
func TestPerfDiffBootconfig(t *testing.T) {
	perf := testenv.RequirePerf(t)
	fx := fixture
	for _, defs := range [][]string{
		{"-D", "vfs_read count", "-D", "vfs_write%return $retval", "-D", "ev2=vfs_read+5 file"},
		{"-D", "vfs_*"},
		{"-D", "vfs_read%return", "-D", "vfs_read:0 count"},
		{"-D", "nosuch"},
	} {
		args := append([]string{"-k", fx, "--bootconfig"}, defs...)
		p, g := perf.Probe(args...), runGprobe(args...)
		plain := runGprobe(append([]string{"-k", fx}, defs...)...)
		ret := map[string]bool{}
		for _, l := range strings.Split(plain.Stdout, "\n") {
			if head, _, ok := strings.Cut(l, " "); ok && strings.HasPrefix(head, "r:") {
				ret[head[strings.LastIndexByte(head, '/')+1:]] = true
			}
		}
		var want []string
		if p.Stdout != "" {
			want = append(want, "kernel.ftrace = nop")
		}
		for _, l := range strings.Split(p.Stdout, "\n") {
			key, vals, ok := strings.Cut(l, ".probe = ")
			if !ok {
				want = append(want, l)
				continue
			}
			if ret[strings.TrimPrefix(key, "ftrace.event.kprobes.")] {
				// SYM%return: the kernel's form, the +0 dropped.
				vals = regexp.MustCompile(`'([^ '+]+)(\+0)?`).ReplaceAllString(vals, "'$1%return")
			}
			want = append(want, key+".probes = "+vals, key+".enable")
		}
		p.Stdout = strings.Join(want, "\n")
		if p != g {
			t.Errorf("%q:\nperf, as the kernel reads it: %s\ngprobe: %s", args, p, g)
		}
	}
}
