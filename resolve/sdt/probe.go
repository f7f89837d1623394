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

// Consistent makes the probes of one event (the markers of one name)
// define the same arguments, as the kernel requires of the probes of one
// event (a second probe whose argument names or types differ is refused:
// "Argument type or name is different from existing probe"). An argument
// every probe fetches is kept: with its type when all agree; when they
// differ only in signedness, with the type of the fetches that are not
// constants if those agree (a pointer written "8@%rax" in one marker and
// NULL as "-8@$0" in another), else the signed type (-1 written "4@$-1"
// and "-4@%eax"); any other is dropped from all of them, and its name
// returned. perf keeps each marker's own arguments,
// so that an event whose markers differ cannot be added.
func Consistent(ps []probe.Probe) ([]probe.Probe, []string) {
	if len(ps) < 2 {
		return ps, nil
	}
	types := map[string][]string{}    // every fetch's type
	nonConst := map[string][]string{} // the types of fetches that are not constants
	var order []string
	for _, p := range ps {
		for _, a := range p.Args {
			if _, ok := types[a.Name]; !ok {
				order = append(order, a.Name)
			}
			types[a.Name] = append(types[a.Name], a.Type)
			if _, imm := a.Expr.(probe.Imm); !imm {
				nonConst[a.Name] = append(nonConst[a.Name], a.Type)
			}
		}
	}
	keep := map[string]string{} // name -> type
	var dropped []string
	for _, n := range order {
		t, ok := commonType(types[n])
		if ok && len(nonConst[n]) > 0 && len(nonConst[n]) < len(types[n]) {
			if u, agree := commonType(nonConst[n]); agree && u[1:] == t[1:] && !mixedSign(nonConst[n]) {
				t = u
			}
		}
		if ok && len(types[n]) == len(ps) {
			keep[n] = t
		} else {
			dropped = append(dropped, n)
		}
	}
	changed := len(dropped) > 0
	out := make([]probe.Probe, len(ps))
	for i, p := range ps {
		q := p
		q.Args = nil
		for _, a := range p.Args {
			if t, ok := keep[a.Name]; ok {
				changed = changed || a.Type != t
				a.Type = t
				q.Args = append(q.Args, a)
			}
		}
		out[i] = q
	}
	if !changed {
		return ps, nil
	}
	return out, dropped
}

// mixedSign reports whether types differ (in signedness).
func mixedSign(types []string) bool {
	for _, t := range types[1:] {
		if t != types[0] {
			return true
		}
	}
	return false
}

// commonType is the one type of types, or the signed one when they differ
// only in signedness (s32 and u32).
func commonType(types []string) (string, bool) {
	t := types[0]
	for _, u := range types[1:] {
		switch {
		case u == t:
		case len(u) > 1 && len(t) > 1 && u[1:] == t[1:] && (u[0] == 's' || u[0] == 'u') && (t[0] == 's' || t[0] == 'u'):
			t = "s" + t[1:]
		default:
			return "", false
		}
	}
	return t, true
}
