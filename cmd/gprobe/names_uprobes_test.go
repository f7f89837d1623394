package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/target"
)

// namesUprobe is one probe of TestNamesUprobes: a point of the C++ or
// Rust program of names and the argument whose values the recording must
// show, one per call (the programs call each function with 0..N-1).
type namesUprobe struct {
	build string // a testenv.NamesBuilds name
	event string
	spec  string // the point and its argument "n=EXPR", without the event
	// overloads is how many functions the point names (C++ overloads):
	// each call of each fires the event; only the first's n is checked.
	overloads int
}

var namesUprobes = []namesUprobe{
	// By the names DWARF gives them (Rust's in its crate's namespace).
	{build: "names-g++-O0-gdwarf-5", event: "cxx_smethod", spec: "smethod n=v:s32"},
	// rustc's DWARF puts n in a stack slot the body fills; at the entry
	// (where perf and gprobe put "work n", prologue skipped or not) it
	// is still in the first argument register.
	{build: "names-rs-debug", event: "rs_work", spec: "work n=%di:u64"},
	// By their demangled names.
	{build: "names-g++-O0-gdwarf-5", event: "cxx_qsmethod", spec: `"ns::Klass::smethod" n=v:s32`},
	{build: "names-g++-O0-gdwarf-5", event: "cxx_method", spec: `"ns::Klass::method(int)" n=a:s32`},
	{build: "names-rs-debug", event: "rs_qwork", spec: `"names::work" n=%di:u64`},
	{build: "names-rs-v0", event: "rs_v0work", spec: `"names::work" n=%di:u64`},
	// Both overloads of method under one event: method(int a) and
	// method(const char *s), each called once per loop; at their entries
	// %si is a, or s.
	{build: "names-g++-O0-gdwarf-5", event: "cxx_methods", spec: `"ns::Klass::method" n=%si:s32`, overloads: 2},
	// clang's DWARF has no .debug_aranges (perf 6.1 cannot map the symbol
	// back to DWARF).
	{build: "names-clang++-O2-gdwarf-5", event: "clang_smethod", spec: `"ns::Klass::smethod" n=%di:s32`},
}

// traceArgLine is one event of trace-cmd report with its n= argument.
var traceArgLine = regexp.MustCompile(`^\s*\S+-\d+\s+\[\d+\]\s+[\d.]+:\s+(\S+):\s+\([0-9a-f]+\)\s+n=(-?\d+)\s*$`)

// TestNamesUprobes installs uprobes on the C++ and Rust programs of names
// by their names (gprobe -a), records a run that calls each probed
// function N times (gprobe record) and checks with trace-cmd report that
// each event fired N times with the arguments 0..N-1.
func TestNamesUprobes(t *testing.T) {
	requireRecording(t)
	fs := liveFS(t)
	const calls = 25
	group := fmt.Sprintf("gnames%d", os.Getpid())
	t.Cleanup(func() { removeGroup(t, fs, group) })
	builds := map[string]testenv.NamesBuild{}
	for _, b := range testenv.NamesBuilds() {
		builds[b.Name] = b
	}
	// Each binary is copied under a name of the process's own: uprobes
	// are on the inode, shared with other tests' builds otherwise.
	bins := map[string]string{}
	byBin := map[string][]string{}
	overloads := map[string]int{}
	for _, u := range namesUprobes {
		bin, ok := bins[u.build]
		if !ok {
			src := builds[u.build].Build(t)
			bin = filepath.Join(t.TempDir(), fmt.Sprintf("%s-%d", u.build, os.Getpid()))
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(bin, data, 0o755); err != nil {
				t.Fatal(err)
			}
			bin = target.RealPath(bin)
			bins[u.build] = bin
		}
		ev := fmt.Sprintf("%s_%d", u.event, os.Getpid())
		if r := runGprobe("-x", bin, "-q", "-a", group+":"+ev+"="+u.spec); r.Code != 0 {
			t.Fatalf("gprobe -x %s -a %q: %s", bin, u.spec, r)
		}
		byBin[bin] = append(byBin[bin], ev)
		overloads[ev] = max(u.overloads, 1)
	}
	dir := t.TempDir()
	for bin, evs := range byBin {
		out := filepath.Join(dir, filepath.Base(bin)+".dat")
		args := []string{"record", "-o", out}
		for _, ev := range evs {
			args = append(args, "-e", group+":"+ev)
		}
		args = append(args, "--", bin, strconv.Itoa(calls))
		if r := runGprobe(args...); r.Code != 0 || !strings.Contains(r.Stderr, "no events lost") {
			t.Fatalf("%q: %s", args, r)
		}
		rep, err := exec.Command("trace-cmd", "report", "-i", out).Output()
		if err != nil {
			t.Fatalf("trace-cmd report %s: %v", out, err)
		}
		values := map[string][]int{}
		for _, l := range strings.Split(string(rep), "\n") {
			if m := traceArgLine.FindStringSubmatch(l); m != nil {
				v, _ := strconv.Atoi(m[2])
				values[m[1]] = append(values[m[1]], v)
			}
		}
		for _, ev := range evs {
			got := values[ev]
			total := len(got)
			sort.Ints(got)
			want := make([]int, calls)
			for i := range want {
				want[i] = i
			}
			if n := overloads[ev]; n > 1 {
				// The first overload's values, among n calls per loop.
				if len(got) != n*calls {
					t.Errorf("%s on %s: %d events, want %d (%d overloads)\n%s", ev, filepath.Base(bin), len(got), n*calls, n, rep)
					continue
				}
				seen := map[int]bool{}
				for _, v := range got {
					seen[v] = true
				}
				got = got[:0]
				for _, v := range want {
					if seen[v] {
						got = append(got, v)
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s on %s: n = %v, want %v\n%s", ev, filepath.Base(bin), got, want, rep)
			} else {
				t.Logf("%s on %s: %d events, n = 0..%d", ev, filepath.Base(bin), total, calls-1)
			}
		}
	}
}
