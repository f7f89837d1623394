package perfprobe

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/gprobe/gprobe/resolve"
	"github.com/gprobe/gprobe/resolve/target"
)

// usageStatus is perf's exit status for a usage error (129), which has
// no reason to add.
const usageStatus = 129

// WithReason is perf's pr_err_with_code: the trailer, to which -v
// (verbose > 0) adds the error behind the exit status status (256 -
// errno): "  Error: Failed to add events. Reason: No such file or
// directory (Code: -2)".
func WithReason(trailer string, status, verbose int) string {
	if verbose == 0 || status <= 0 || status >= 256 || status == usageStatus {
		return trailer
	}
	no := syscall.Errno(256 - status)
	return fmt.Sprintf("%s Reason: %s (Code: %d)", trailer, Strerror(no), -int(no))
}

// Verbose writes to w what perf -v says of the target t opened: the
// vmlinux given (-k, "" without), that the kprobe blacklist is not
// checked (noBlacklist), the file a kernel's symbols come from, and that
// BTF stands in for a missing vmlinux.
func Verbose(w io.Writer, t *target.Target, vmlinux string, noBlacklist bool) {
	if vmlinux != "" {
		fmt.Fprintf(w, "Use vmlinux: %s\n", vmlinux)
	}
	if noBlacklist {
		fmt.Fprintln(w, "No kprobe blacklist support, ignored")
	}
	if !t.User && t.Module == "" && t.HasSymbols() {
		fmt.Fprintf(w, "Using %s for symbols\n", t.Path)
	}
	if t.NoDebuginfo != nil {
		fmt.Fprintf(w, "No vmlinux with debug info found; using %s (function entry probes only).\n", t.Path)
	}
}

// ResolveStatus is perf's exit status for a resolution error err (256 -
// resolve.Errno).
func ResolveStatus(err error) int { return Status(resolve.Errno(err)) }

// Refused is the report of a probe resolved that the kernel it is for
// would refuse (err is or wraps a *resolve.RefusedError, as
// resolve.Checked, DynamicDefs.ResolveChecked and sdt.Resolver.Specs
// return it): the message, then trailer; ok is false for any other
// error. Its exit status is EINVAL's.
func Refused(err error, trailer string) (text string, ok bool) {
	var re *resolve.RefusedError
	if !errors.As(err, &re) {
		return "", false
	}
	return fmt.Sprintf("The kernel would refuse this definition: %v\n%s", re, trailer), true
}

// ResolveFailure is what perf prints of a failed resolution err on t (nil
// when no target was opened), a line each: for a probe the kernel would
// refuse, Refused's lines with WithReason's reason (EINVAL) and nothing
// of the target; else where the vmlinux was looked for when BTF stood in
// for it and the point needs DWARF, what each debuginfod server answered
// when asked in vain, then perf's message (a resolve.Error's own, none
// when it is empty) and the trailer with WithReason's reason. It returns
// the lines and perf's exit status.
func ResolveFailure(t *target.Target, err error, trailer string, verbose int) ([]string, int) {
	if text, ok := Refused(err, WithReason(trailer, StatusEINVAL, verbose)); ok {
		return strings.Split(text, "\n"), StatusEINVAL
	}
	var out []string
	if t != nil && t.NoDebuginfo != nil && errors.Is(err, resolve.ErrNeedsDWARF) {
		out = append(out, t.NoDebuginfo.Error())
	}
	if t != nil && t.FetchErr != nil {
		out = append(out, t.FetchErr.Error())
	}
	var re *resolve.Error
	switch {
	case !errors.As(err, &re):
		out = append(out, err.Error())
	case re.Msg != "":
		out = append(out, re.Msg)
	}
	status := ResolveStatus(err)
	return append(out, WithReason(trailer, status, verbose)), status
}

// VerboseLevel is perf's verbose level: the -v counted by the parse, else
// 1 for a command's --verbose flag (flag), else 0. st may be nil (a
// command run without perf's parse).
func (st *State) VerboseLevel(flag bool) int {
	switch {
	case st != nil && st.Verbose > 0:
		return st.Verbose
	case flag:
		return 1
	}
	return 0
}
