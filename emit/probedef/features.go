package probedef

import "strings"

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
	// Types lists the fetch types of README's "type:" lines (nil: all
	// types gprobe knows are allowed).
	Types []string
}

// AllFeatures is what Linux 6.1 offers; the default when README is unknown.
var AllFeatures = Features{MultiProbe: true, HexTypes: true, KretprobeOffset: true, RefCtr: true,
	UserAccess: true, Immediates: true, ImmString: true, MaxActive: true, ArgN: true,
	ReturnSuffix: true, Arrays: true}

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
