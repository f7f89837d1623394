package spec

import "fmt"

// ParseFunction parses FUNC or FUNC@SRC, a function as a whole (gprobe
// latency): the probes at its entry and at its return. Anything more (a
// line, an offset, a lazy pattern, an address, an event name, %return,
// arguments) is refused: the error quotes fn.
func ParseFunction(fn string) (entry, ret *Probe, err error) {
	var ps [2]*Probe
	for i, def := range []string{fn, fn + "%return"} {
		p, err := ParseProbe(def)
		if err != nil {
			return nil, nil, fmt.Errorf("%q: %v", fn, err)
		}
		pt := p.Point
		if !pt.HasFunction || pt.IsAbs || pt.Line != 0 || pt.Offset != 0 || pt.HasLazy || len(p.Args) > 0 || pt.Event != "" || (i == 0 && pt.Return) {
			return nil, nil, fmt.Errorf("%q: want a function name (FUNC or FUNC@SRC)", fn)
		}
		ps[i] = p
	}
	return ps[0], ps[1], nil
}
