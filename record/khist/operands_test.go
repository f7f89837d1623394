package khist

import (
	"errors"
	"fmt"
	"testing"
)

// TestOperands: FUNC, -- and the command; the message alone, wrapping
// ErrOperands, for anything else.
func TestOperands(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"vfs_read"}, `vfs_read [] <nil>`},
		{[]string{"vfs_read", "--", "ls", "-l"}, `vfs_read [ls -l] <nil>`},
		{[]string{"vfs_read", "--"}, `vfs_read [] <nil>`},
		{nil, ` [] give the FUNC to measure (gprobe latency FUNC -- CMD ARGS...)`},
		{[]string{"f", "g", "--", "true"}, ` [] one FUNC at a time, then -- and the command (have "f g -- true")`},
	} {
		fn, cmd, err := Operands(c.args)
		if got := fmt.Sprintf("%s %v %v", fn, cmd, err); got != c.want {
			t.Errorf("%q: %s, want %s", c.args, got, c.want)
		}
		if err != nil && !errors.Is(err, ErrOperands) {
			t.Errorf("%q: %v is no ErrOperands", c.args, err)
		}
	}
}

// TestCheckSettings: --by's values, something to follow.
func TestCheckSettings(t *testing.T) {
	for _, c := range []struct {
		by   string
		cmd  []string
		all  bool
		want string
	}{
		{"", []string{"ls"}, false, "<nil>"},
		{"comm", nil, true, "<nil>"},
		{"pid", []string{"ls"}, true, "<nil>"},
		{"tid", []string{"ls"}, false, `--by "tid": want comm or pid`},
		{"", nil, false, "nothing to follow: give a command after --, or -a"},
	} {
		err := CheckSettings(c.by, c.cmd, c.all)
		if fmt.Sprint(err) != c.want || err != nil && (!errors.Is(err, ErrUsage) || errors.Is(err, ErrOperands)) {
			t.Errorf("%q %q %v: %v, want %s", c.by, c.cmd, c.all, err, c.want)
		}
	}
}

// TestCheckBoot: one of --bootconfig and --boot-report, nothing to follow.
func TestCheckBoot(t *testing.T) {
	for _, c := range []struct {
		conf, rep bool
		cmd       []string
		all       bool
		want      string
	}{
		{true, false, nil, false, "<nil>"},
		{false, true, nil, false, "<nil>"},
		{true, true, nil, false, "--bootconfig prints a setup, --boot-report reads it: choose one"},
		{true, false, []string{"ls"}, false, "a boot-time measurement counts every task from boot: no command or -a"},
		{false, true, nil, true, "a boot-time measurement counts every task from boot: no command or -a"},
	} {
		err := CheckBoot(c.conf, c.rep, c.cmd, c.all)
		if fmt.Sprint(err) != c.want || err != nil && !errors.Is(err, ErrOperands) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// TestOpen: this machine's kernel (no hist triggers here) is refused with
// ErrUnsupported; a kernel that has them gives its tracefs.
func TestOpen(t *testing.T) {
	fs, err := Open()
	switch {
	case err == nil && fs == nil:
		t.Error("no error and no tracefs")
	case err != nil && fs != nil:
		t.Errorf("tracefs and %v", err)
	case err != nil && !errors.Is(err, ErrUnsupported):
		t.Skipf("no tracefs here: %v", err)
	case err != nil:
		t.Logf("refused: %v", err)
	}
}
