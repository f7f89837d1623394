package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/target"
)

// Go programs on this machine's uprobes: testdata/goprogs/recurse, whose
// 64 goroutines recurse 300 frames deep through main.descend with 2 KB
// frames, so that their stacks grow and move while probes fire.

// goProg is a Go test program built for one test, probed in a group and
// with event names no one else uses (the kernel checks event names across
// groups).
type goProg struct {
	bin, group, tag string
}

func buildGoProg(t *testing.T, name string) *goProg {
	t.Helper()
	bin := target.RealPath(testenv.BuildGo(t, testenv.GoProgram(t, name), ""))
	return &goProg{bin: bin, group: fmt.Sprintf("gogo%d", os.Getpid()), tag: fmt.Sprintf("%d", os.Getpid())}
}

// TestGoUretprobeCrashes proves why gprobe never puts a uretprobe on a Go
// function by default: with one on main.descend (written as a raw r: line,
// which gprobe installs as given), the program dies the first time a
// goroutine's stack is copied while a call is open, since the copy meets
// the uretprobe's trampoline address where a return address should be.
func TestGoUretprobeCrashes(t *testing.T) {
	requireRecording(t)
	fs := liveFS(t)
	p := buildGoProg(t, "recurse")
	t.Cleanup(func() { removeGroup(t, fs, p.group) })
	_, off := testenv.FuncSymbol(t, p.bin, "main.descend")
	ev := "descend_ret_" + p.tag
	line := fmt.Sprintf("r:%s/%s %s:%#x", p.group, ev, p.bin, off)
	if r := runGprobe("add", "-q", line); r.Code != 0 {
		t.Fatalf("add %q: %s", line, r)
	}
	out := filepath.Join(t.TempDir(), "crash.dat")
	r := runGprobe("record", "-e", p.group+":"+ev, "-o", out, "--", p.bin)
	if r.Code == 0 {
		t.Fatalf("the program survived a uretprobe on main.descend: %s", r)
	}
	if !strings.Contains(r.Stderr, "unexpected return pc") && !strings.Contains(r.Stderr, "unknown caller pc") {
		t.Fatalf("the program failed, but not by the uretprobe's return address (exit %d):\n%s", r.Code, tail(r.Stderr, 2000))
	}
	t.Logf("exit %d: %s", r.Code, firstMatch(r.Stderr, "unknown caller pc", "unexpected return pc"))
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// firstMatch is the first line of s holding one of subs.
func firstMatch(s string, subs ...string) string {
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				return l
			}
		}
	}
	return ""
}
