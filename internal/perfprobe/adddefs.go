package perfprobe

import (
	"errors"

	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/resolve/spec"
)

// ErrNothingToAdd: the add command was given no definitions and no
// --from file.
var ErrNothingToAdd = errors.New("nothing to add (give PROBEDEF arguments or --from FILE)")

// CheckAdd refuses, before anything is read, an add command given no
// definitions and no --from file (ErrNothingToAdd), or one whose
// --maxactive (maxactive, when given: set) is out of the kernel's range
// (install.ValidMaxActive).
func CheckAdd(defs []string, from string, maxactive int, set bool) error {
	switch {
	case len(defs) == 0 && from == "":
		return ErrNothingToAdd
	case set:
		return install.ValidMaxActive(maxactive)
	}
	return nil
}

// AddDefs reads what -a, add and a bare PROBEDEF are given, in the order
// install.Add takes it: raw definition lines (install.IsDefinition) and
// perf PROBEDEFs (parsed with o; the request of each to be resolved), the
// from file when not "", then a request for each definition of the
// modern kinds (dynamic: --fprobe, --tracepoint or --event, whose
// definitions are resolved as a whole). It returns the items, the
// PROBEDEFs parsed and the modern kinds' definitions, or the first
// PROBEDEF that does not parse's error.
func AddDefs(defs []string, from string, dynamic bool, o spec.Options) ([]install.Def, []*spec.Probe, []string, error) {
	var items []install.Def
	var specs []*spec.Probe
	var modern []string
	for _, d := range defs {
		switch {
		case install.IsDefinition(d):
			items = append(items, install.Def{Lines: []string{d}})
		case dynamic:
			modern = append(modern, d)
		default:
			p, err := spec.ParseProbeOpts(d, o)
			if err != nil {
				return nil, nil, nil, err
			}
			specs = append(specs, p)
			items = append(items, install.Def{Req: &install.Request{Point: p.Point.String(), Args: p.ArgStrings()}})
		}
	}
	if from != "" {
		items = append(items, install.Def{From: from})
	}
	for range modern {
		items = append(items, install.Def{Req: &install.Request{}})
	}
	return items, specs, modern, nil
}
