package perfprobe

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/target"
)

// TestWithReason: -v adds the errno behind the status, as perf 6.1 prints
// it ("perf probe -v -d nosuch"); nothing without -v or for a usage error.
func TestWithReason(t *testing.T) {
	const tr = "  Error: Failed to delete events."
	for _, c := range []struct {
		status, verbose int
		want            string
	}{
		{254, 1, tr + " Reason: No such file or directory (Code: -2)"},
		{234, 2, tr + " Reason: Invalid argument (Code: -22)"},
		{254, 0, tr},
		{129, 1, tr},
		{0, 1, tr},
	} {
		if got := WithReason(tr, c.status, c.verbose); got != c.want {
			t.Errorf("%d -v%d: %q, want %q", c.status, c.verbose, got, c.want)
		}
	}
}

// TestResolveFailure: perf's message of a resolution error, the target's
// notes before it, the status from resolve.Errno.
func TestResolveFailure(t *testing.T) {
	const tr = "  Error: Failed to add events."
	notFound := &resolve.Error{Msg: "Probe point 'nosuch' not found.", Err: resolve.ErrNotFound}
	silent := &resolve.Error{Err: resolve.ErrInvalid}
	needs := fmt.Errorf("vfs_read:3: %w", resolve.ErrNeedsDWARF)
	refused := &resolve.RefusedError{Err: errors.New("p:probe/x vfs_read+99999: too far")}
	btf := &target.Target{Path: "/sys/kernel/btf/vmlinux", NoDebuginfo: errors.New("no vmlinux in /boot"), FetchErr: errors.New("debuginfod: 404")}
	for _, c := range []struct {
		t       *target.Target
		err     error
		verbose int
		want    string
		status  int
	}{
		{nil, notFound, 0, "Probe point 'nosuch' not found.|" + tr, 254},
		{nil, notFound, 1, "Probe point 'nosuch' not found.|" + tr + " Reason: No such file or directory (Code: -2)", 254},
		{nil, silent, 0, tr, 234},
		{btf, needs, 0, "no vmlinux in /boot|debuginfod: 404|vfs_read:3: needs DWARF debug information|" + tr, 254},
		{btf, notFound, 0, "debuginfod: 404|Probe point 'nosuch' not found.|" + tr, 254},
		// A refusal says nothing of the target.
		{btf, refused, 0, "The kernel would refuse this definition: " + refused.Error() + "|" + tr, 234},
		{btf, refused, 1, "The kernel would refuse this definition: " + refused.Error() + "|" + tr + " Reason: Invalid argument (Code: -22)", 234},
	} {
		lines, status := ResolveFailure(c.t, c.err, tr, c.verbose)
		if got := strings.Join(lines, "|"); got != c.want || status != c.status {
			t.Errorf("%v: %q %d\nwant %q %d", c.err, got, status, c.want, c.status)
		}
	}
}

// TestVerbose: perf -v's lines about the target opened.
func TestVerbose(t *testing.T) {
	var b strings.Builder
	Verbose(&b, &target.Target{Path: "/sys/kernel/btf/vmlinux", NoDebuginfo: errors.New("x")}, "/k", true)
	want := "Use vmlinux: /k\nNo kprobe blacklist support, ignored\n" +
		"No vmlinux with debug info found; using /sys/kernel/btf/vmlinux (function entry probes only).\n"
	if b.String() != want {
		t.Errorf("%q\nwant %q", b.String(), want)
	}
	b.Reset()
	Verbose(&b, &target.Target{Path: "/bin/true", User: true}, "", false)
	if b.String() != "" {
		t.Errorf("a user binary: %q", b.String())
	}
}

// TestVerboseLevel: perf's count first, then the flag; a nil State.
func TestVerboseLevel(t *testing.T) {
	var none *State
	if none.VerboseLevel(false) != 0 || none.VerboseLevel(true) != 1 || (&State{Verbose: 3}).VerboseLevel(false) != 3 || (&State{}).VerboseLevel(true) != 1 {
		t.Error("VerboseLevel")
	}
}

// TestRefused: a probe the kernel would refuse, also wrapped, is reported
// with its message and the trailer; any other error is not a refusal.
func TestRefused(t *testing.T) {
	re := &resolve.RefusedError{Err: errors.New("bad argument")}
	for _, err := range []error{re, fmt.Errorf("vfs_read: %w", re)} {
		text, ok := Refused(err, "  Error: Failed to add events.")
		if want := "The kernel would refuse this definition: bad argument\n  Error: Failed to add events."; !ok || text != want {
			t.Errorf("Refused(%v) = %q, %v; want %q", err, text, ok, want)
		}
	}
	if text, ok := Refused(resolve.ErrNotFound, "x"); ok || text != "" {
		t.Errorf("Refused(ErrNotFound) = %q, %v", text, ok)
	}
	if _, ok := Refused(nil, "x"); ok {
		t.Error("Refused(nil) is a refusal")
	}
}
