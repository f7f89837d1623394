package probedef

import (
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
)

// Features are probe-event capabilities a kernel advertises in tracefs
// README (see emit/tracefs.ParseFeatures).
type Features struct {
	MultiProbe      bool // "Create/append/": same GRP/EVENT appends a probe
	HexTypes        bool // "type: ... x8/16/32/64,"
	KretprobeOffset bool // "place (kretprobe): "
	RefCtr          bool // "ref_ctr_offset": uprobe (0xREF) semaphores
	UserAccess      bool // "u]<offset>": +u deref and ustring
	Immediates      bool // "\imm-value,"
	ImmString       bool // "\"imm-string\""
	MaxActive       bool // "r[maxactive]"
	ArgN            bool // "$arg<N>"
	ReturnSuffix    bool // "%return" in a place: SYM%return / PATH:OFF%return
	Arrays          bool // "<type>\[<array-size>\]"
	Fprobes         bool // "f[:[<group>/][<event>]] <func-name>[%return]": fprobe events (f:)
	Tprobes         bool // "t[:[<group>/][<event>]] <tracepoint>": tracepoint probes (t:)
	Eprobes         bool // "e[:[<group>/][<event>]] <attached-group>.<attached-event>": event probes (e:)
	EprobeFilter    bool // "... [if <filter>]" on the e: line: eprobe filters
	BTFArgs         bool // "<argname>": parameters by their BTF names, $arg*
	BTFFields       bool // "<argname>[->field[->field|.field...]]": members through them
	ReturnArgs      bool // "kernel return probes support: $retval, $arg<N>, $comm": entry values at return
	// Types lists the fetch types of README's "type:" lines (nil: all
	// types gprobe knows are allowed).
	Types []string
}

// AllFeatures is what Linux 6.1 offers; the default when README is unknown.
var AllFeatures = Features{MultiProbe: true, HexTypes: true, KretprobeOffset: true, RefCtr: true,
	UserAccess: true, Immediates: true, ImmString: true, MaxActive: true, ArgN: true,
	ReturnSuffix: true, Arrays: true, Eprobes: true, EprobeFilter: true}

// KnownFeatures is every feature gprobe knows, with the argument parser of
// the newest kernels: for reading lines a kernel has already accepted
// (its listings, a recording's definitions), whose kernel is not at hand.
var KnownFeatures = Features{MultiProbe: true, HexTypes: true, KretprobeOffset: true, RefCtr: true,
	UserAccess: true, Immediates: true, ImmString: true, MaxActive: true, ArgN: true,
	ReturnSuffix: true, Arrays: true, Eprobes: true, EprobeFilter: true,
	Fprobes: true, Tprobes: true, BTFArgs: true, BTFFields: true, ReturnArgs: true}

// The first Linux release offering each feature gprobe refuses to use on a
// kernel whose README lacks it (the messages name it).
const (
	sinceFprobes = "6.5"
	sinceEprobes = "5.15"
	sinceFilter  = "6.1"
	sinceRefCtr  = "4.20"
	// BTFArgsSince: parameters by their BTF names (CONFIG_PROBE_EVENTS_BTF_ARGS).
	BTFArgsSince = "6.5"
	// ReturnArgsSince: entry values ($argN) on return probes.
	ReturnArgsSince = "6.9"
)

// KindRequirement says what kernel a kind of probe needs ("fprobe events
// (f:) need Linux 6.5 or later built with CONFIG_FPROBE_EVENTS").
func KindRequirement(k probe.Kind) string {
	switch k {
	case probe.Fprobe:
		return "fprobe events (f:) need Linux " + sinceFprobes + " or later built with CONFIG_FPROBE_EVENTS"
	case probe.Tprobe:
		return "Tracepoint probes (t:) need Linux " + sinceFprobes + " or later built with CONFIG_FPROBE_EVENTS"
	case probe.Eprobe:
		return "Event probes (e:) need Linux " + sinceEprobes + " or later"
	case probe.Uprobe:
		return "uprobe events need a kernel built with CONFIG_UPROBE_EVENTS"
	case probe.UserEvent:
		return "user events (u:) need Linux 6.4 or later built with CONFIG_USER_EVENTS"
	}
	return "kprobe events need a kernel built with CONFIG_KPROBE_EVENTS"
}

