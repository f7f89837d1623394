package spec

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

// TestRandomAgainstPerf compares our parsers with the real perf on random
// specs built from grammar-relevant tokens. It is opt-in (it runs perf once
// per spec): GPROBE_SPEC_RANDOM=<count> [GPROBE_SPEC_SEED=<seed>].
func TestRandomAgainstPerf(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("GPROBE_SPEC_RANDOM"))
	if n <= 0 {
		t.Skip("set GPROBE_SPEC_RANDOM=<count> to run")
	}
	perf, elf := perfSetup(t)
	seed, _ := strconv.ParseInt(os.Getenv("GPROBE_SPEC_SEED"), 10, 64)
	rng := rand.New(rand.NewSource(seed))

	pointTok := []string{"vfs_read", "k.c", "a", ".", ":", ";", "+", "@", "%", "=", `\`, `\\`,
		"0x", "0", "1", "5", "08", "x", "-", "return", "g", "e", "sdt_", "_", "/", "*"}
	argTok := []string{"a", "b", "_", ".", "->", "-", ">", "[", "]", "1", "0x1", "=", ":", "u8",
		"@", "user", "$retval", "%ax", "+0(", ")", "9"}
	lineTok := []string{"vfs_read", "k.c", "a", ":", "+", "-", "@", ".", "/", "0", "1", "5",
		"0x", "x", " ", ";", "10", "2147483647", "4294967296"}
	gen := func(tok []string, max int) string {
		var b strings.Builder
		for i, k := 0, 1+rng.Intn(max); i < k; i++ {
			b.WriteString(tok[rng.Intn(len(tok))])
		}
		return b.String()
	}

	for i := 0; i < n; i++ {
		spec := gen(pointTok, 6)
		for j := rng.Intn(3); j > 0; j-- {
			spec += " " + gen(argTok, 5)
		}
		comparePerfProbe(t, perf, elf, spec)

		comparePerfLine(t, perf, elf, gen(lineTok, 6))
	}
}

func comparePerfProbe(t *testing.T, perf *testenv.Perf, elf, spec string) {
	t.Helper()
	pr, err := ParseProbe(spec)
	if err == nil && pr.Point.SDT {
		return // perf answers SDT points from its build-id cache
	}
	r := runPerf(t, perf, elf, true, "-D", spec)
	if strings.Contains(r.stderr, "ftrace does not support user access") {
		return
	}
	lines := perfDebugLines(r)
	if err != nil {
		msg := err.(*SyntaxError).Perf
		if r.exit != 129 || !strings.Contains(r.stderr, msg+"\n") {
			t.Errorf("-D %q: ours %q, perf exit %d:\n%s", spec, msg, r.exit, r.stderr)
		}
		return
	}
	if strings.Contains(r.stderr, semanticPrefix) {
		t.Errorf("-D %q: we accept, perf says:\n%s", spec, r.stderr)
		return
	}
	p := pr.Point
	if !pr.UserEvent {
		p.Event = ""
	}
	got, _ := findLine(lines, "symbol:")
	if want := pointDebug(&p); got != want {
		t.Errorf("-D %q:\n perf %q\n ours %q", spec, got, want)
	}
	for i := range pr.Args {
		want := argDebug(&pr.Args[i])
		if l, ok := findLine(lines, want); !ok || l != want {
			t.Errorf("-D %q: no debug line %q in\n%s", spec, want, r.stderr)
		}
	}
	want := fmt.Sprintf("%d arguments", len(pr.Args))
	if l, _ := findLine(lines, want); l != want {
		t.Errorf("-D %q: want %q", spec, want)
	}
}

func comparePerfLine(t *testing.T, perf *testenv.Perf, elf, spec string) {
	t.Helper()
	lr, err := ParseLineRange(spec)
	r := runPerf(t, perf, elf, true, "-L", spec)
	lines := perfDebugLines(r)
	if err != nil {
		if msg := err.Error(); !strings.Contains(r.stderr, msg+"\n") || r.exit != 129 {
			t.Errorf("-L %q: ours %q, perf exit %d:\n%s", spec, msg, r.exit, r.stderr)
		}
		return
	}
	if strings.Contains(r.stderr, semanticPrefix) {
		t.Errorf("-L %q: we accept, perf says:\n%s", spec, r.stderr)
		return
	}
	if strings.Contains(spec, ":") {
		want := fmt.Sprintf("Line range is %d to %d", lr.Start, lr.End)
		if l, _ := findLine(lines, "Line range is"); l != want {
			t.Errorf("-L %q: perf %q, ours %q", spec, l, want)
		}
	}
}
