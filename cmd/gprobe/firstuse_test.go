package main

import (
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gprobe/gprobe/internal/clikit"
	"github.com/gprobe/gprobe/internal/testenv"
)

var versionLine = regexp.MustCompile(`^gprobe version (\S+), revision ([0-9a-f]{40}(?: \(modified\))?|unknown), go1\.\S+\n$`)

// TestVersion: --version prints the module's version and the revision the
// build info holds, on stdout, status 0.
func TestVersion(t *testing.T) {
	r := runGprobe("--version")
	m := versionLine.FindStringSubmatch(r.Stdout)
	if r.Code != 0 || r.Stderr != "" || m == nil {
		t.Fatalf("%s\nwant %s", r, versionLine)
	}
	info, _ := debug.ReadBuildInfo()
	want := "unknown"
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			want = s.Value
		}
	}
	if rev, _, _ := strings.Cut(m[2], " "); rev != want || m[1] != info.Main.Version && info.Main.Version != "" {
		t.Errorf("version %s revision %s; the build info says %s, %s", m[1], rev, info.Main.Version, want)
	}
	// What scripts/build.sh stamps stands in for Go's stamp.
	defer func(r, m string) { revision, modified = r, m }(revision, modified)
	revision, modified = strings.Repeat("ab", 20), "true"
	if v := clikit.Version(revision, modified); want == "unknown" && !strings.Contains(v, "revision "+revision+" (modified), go") {
		t.Errorf("with the linker's revision: %s", v)
	}
}

// TestVersionBuilt: the binary scripts/build.sh builds (the tests' own)
// names the commit of the tree it was built from.
func TestVersionBuilt(t *testing.T) {
	bin := testenv.Gprobe(t)
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	out, err := exec.Command(bin, "--version").Output()
	m := versionLine.FindStringSubmatch(string(out))
	if err != nil || m == nil || m[2] == "unknown" {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	rev, _, _ := strings.Cut(m[2], " ")
	// A binary built for the same sources at an earlier commit may be
	// reused: the revision is a commit of this repository.
	if err := exec.Command("git", "cat-file", "-e", rev+"^{commit}").Run(); err != nil {
		t.Errorf("revision %s is no commit here (HEAD %s): %v", rev, strings.TrimSpace(string(head)), err)
	}
}

// TestUnknownOption: an unknown flag gets perf's message (perf probe 6.1:
// `perf probe --bogus`, `perf probe -Z`) and perf's usage (the whole
// option list; a value's error names its option), all on stderr, status
// 129; a near miss gets the flag it was meant to be; a subcommand's
// unknown flag gets its usage.
func TestUnknownOption(t *testing.T) {
	var all, maxProbes strings.Builder
	newApp(nil, nil).perfOptions(&all).WriteUsage("")
	newApp(nil, nil).perfOptions(&maxProbes).UsageFor(true, "max-probes", false)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "  Error: unknown option `bogus'\n" + all.String()},
		{[]string{"-Z", "vfs_read"}, "  Error: unknown switch `Z'\n" + all.String()},
		{[]string{"--vmlinx", "x", "-D", "vfs_read"}, "  Error: unknown option `vmlinx'\n  Did you mean --vmlinux?\n" + all.String()},
		{[]string{"--max-probes", "x", "vfs_read"}, " Error: option `max-probes' expects a numerical value" + maxProbes.String()},
		{[]string{"analyze", "--bogus", "x"}, "  Error: unknown option `bogus'\n\n Usage: gprobe analyze [options] " + newApp(nil, nil).analyzeCommand().ArgsUsage + "\n"},
		{[]string{"export", "--parquet", "o", "--rows", "3"}, "  Error: unknown option `rows'\n\n Usage: gprobe export [options] " + newApp(nil, nil).exportCommand().ArgsUsage + "\n"},
		{[]string{"record", "--outptu", "x"}, "  Error: unknown option `outptu'\n  Did you mean --output?\n\n Usage: gprobe record [options] [-- CMD ARGS...]\n"},
	} {
		r := runGprobe(c.args...)
		if r.Code != exitUsage || r.Stdout != "" || r.Stderr != c.want {
			t.Errorf("%q: %s\nwant status %d and stderr\n%s", c.args, r, exitUsage, c.want)
		}
	}
	if !strings.Contains(all.String(), "\n    -a, --add <") || !strings.HasSuffix(maxProbes.String(), "\n        --max-probes <n>  Set how many probe points can be found for a probe.\n") {
		t.Errorf("the usage lacks perf's option help:\n%s\n%s", all.String(), maxProbes.String())
	}
}

