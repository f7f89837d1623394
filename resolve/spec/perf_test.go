package spec

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

// PerfELF is the kernel image the differential test gives to `perf probe -k`.
// The environment variable GPROBE_SPEC_ELF overrides it.
var PerfELF = "../../testdata/vmlinux-fixtures/x86_64-dwarf5-O2.elf"

func perfSetup(t *testing.T) (perf *testenv.Perf, elf string) {
	t.Helper()
	elf = PerfELF
	if e := os.Getenv("GPROBE_SPEC_ELF"); e != "" {
		elf = e
	}
	perf = testenv.RequirePerf(t)
	if _, err := os.Stat(elf); err != nil {
		t.Skipf("no ELF for perf -k: %v", err)
	}
	return perf, elf
}

type perfResult struct {
	stdout, stderr string
	exit           int
}

func runPerf(t *testing.T, perf *testenv.Perf, elf string, verbose bool, mode, spec string) perfResult {
	t.Helper()
	args := []string{"-k", elf}
	if verbose {
		args = append(args, "-v")
	}
	r := perf.Probe(append(args, mode, spec)...)
	if r.Code < 0 {
		t.Fatalf("running perf probe %q: %s", args, r.Stderr)
	}
	return perfResult{stdout: r.Stdout, stderr: r.Stderr, exit: r.Code}
}

// singleWord reports whether s is one non-empty word for perf's argv_split.
func singleWord(s string) bool {
	return s != "" && len(argvSplit(s)) == 1 && argvSplit(s)[0] == s
}

// The driver trailer perf prints after a parse error reported from an option
// callback (-D/--definition, -L/--line): an empty line and the usage block.
const usageTrailer = "\n Usage: perf probe [<options>] 'PROBEDEF' ['PROBEDEF' ...]\n"

// checkPerfRejects asserts that perf fails on spec, printing exactly msg as
// its parser line, immediately followed by the option driver's usage trailer.
func checkPerfRejects(t *testing.T, perf *testenv.Perf, elf, mode, spec, msg string) {
	t.Helper()
	r := runPerf(t, perf, elf, false, mode, spec)
	if r.exit == 0 {
		t.Errorf("perf %s %q succeeded, want failure %q", mode, spec, msg)
		return
	}
	want := usageTrailer
	if msg != "" {
		want = msg + "\n" + usageTrailer
	}
	if !strings.HasPrefix(r.stderr, want) {
		t.Errorf("perf %s %q: stderr does not start with %q:\n%s", mode, spec, want, r.stderr)
	}
	if r.exit != 129 {
		t.Errorf("perf %s %q: exit %d, want 129 (usage)", mode, spec, r.exit)
	}
}

var readmeNoise = regexp.MustCompile(`Opening \S*README write=\d\n`)

// perfDebugLines returns perf's -v stderr with tracefs README noise removed.
func perfDebugLines(r perfResult) []string {
	return strings.Split(readmeNoise.ReplaceAllString(r.stderr, ""), "\n")
}

func findLine(lines []string, prefix string) (string, bool) {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return l, true
		}
	}
	return "", false
}

func nullStr(s string, ok bool) string {
	if !ok {
		return "(null)"
	}
	return s
}

// pointDebug is perf's pr_debug("symbol:%s file:%s line:%d offset:%lu
// return:%d lazy:%s") for a parsed point.
func pointDebug(p *Point) string {
	ret := 0
	if p.Return {
		ret = 1
	}
	return fmt.Sprintf("symbol:%s file:%s line:%d offset:%d return:%d lazy:%s",
		nullStr(p.Function, p.HasFunction), nullStr(p.File, p.HasFile), p.Line, p.Offset, ret,
		nullStr(p.Lazy, p.HasLazy))
}

// argDebug is the "parsing arg: ..." debug line of parse_perf_probe_arg().
func argDebug(a *Arg) string {
	var b strings.Builder
	b.WriteString("parsing arg: " + a.Raw + " into ")
	if strings.Contains(a.Raw, "=") {
		b.WriteString("name:" + a.Name + " ")
	}
	if a.User {
		b.WriteString("user_access ")
	}
	if a.HasType {
		b.WriteString("type:" + a.Type + " ")
	}
	if len(a.Fields) == 0 {
		b.WriteString(a.Var)
		return b.String()
	}
	b.WriteString(a.Var + ", ")
	for i, f := range a.Fields {
		ref := 0
		if f.Ref {
			ref = 1
		}
		fmt.Fprintf(&b, "%s(%d)", f.Name, ref)
		if i < len(a.Fields)-1 {
			b.WriteString(", ")
		}
	}
	return b.String()
}

var notFound = regexp.MustCompile(`(?m)^Probe point '(.*)' not found\.$`)

