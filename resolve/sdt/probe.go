package sdt

import (
	"debug/elf"
	"fmt"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
)

// GroupPrefix starts the group of every SDT event: sdt_PROVIDER.
const GroupPrefix = "sdt_"

// maxGroup is perf's sdtgrp buffer: the group is cut to 63 bytes.
const maxGroup = 63

// Group is the event group perf gives the markers of provider.
func Group(provider string) string {
	g := GroupPrefix + provider
	if len(g) > maxGroup {
		g = g[:maxGroup]
	}
	return g
}

// Group is the event group of the marker: sdt_PROVIDER.
func (n *Note) Group() string { return Group(n.Provider) }

// Probe is the uprobe gprobe defines for the marker in the binary at path
// (the path written in the definition, absolute as perf writes it): at the
// marker's file offset, with the semaphore as reference counter, each
// operand that can be fetched as argI with perf's type. The event is the
// marker's name in group sdt_PROVIDER; emit/install still checks it and
// adds the suffix when it is taken. The operands dropped are returned
// with the probe, for -v.
func (n *Note) Probe(path string, m elf.Machine, opts Options) (probe.Probe, []Operand, error) {
	p := probe.Probe{
		Kind: probe.Uprobe, Group: n.Group(), Event: n.Name,
		Target: probe.Location{Path: path, Offset: n.Offset, RefCtr: n.RefCtr, HasRefCtr: n.RefCtr != 0},
	}
	ops, err := Operands(m, n.Args, opts)
	if err != nil {
		return probe.Probe{}, nil, n.errorf(err)
	}
	var dropped []Operand
	for i, o := range ops {
		if o.Fetch == nil {
			dropped = append(dropped, o)
			continue
		}
		p.Args = append(p.Args, probe.FetchArg{Name: Name(i), Expr: o.Fetch, Type: o.Type})
	}
	return p, dropped, nil
}

// PerfLine is the definition perf 6.1 running on this machine writes for
// the marker in its probe cache and prints for -D (synthesize_sdt_probe_command):
// "p:sdt_PROVIDER/NAME PATH:0xOFFSET[(0xREFCTR)] [argI=OP[:TYPE]...]",
// with perf's own offsets and operand rules.
func (n *Note) PerfLine(path string, m elf.Machine) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "p:%s/%s %s:0x%x", n.Group(), n.Name, path, n.perfOffset)
	if n.perfRefCtr != 0 {
		fmt.Fprintf(&b, "(0x%x)", n.perfRefCtr)
	}
	ops, err := PerfOperands(m, n.Args)
	if err != nil {
		return "", n.errorf(err)
	}
	for i, o := range ops {
		if o.Perf == "" {
			continue
		}
		b.WriteString(" " + Name(i) + "=" + o.Perf)
		if o.Type != "" {
			b.WriteString(":" + o.Type)
		}
	}
	return b.String(), nil
}

func (n *Note) errorf(err error) error {
	return fmt.Errorf("marker %s:%s at %#x: %w", n.Provider, n.Name, n.PC, err)
}

// Describe is the marker as readelf -n prints it, for messages and -v.
func (n *Note) Describe() string {
	return n.Provider + ":" + n.Name + " at 0x" + strconv.FormatUint(n.Offset, 16)
}
