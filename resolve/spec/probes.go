package spec

// ParseProbes parses each of defs with opts (ParseProbeOpts), as -D and
// -a read theirs: it stops at the first that does not parse and returns
// its error.
func ParseProbes(defs []string, opts Options) ([]*Probe, error) {
	out := make([]*Probe, 0, len(defs))
	for _, d := range defs {
		p, err := ParseProbeOpts(d, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