func checkPerfPoint(t *testing.T, perf *testenv.Perf, elf, spec string, p *Point, args []Arg) {
	t.Helper()
	r := runPerf(t, perf, elf, true, "-D", spec)
	lines := perfDebugLines(r)
	if strings.Contains(r.stderr, semanticPrefix) {
		t.Errorf("perf -D %q: parse error, we accept it:\n%s", spec, r.stderr)
		return
	}
	got, ok := findLine(lines, "symbol:")
	if want := pointDebug(p); !ok || got != want {
		t.Errorf("perf -D %q:\n perf %q\n ours %q", spec, got, want)
	}
	for i := range args {
		want := argDebug(&args[i])
		if l, ok := findLine(lines, want); !ok || l != want {
			t.Errorf("perf -D %q: no debug line %q in\n%s", spec, want, r.stderr)
		}
	}
	if l, ok := findLine(lines, fmt.Sprintf("%d arguments", len(args))); !ok || l != fmt.Sprintf("%d arguments", len(args)) {
		t.Errorf("perf -D %q: want %d arguments:\n%s", spec, len(args), r.stderr)
	}
	// With neither function nor file perf prints an uninitialised buffer.
	if m := notFound.FindStringSubmatch(r.stderr); m != nil && m[1] != p.String() && (p.HasFunction || p.HasFile) {
		t.Errorf("perf -D %q: perf says point %q, String() = %q", spec, m[1], p.String())
	}
}

// TestParseAgainstPerf runs the real perf 6.1 on every case of the tables:
// malformed input must be rejected by perf with exactly our message as its
// parser line (followed by the usage trailer), and well-formed input must be
// parsed by perf into the same values (compared through perf's -v debug
// output).
func TestParseAgainstPerf(t *testing.T) {
	perf, elf := perfSetup(t)

	t.Run("point", func(t *testing.T) {
		for _, c := range pointCases {
			if !singleWord(c.in) || c.sdt {
				continue
			}
			if c.want == nil {
				checkPerfRejects(t, perf, elf, "-D", c.in, c.err)
				continue
			}
			checkPerfPoint(t, perf, elf, c.in, c.want, nil)
		}
	})

	t.Run("arg", func(t *testing.T) {
		for _, c := range argCases {
			if !singleWord(c.in) {
				continue
			}
			spec := "vfs_read " + c.in
			if c.want == nil {
				checkPerfRejects(t, perf, elf, "-D", spec, c.err)
				continue
			}
			a := *c.want
			a.Raw = c.in
			if a.User {
				r := runPerf(t, perf, elf, false, "-D", spec)
				if strings.Contains(r.stderr, "ftrace does not support user access") {
					continue // target kernel check, not grammar
				}
			}
			checkPerfPoint(t, perf, elf, spec, with(fn("vfs_read"), func(*Point) {}), []Arg{a})
		}
	})

	t.Run("probe", func(t *testing.T) {
		for _, c := range probeCases {
			if c.sdt {
				continue
			}
			if c.want == nil {
				checkPerfRejects(t, perf, elf, "-D", c.in, c.err)
				continue
			}
			p := c.want.Point
			if !c.want.UserEvent {
				p.Event = ""
			}
			checkPerfPoint(t, perf, elf, c.in, &p, c.want.Args)
		}
	})

	t.Run("line", func(t *testing.T) {
		for _, c := range lineCases {
			if c.want == nil {
				checkPerfRejects(t, perf, elf, "-L", c.in, c.err)
				continue
			}
			r := runPerf(t, perf, elf, true, "-L", c.in)
			lines := perfDebugLines(r)
			if strings.Contains(r.stderr, semanticPrefix) {
				t.Errorf("perf -L %q: parse error, we accept it:\n%s", c.in, r.stderr)
				continue
			}
			if strings.Contains(c.in, ":") {
				want := fmt.Sprintf("Line range is %d to %d", c.want.Start, c.want.End)
				if l, _ := findLine(lines, "Line range is"); l != want {
					t.Errorf("perf -L %q: perf %q, ours %q", c.in, l, want)
				}
			}
		}
	})

	t.Run("positional", func(t *testing.T) {
		// The positional form uses another driver trailer.
		r := runPerf(t, perf, elf, false, "--", "vfs_read:foo")
		want := "Semantic error :There is non-digit char in line number.\n" + CommandParseErrorTrailer + "\n"
		if r.stderr != want || r.exit != 234 {
			t.Errorf("positional: exit %d stderr %q, want %q", r.exit, r.stderr, want)
		}
		// An empty definition: the parser is silent, only the trailer shows.
		_, err := ParseProbe(" ")
		var se *SyntaxError
		if !errors.As(err, &se) || se.Perf != "" {
			t.Fatalf("ParseProbe(\" \") = %v", err)
		}
		r = runPerf(t, perf, elf, false, "--", "")
		if want := CommandParseErrorTrailer + "\n"; r.stderr != want || r.exit != 234 {
			t.Errorf("positional empty: exit %d stderr %q, want %q", r.exit, r.stderr, want)
		}
	})
}