// Offers reports whether README offers the kind of probe k.
func (f *Features) Offers(k probe.Kind) bool {
	switch k {
	case probe.Fprobe:
		return f.Fprobes
	case probe.Tprobe:
		return f.Tprobes
	case probe.Eprobe:
		return f.Eprobes
	}
	return true
}

// modern reports whether the kernel parses arguments the way Linux 6.5
// rewrote it (traceprobe_parse_context: BTF names, $argN checked where it
// is used, eprobe fields looked up while parsing, errors located after the
// whole argument is read). README shows it by any of the features that
// came with or after that rewrite.
func (f *Features) modern() bool {
	return f.Fprobes || f.Tprobes || f.BTFArgs || f.ReturnArgs || contains(f.Types, "char") || contains(f.Types, "%pd")
}

// ParseFeatures reads the Features a kernel advertises in its tracefs
// README text (perf greps README rather than trusting the kernel version;
// gprobe does the same).
func ParseFeatures(readme string) Features {
	var f Features
	lines := strings.Split(readme, "\n")
	inTypes := false
	for _, l := range lines {
		if strings.Contains(l, "Create/append/") {
			f.MultiProbe = true
		}
		if i := strings.Index(l, "type: "); i >= 0 && strings.Contains(l[i:], " x8/16/32/64,") {
			f.HexTypes = true
		}
		if strings.Contains(l, "place (kretprobe): ") {
			f.KretprobeOffset = true
		}
		if strings.Contains(l, "ref_ctr_offset") {
			f.RefCtr = true
		}
		if strings.Contains(l, "u]<offset>") {
			f.UserAccess = true
		}
		if strings.Contains(l, `\imm-value,`) {
			f.Immediates = true
		}
		if strings.Contains(l, `imm-string`) {
			f.ImmString = true
		}
		if strings.Contains(l, "r[maxactive]") {
			f.MaxActive = true
		}
		if strings.Contains(l, "$arg<N>") {
			f.ArgN = true
		}
		if strings.Contains(l, "place") && strings.Contains(l, "%return") {
			f.ReturnSuffix = true
		}
		if strings.Contains(l, `<type>\[<array-size>\]`) {
			f.Arrays = true
		}
		if strings.Contains(l, "f[:[<group>/][<event>]] <func-name>") {
			f.Fprobes = true
		}
		if strings.Contains(l, "t[:[<group>/][<event>]] <tracepoint>") {
			f.Tprobes = true
		}
		if strings.Contains(l, "e[:[<group>/][<event>]] <attached-group>.<attached-event>") {
			f.Eprobes = true
			f.EprobeFilter = strings.Contains(l, "[if <filter>]")
		}
		if strings.Contains(l, "<argname>") {
			f.BTFArgs = true
			f.BTFFields = strings.Contains(l, "<argname>[->field")
		}
		if strings.Contains(l, "kernel return probes support:") && strings.Contains(l, "$arg<N>") {
			f.ReturnArgs = true
		}
		// The type list spans lines after "type:" until the next "name:" line.
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "type:") {
			inTypes = true
			t = strings.TrimSpace(strings.TrimPrefix(t, "type:"))
		} else if inTypes && (strings.Contains(t, ": ") || strings.HasSuffix(t, ":") || t == "") {
			inTypes = false
		}
		if inTypes {
			f.Types = append(f.Types, readmeTypes(t)...)
		}
	}
	return f
}

// readmeTypes expands "s8/16/32/64, char, b<bit-width>@..." into type names.
func readmeTypes(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		switch {
		case strings.HasPrefix(item, "b<"):
			out = append(out, "bitfield")
		case strings.HasPrefix(item, "<type>"):
			// array suffix, not a type
		case strings.Contains(item, "/") && !strings.HasPrefix(item, "%"):
			// s8/16/32/64
			parts := strings.Split(item, "/")
			base := strings.TrimRight(parts[0], "0123456789")
			out = append(out, parts[0])
			for _, p := range parts[1:] {
				out = append(out, base+p)
			}
		case strings.HasPrefix(item, "%"):
			for _, p := range strings.Split(item, "/") {
				out = append(out, p)
			}
		default:
			out = append(out, item)
		}
	}
	return out
}
