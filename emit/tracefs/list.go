package tracefs

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
)

// Event is one installed probe (one line of kprobe_events, uprobe_events
// or dynamic_events; a multi-probe event lists one line per member).
type Event struct {
	Kind  probe.Kind
	Group string
	Name  string
	Line  string       // as the kernel lists it
	Probe *probe.Probe // the parsed listing line; nil for syntax gprobe does not know
}

// List returns the installed probe events: kprobes (kprobe_events), then
// uprobes (uprobe_events), then fprobes, tprobes and eprobes
// (dynamic_events), each file in the kernel's order. A file the kernel
// lacks is skipped.
func (t *FS) List() ([]Event, error) {
	var out []Event
	for _, k := range []probe.Kind{probe.Kprobe, probe.Uprobe, probe.Fprobe} {
		name := k.File()
		b, err := os.ReadFile(t.Path(name))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, t.fileErr(err, name)
		}
		text := string(b)
		if name == "dynamic_events" {
			text = dynamicKinds(text)
		}
		evs, err := ParseList(k, text)
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	}
	return out, nil
}

// dynamicKinds keeps the lines of dynamic_events that only it lists
// (fprobes, tprobes, eprobes): kprobes and uprobes have their own files,
// and gprobe does not manage synthetic events.
func dynamicKinds(text string) string {
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" && probedef.KindOf(l).Dynamic() {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// ParseList parses the text of kprobe_events, uprobe_events or the probe
// lines of dynamic_events (k is the kind of the file's lines; a line of
// dynamic_events is of the kind its first letter says). Lines are parsed
// for syntax only, with every feature gprobe knows (the listing is the
// truth: the kernel accepted them).
func ParseList(k probe.Kind, text string) ([]Event, error) {
	var out []Event
	opts := &probedef.Options{NoStat: true, AnyRegister: true, Features: &probedef.KnownFeatures}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		lk := k
		if probedef.KindOf(l).Dynamic() {
			lk = probedef.KindOf(l)
		}
		d, err := probedef.Parse(l, opts)
		if err != nil {
			// A listing gprobe cannot parse (a newer kernel's syntax) still
			// names its event: keep that much so -l and -d work.
			head := strings.Fields(l)[0]
			_, ge, _ := strings.Cut(head, ":")
			g, e, _ := strings.Cut(ge, "/")
			out = append(out, Event{Kind: lk, Group: g, Name: e, Line: l})
			continue
		}
		out = append(out, Event{Kind: lk, Group: d.GroupOrDefault(), Name: d.Event, Line: l, Probe: d})
	}
	return out, nil
}
