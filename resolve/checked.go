package resolve

import (
	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/resolve/sdt"
	"github.com/gprobe/gprobe/resolve/spec"
)

// RefusedError is a probe resolved that the kernel it is for would refuse
// (install.CheckDefinition): nothing is printed or written of it. Its
// message is the check's; the SDT resolver's refusals are the same type.
type RefusedError = sdt.RefusedError

// Checked resolves, for -D and -a, each of specs whose probes[i] is nil
// into probes[i], then checks every probe it resolved against the
// kernel's grammar and limits with feat (known: feat was read from a
// kernel). It returns the first resolution error as Probes returns it,
// else a *RefusedError for the first probe refused.
func Checked(r *Resolver, specs []*spec.Probe, probes map[int][]probe.Probe, feat probedef.Features, known bool) error {
	resolved, err := Missing(r, specs, probes)
	if err != nil {
		return err
	}
	for _, p := range resolved {
		if err := install.CheckDefinition(p, r.Arch(), feat, known); err != nil {
			return &RefusedError{Err: err}
		}
	}
	return nil
}

// SDTChecked resolves the SDT points among specs with sr (sr.Specs; exe
// is -x's binary, "" for perf's build-id cache) and checks each probe as
// Checked does with feat and known, for the architecture of the binary
// it marks (each binary read once): a probe refused ends it with a
// *RefusedError.
func SDTChecked(sr *sdt.Resolver, specs []*spec.Probe, exe string, feat probedef.Features, known bool) (map[int][]probe.Probe, error) {
	arches := arch.Files{}
	return sr.Specs(specs, exe, func(q probe.Probe) error {
		return install.CheckDefinition(q, arches.Of(q.Target.Path), feat, known)
	})
}

// Missing resolves each of specs whose probes[i] is nil into probes[i]
// (what is given, such as SDT points, is kept) and returns the probes it
// resolved, in order; it stops at the first error, as Probes returns it.
func Missing(r *Resolver, specs []*spec.Probe, probes map[int][]probe.Probe) ([]probe.Probe, error) {
	var resolved []probe.Probe
	for i, p := range specs {
		if probes[i] != nil {
			continue
		}
		ps, err := r.Probes(p)
		if err != nil {
			return nil, err
		}
		probes[i] = ps
		resolved = append(resolved, ps...)
	}
	return resolved, nil
}

// DynamicProbe is one of DynamicDefs resolved: its probe, and the point
// and arguments a request names it by.
type DynamicProbe struct {
	Probe probe.Probe
	Point string
	Args  []string
}

// ResolveChecked resolves every definition with r (Resolve), checking each
// probe as Checked does with the features of the kernel r's target is
// when it has them (a vmlinux's README), else with host and hostKnown
// (the running kernel's). It stops at the first resolution error or
// *RefusedError.
func (dd *DynamicDefs) ResolveChecked(r *Resolver, host probedef.Features, hostKnown bool) ([]DynamicProbe, error) {
	feat, known := r.Target().Features()
	if !known {
		feat, known = host, hostKnown
	}
	out := make([]DynamicProbe, len(dd.defs))
	for i := range dd.defs {
		p, point, args, err := dd.Resolve(r, i)
		if err == nil {
			err = install.CheckDefinition(p, r.Arch(), feat, known)
			if err != nil {
				err = &RefusedError{Err: err}
			}
		}
		if err != nil {
			return nil, err
		}
		out[i] = DynamicProbe{p, point, args}
	}
	return out, nil
}
