package resolve

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/resolve/spec"
)

// Function resolves fn, FUNC or FUNC@SRC (spec.ParseFunction), as a
// function measured as a whole (gprobe latency): one probe at its entry
// and its return probe, or a Go function's probes on its return
// instructions. r should be opened with NoInlines (an inlined copy has no
// return to probe) and MaxProbes 1.
//
// Its errors name fn in one line; Errno gives perf's errno for them: that
// of the resolution, EINVAL for a fn that does not parse or is at several
// places.
func Function(r *Resolver, fn string) (entry probe.Probe, rets []probe.Probe, err error) {
	entrySpec, retSpec, err := spec.ParseFunction(fn)
	if err != nil {
		return probe.Probe{}, nil, &functionError{err.Error(), []error{err, ErrInvalid}}
	}
	var got [2][]probe.Probe
	for i, sp := range []*spec.Probe{entrySpec, retSpec} {
		ps, err := r.Probes(sp)
		if err != nil {
			msg := err.Error()
			var re *Error
			if errors.As(err, &re) && re.Msg != "" {
				msg = re.Msg
			}
			msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
			return probe.Probe{}, nil, &functionError{fn + ": " + msg, []error{err}}
		}
		if len(ps) != 1 && (i == 0 || len(ps) == 0 || ps[0].Return) {
			return probe.Probe{}, nil, &functionError{fmt.Sprintf("%q is at %d places; latency needs one function", fn, len(ps)), []error{ErrInvalid}}
		}
		got[i] = ps
	}
	return got[0][0], got[1], nil
}

// functionError is a failure of Function: its one-line message and what
// it wraps.
type functionError struct {
	msg  string
	errs []error
}

func (e *functionError) Error() string   { return e.msg }
func (e *functionError) Unwrap() []error { return e.errs }
