package resolve

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/resolve/spec"
)

// ErrBadEvent: the event eprobes are defined on is not SYSTEM/EVENT.
var ErrBadEvent = errors.New("want SYSTEM/EVENT (sched/sched_switch)")

// Dynamic says which of the kinds perf probe 6.1 does not write the
// definitions of -D and -a are: fprobes (f:, the default), tracepoint
// probes (t:, Tracepoint), or event probes (e:) on the trace event Event.
type Dynamic struct {
	Tracepoint bool
	// Event is SYSTEM/EVENT for eprobes; Format its format file
	// (events/SYSTEM/EVENT/format), read from the running kernel's
	// tracefs when "".
	Event, Format string
}

// DynamicDefs are definitions read for one Dynamic kind, each a PROBEDEF
// (fprobes, tracepoint probes) or an eprobe's ARGS.
type DynamicDefs struct {
	tracepoint bool
	defs       []string
	specs      []*spec.Probe // the PROBEDEFs; nil for eprobes
	event      probe.EventID
	format     string
}

// Parse reads defs for d: the PROBEDEFs (their syntax errors as
// spec.ParseProbeOpts returns them), or the eprobes' event (ErrBadEvent)
// and its format (any other error when d.Event is set).
func (d Dynamic) Parse(defs []string) (*DynamicDefs, error) {
	dd := &DynamicDefs{tracepoint: d.Tracepoint, defs: defs}
	if d.Event != "" {
		ev, ok := probe.ParseEventID(d.Event)
		if !ok {
			return nil, fmt.Errorf("--event %q: %w.", d.Event, ErrBadEvent)
		}
		format, err := d.eventFormat(ev)
		if err != nil {
			return nil, err
		}
		dd.event, dd.format = ev, format
		return dd, nil
	}
	for _, def := range defs {
		p, err := spec.ParseProbeOpts(def, spec.Options{EntryValues: true})
		if err != nil {
			return nil, err
		}
		dd.specs = append(dd.specs, p)
	}
	return dd, nil
}

// eventFormat reads the eprobes' event's format: Format, else the running
// kernel's tracefs.
func (d Dynamic) eventFormat(ev probe.EventID) (string, error) {
	if d.Format != "" {
		b, err := os.ReadFile(d.Format)
		if err != nil {
			return "", fmt.Errorf("--format: %w", err)
		}
		return string(b), nil
	}
	fs, err := tracefs.Open()
	if err != nil {
		return "", fmt.Errorf("--event %s/%s: %w (give its format file with --format)", ev.System, ev.Name, err)
	}
	b, err := fs.EventFormat(ev.System, ev.Name)
	if err != nil {
		return "", fmt.Errorf("--event %s/%s: no such event on this kernel (%w)", ev.System, ev.Name, err)
	}
	return string(b), nil
}

// Resolve resolves the i-th definition with r into its probe, and
// describes it as a request does: the point and the arguments.
func (dd *DynamicDefs) Resolve(r *Resolver, i int) (p probe.Probe, point string, args []string, err error) {
	if dd.specs == nil {
		args = strings.Fields(dd.defs[i])
		p, err = r.Eprobe(dd.event, dd.format, args)
		return p, "event " + dd.event.System + "/" + dd.event.Name, args, err
	}
	s := dd.specs[i]
	point, args = s.Point.String(), s.ArgStrings()
	if dd.tracepoint {
		p, err = r.Tprobe(s)
		return p, "tracepoint " + point, args, err
	}
	p, err = r.Fprobe(s)
	return p, point, args, err
}
