package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

const bootFixture = "../../testdata/vmlinux-fixtures/x86_64-dwarf5-O2.elf"

// longArgs name the same argument 30 times: a definition longer than the
// kernel's boot-time buffer.
var longArgs = func() string {
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "c%d=count ", i)
	}
	return b.String()
}()

// TestBootconfig: --bootconfig prints what the kernel's boot-time tracing
// reads (probes, SYM%return, enabled, the buffer expanded), refuses what it
// cannot define, and is a -D option.
func TestBootconfig(t *testing.T) {
	r := runGprobe("-k", bootFixture, "--bootconfig", "-D", "vfs_read count", "-D", "vfs_read%return $retval")
	want := "kernel.ftrace = nop\n" +
		"ftrace.event.kprobes.vfs_read.probes = 'vfs_read+0 count=%dx:x64'\n" +
		"ftrace.event.kprobes.vfs_read.enable\n" +
		"ftrace.event.kprobes.vfs_read__return.probes = 'vfs_read%return $retval'\n" +
		"ftrace.event.kprobes.vfs_read__return.enable\n"
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("got %s\nwant:\n%s", r, want)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-k", bootFixture, "--bootconfig", "-a", "vfs_read"}, exitUsage, "--bootconfig prints definitions: use it with -D"},
		{[]string{"-k", bootFixture, "--bootconfig", "--boot", "-D", "vfs_read"}, exitUsage, "--boot and --bootconfig: choose one"},
		{[]string{"-k", bootFixture, "--bootconfig", "-D", "vfs_read " + longArgs}, exitEINVAL, "boot-time tracing composes it in 254"},
	} {
		r := runGprobe(c.args...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.msg) {
			t.Errorf("%q: %s; want %d and %q", c.args, r, c.code, c.msg)
		}
	}
}

// TestBootconfigUprobesLikePerf: perf probe's own refusal of uprobes.
func TestBootconfigUprobesLikePerf(t *testing.T) {
	perf := testenv.RequirePerf(t)
	args := []string{"-x", "/bin/true", "--bootconfig", "-D", "main"}
	p, g := perf.Probe(args...), runGprobe(args...)
	if !same(p, g) {
		t.Errorf("perf %s\ngprobe %s", p, g)
	}
}
