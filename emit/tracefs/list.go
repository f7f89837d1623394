package tracefs

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
)

// Event is one installed probe (one line of kprobe_events/uprobe_events;
// a multi-probe event lists one line per member).
type Event struct {
	Kind  probe.Kind
	Group string
	Name  string
	Line  string       // as the kernel lists it
	Probe *probe.Probe // the parsed listing line; nil for syntax gprobe does not know
}

// List returns the installed kprobe and uprobe events, kprobes first, in the
// kernel's order. A kind the kernel lacks is skipped.
func (t *FS) List() ([]Event, error) {
	var out []Event
	for _, k := range probe.Kinds {
		b, err := os.ReadFile(t.Path(k.File()))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, t.fileErr(err, k.File())
		}
		evs, err := ParseList(k, string(b))
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	}
	return out, nil
}

// ParseList parses the text of kprobe_events or uprobe_events. Lines are
// parsed for syntax only (paths are not checked: the listing is the truth).
func ParseList(k probe.Kind, text string) ([]Event, error) {
	var out []Event
	opts := &probedef.Options{NoStat: true}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		d, err := probedef.Parse(l, opts)
		if err != nil {
			// A listing gprobe cannot parse (a newer kernel's syntax) still
			// names its event: keep that much so -l and -d work.
			head := strings.Fields(l)[0]
			_, ge, _ := strings.Cut(head, ":")
			g, e, _ := strings.Cut(ge, "/")
			out = append(out, Event{Kind: k, Group: g, Name: e, Line: l})
			continue
		}
		out = append(out, Event{Kind: k, Group: d.GroupOrDefault(), Name: d.Event, Line: l, Probe: d})
	}
	return out, nil
}