// TestUnknownOptionAsPerf: the first line and the status are perf's.
func TestUnknownOptionAsPerf(t *testing.T) {
	perf := testenv.RequirePerf(t)
	for _, args := range [][]string{{"--bogus"}, {"-Z"}, {"--max-probes", "x", "vfs_read"}} {
		p, g := perf.Probe(args...), runGprobe(args...)
		if !same(p, g) {
			t.Errorf("%q: perf %s\ngprobe %s", args, p, g)
		}
	}
}

// TestMistypedCommand: a first operand a typo away from a command, which
// as a probe point does not resolve, is answered with the command after
// the resolution's own messages; an operand far from every command, or
// one that succeeds, is not.
func TestMistypedCommand(t *testing.T) {
	for _, c := range []struct {
		args    []string
		suggest string
	}{
		{[]string{"-k", fixture, "analyse", "trace.out"}, "  Did you mean analyze? (analyse is not a gprobe command: it was taken as a probe point)\n"},
		{[]string{"-k", fixture, "recrod", "--", "ls"}, "  Did you mean record? (recrod is not a gprobe command: it was taken as a probe point)\n"},
		{[]string{"-k", fixture, "exprot", "--parquet"}, "  Did you mean export? (exprot is not a gprobe command: it was taken as a probe point)\n"},
		{[]string{"-k", fixture, "vfs_raed"}, ""},
		{[]string{"-k", fixture, "-D", "analyse"}, ""},
	} {
		r := runGprobe(c.args...)
		suggested := strings.Contains(r.Stderr, "Did you mean")
		if r.Code == 0 || suggested != (c.suggest != "") || !strings.HasSuffix(r.Stderr, c.suggest) {
			t.Errorf("%q: %s\nwant a failure ending with %q", c.args, r, c.suggest)
		}
		if suggested && strings.Count(r.Stderr, "\n") < 2 {
			t.Errorf("%q: the resolution's own message is missing: %s", c.args, r)
		}
	}
	// -F's operand is a filter; it succeeds (no function matches).
	if r := runGprobe("-k", fixture, "-F", "anlyze"); r.Code != 0 || r.Stderr != "" {
		t.Errorf("-F anlyze: %s", r)
	}
}

// TestHelpFits: every help (gprobe's and each command's) fits a
// 100-column terminal, and its options' usages start in one column.
func TestHelpFits(t *testing.T) {
	helps := [][]string{{"--help"}}
	for _, c := range newApp(nil, nil).cliApp().Commands {
		helps = append(helps, []string{c.Name, "--help"})
	}
	option := regexp.MustCompile(`^   (-\w, |    )--[\w-]+( \S+)?( {2,})\S`)
	for _, args := range helps {
		r := runGprobe(args...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "--help") {
			t.Fatalf("%q: %s", args, r)
		}
		options := 0
		for _, l := range strings.Split(r.Stdout, "\n") {
			if utf8.RuneCountInString(l) > 100 {
				t.Errorf("%q: a line of %d columns: %s", args, utf8.RuneCountInString(l), l)
			}
			if m := option.FindStringSubmatchIndex(l); m != nil {
				options++
				if m[7] != 29 {
					t.Errorf("%q: usage at column %d: %s", args, m[7], l)
				}
			}
		}
		if options == 0 {
			t.Errorf("%q: no option found in\n%s", args, r.Stdout)
		}
	}
	if r := runGprobe("--help"); !strings.Contains(r.Stdout, "\n       --version             print gprobe's version") {
		t.Errorf("--version is not in the help:\n%s", r.Stdout)
	}
}
