package bootparam

import (
	"fmt"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
)

// Text is how -D prints probes, each line ending in a newline: their
// definitions, one a line; with boot, the kernel command line that defines
// them at boot (CommandLine); with bootconfig, the bootconfig file's lines
// (Bootconfig).
func Text(probes []probe.Probe, boot, bootconfig bool) (string, error) {
	var s string
	var err error
	switch {
	case boot:
		s, err = CommandLine(probes)
	case bootconfig:
		s, err = Bootconfig(probes)
	default:
		var b strings.Builder
		for _, p := range probes {
			b.WriteString(p.String() + "\n")
		}
		return b.String(), nil
	}
	if err != nil {
		return "", err
	}
	return s + "\n", nil
}

// Bootconfig returns probes as the lines of a bootconfig file
// (Documentation/trace/boottime-trace.rst) that define them at boot, as
// the kernel reads them: "ftrace.event.kprobes.EVENT.probes = 'DEF'", the
// probes of consecutive events of one name on one line, comma-separated.
// DEF is the definition without its "p:GROUP/EVENT " head, a return
// probe's place with "%return" (the kernel's boot-time events are kprobes
// whose place says it). The kernel puts every such event in the group
// kprobes.
//
// perf 6.1 (--bootconfig) writes the key ".probe", which the kernel does
// not read, and drops the "%return" of return probes.
func Bootconfig(probes []probe.Probe) (string, error) {
	var b strings.Builder
	prev := ""
	for i, p := range probes {
		def, err := bootconfigDef(p)
		if err != nil {
			return "", err
		}
		if i > 0 && p.Event == prev {
			b.WriteString(", " + def)
			continue
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "ftrace.event.kprobes.%s.probes = %s", p.Event, def)
		prev = p.Event
	}
	return b.String(), nil
}

// bootconfigDef is p's definition as a bootconfig value, quoted.
func bootconfigDef(p probe.Probe) (string, error) {
	line := p.String()
	switch {
	case p.Kind != probe.Kprobe:
		return "", &Error{Definition: line, Reason: fmt.Sprintf("the kernel defines only kprobes at boot, not %s events", p.Kind), Bootconfig: true}
	case p.MaxActive != 0:
		return "", &Error{Definition: line, Reason: "a boot-time return probe takes the kernel's default maxactive", Bootconfig: true}
	}
	_, def, _ := strings.Cut(line, " ")
	if p.Return {
		place, args, _ := strings.Cut(def, " ")
		def = strings.TrimSpace(place + "%return " + args)
	}
	if strings.Contains(def, "'") {
		// Only a string immediate (\"...") holds one: with its double
		// quote, no bootconfig quoting can hold the value.
		return "", &Error{Definition: line, Reason: "it holds both quotes, which a bootconfig value cannot", Bootconfig: true}
	}
	return "'" + def + "'", nil
}
