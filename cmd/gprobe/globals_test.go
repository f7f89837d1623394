package main

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/testenv"
)

// Globals in uprobes, for real: perf probe 6.1 writes a global of a user
// program as @NAME+OFF, which the kernel refuses for uprobes ("Symbol is
// not available with uprobe"); gprobe writes @+FILEOFFSET, which the
// kernel takes and reads the right memory with, checked here against the
// values globals.c gives its variables before each call, in a PIE and a
// non-PIE build (their data is not at the file offsets of .text's
// segment: the offset is relative to .text's mapping, as the kernel
// computes it).
func TestUprobeGlobals(t *testing.T) {
	perf := testenv.RequirePerf(t)
	home := ownHome(t)
	fs := tracefs.At(testenv.Tracefs(t))
	testenv.Tool(t, "trace-cmd")
	const def = "tick n gcount gtotal gstat gpt.y gptr->x gname:string"
	for _, b := range []struct{ name, flag string }{{"globals", "-pie"}, {"globals-nopie", "-no-pie"}} {
		t.Run(b.name, func(t *testing.T) {
			bin := testenv.BuildC(t, "gcc", "testdata/uprobe/globals.c", b.name, "-O2", "-g", b.flag)
			// perf's line: the kernel refuses it.
			p := perf.ProbeIn(home, "-x", bin, "-D", "gprobe_globals:perf="+def)
			if p.Code != 0 || !strings.Contains(p.Stdout, " gcount=@gcount+0:s32 ") {
				t.Fatalf("perf probe -D: %s", p)
			}
			err := fs.Write(probe.Uprobe, strings.TrimSpace(p.Stdout))
			var we *tracefs.WriteError
			if err == nil {
				fs.Delete(probe.Uprobe, "gprobe_globals", "perf")
				t.Fatalf("the kernel took perf's line %q", p.Stdout)
			}
			if !errors.As(err, &we) || we.Log == nil || !strings.Contains(we.Log.Message(), "Symbol is not available with uprobe") {
				t.Errorf("the kernel refused perf's line, but not for the symbol: %v", err)
			}
			// gprobe's, installed and recorded.
			g := runGprobe("-x", bin, "-D", "gprobe_globals:gprobe="+def)
			if g.Code != 0 || !strings.Contains(g.Stdout, " gcount=@+0x") {
				t.Fatalf("gprobe -D: %s", g)
			}
			if r := runGprobe("-q", "-x", bin, "-a", "gprobe_globals:gprobe="+def); r.Code != 0 {
				t.Fatalf("gprobe -a: %s", r)
			}
			t.Cleanup(func() { runGprobe("-q", "-d", "gprobe_globals:gprobe") })
			out := filepath.Join(t.TempDir(), "trace.dat")
			const calls = 6
			rec := exec.Command(testenv.Gprobe(t), "record", "-e", "gprobe_globals:gprobe", "-o", out, "--", bin, strconv.Itoa(calls))
			if o, err := rec.CombinedOutput(); err != nil {
				t.Fatalf("gprobe record: %v\n%s", err, o)
			}
			rep, err := exec.Command("trace-cmd", "report", "-i", out).CombinedOutput()
			if err != nil {
				t.Fatalf("trace-cmd report: %v\n%s", err, rep)
			}
			var got []string
			field := regexp.MustCompile(`\(\w+\) (.*)$`)
			for _, l := range strings.Split(string(rep), "\n") {
				if strings.Contains(l, " gprobe:") {
					if m := field.FindStringSubmatch(l); m != nil {
						got = append(got, m[1])
					}
				}
			}
			var want []string
			total := 5
			for k := 1; k <= calls; k++ {
				count := (k - 1) * k / 2
				want = append(want, fmt.Sprintf(`n=%d gcount=%d gtotal=%d gstat=%d y=%d x=1 gname_string="hello"`, k, count, total, 3+k-1, 2+count))
				total += count + k
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("recorded values:\n%s\nwant:\n%s\n(trace-cmd report:\n%s)", strings.Join(got, "\n"), strings.Join(want, "\n"), rep)
			}
		})
	}
}
