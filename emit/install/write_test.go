package install

import (
	"strings"
	"testing"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/testenv"
)

// TestWriteSome: on this machine's uprobes, an event of a several-event
// request that the kernel refuses (a second place appended to an event
// with other argument names: EEXIST) is left out with a warning and the
// others are written; when every event of a request is refused, nothing
// stays; Write leaves nothing either.
func TestWriteSome(t *testing.T) {
	fs := tracefs.At(testenv.Tracefs(t))
	const grp = "gprobe_writesome"
	clean := func() {
		evs, _ := fs.List()
		for _, e := range evs {
			if e.Group == grp {
				_ = fs.Delete(e.Kind, e.Group, e.Name)
			}
		}
	}
	clean()
	defer clean()
	ev := func(r *Request, event, line string) Event {
		return Event{Req: r, Probe: probe.Probe{Kind: probe.Uprobe, Group: grp, Event: event}, Line: "p:" + grp + "/" + event + " /bin/true:" + line}
	}
	pattern := &Request{Point: "x*"}
	plan := []Event{ev(pattern, "e", "0x10 a=%di"), ev(pattern, "e", "0x20 b=%si"), ev(pattern, "f", "0x30")}
	var warnings []string
	written, err := WriteSome(fs, plan, func(s string) { warnings = append(warnings, s) })
	if err != nil || len(written) != 2 || written[0].Line != plan[0].Line || written[1].Line != plan[2].Line {
		t.Fatalf("written %v, %v", written, err)
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "x*: ") || !strings.HasSuffix(warnings[0], "; skip it.") {
		t.Errorf("warnings %q", warnings)
	}
	var names []string
	evs, _ := fs.List()
	for _, e := range evs {
		if e.Group == grp {
			names = append(names, e.Name)
		}
	}
	if strings.Join(names, " ") != "e f" {
		t.Errorf("installed %q", names)
	}
	clean()
	// Every event of a request refused: rolled back, the refusal returned.
	if _, err := fs.List(); err != nil {
		t.Fatal(err)
	}
	other := &Request{Point: "y*"}
	plan = []Event{ev(other, "g", "0x10 a=%di"), ev(pattern, "e", "0x10 a=%di"), ev(pattern, "e", "0x20 b=%si")}
	plan[1].Line = "p:" + grp + "/g /bin/true:0x20 b=%si" // refused: g exists with a
	plan[2].Line = "p:" + grp + "/g /bin/true:0x30 c=%si"
	if _, err := WriteSome(fs, plan, func(string) {}); err == nil {
		t.Error("every event of a request refused, yet no error")
	}
	evs, _ = fs.List()
	for _, e := range evs {
		if e.Group == grp {
			t.Errorf("left behind: %s", e.Line)
		}
	}
}
