package bootparam

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
)

// xbcRead is a model of what lib/bootconfig.c makes of the flat form
// Render writes: each line KEY, or KEY = VALUE[, VALUE...] with values
// quoted by ' or " (no escape) or bare words; keys in the order they first
// appear.
func xbcRead(t *testing.T, text string) (keys []string, vals map[string][]string) {
	t.Helper()
	vals = map[string][]string{}
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		key, rest, hasVal := strings.Cut(line, " = ")
		if _, dup := vals[key]; dup {
			t.Fatalf("key %s defined twice (the kernel refuses it)", key)
		}
		keys = append(keys, key)
		vals[key] = nil
		if !hasVal {
			if strings.ContainsAny(line, " =") {
				t.Fatalf("bad line %q", line)
			}
			continue
		}
		for rest != "" {
			var v string
			switch q := rest[0]; q {
			case '\'', '"':
				end := strings.IndexByte(rest[1:], q)
				if end < 0 {
					t.Fatalf("unterminated quote in %q", line)
				}
				v, rest = rest[1:1+end], rest[2+end:]
			default:
				end := strings.IndexAny(rest, ",;#}")
				if end < 0 {
					end = len(rest)
				}
				v, rest = strings.TrimSpace(rest[:end]), rest[end:]
			}
			vals[key] = append(vals[key], v)
			if rest != "" {
				if !strings.HasPrefix(rest, ", ") {
					t.Fatalf("bad array in %q", line)
				}
				rest = rest[2:]
			}
		}
	}
	return keys, vals
}

// TestBootconfig: what the kernel defines from the printed config is the
// probes given, in the group kprobes, a return probe as a p: line on
// SYM%return; the events are enabled and the buffer expanded.
func TestBootconfig(t *testing.T) {
	lines := []string{
		"p:probe/do_sys_openat2 do_sys_openat2+0 dfd=%di:s32 filename_string=+0(%si):string",
		"r:probe/vfs_read__return vfs_read+0 $retval",
		"p:probe/vfs_read_L12 vfs_read+88 f_pos=+0(%r12):s64 s=\\\"a\":string",
		"p:probe/inl do_open+10",
		"p:probe/inl path_openat+20",
	}
	var probes []probe.Probe
	for _, l := range lines {
		probes = append(probes, parse(t, l))
	}
	cfg, err := Bootconfig(probes)
	if err != nil {
		t.Fatal(err)
	}
	text, err := cfg.Render()
	if err != nil {
		t.Fatal(err)
	}
	want := `kernel.ftrace = nop
ftrace.event.kprobes.do_sys_openat2.probes = 'do_sys_openat2+0 dfd=%di:s32 filename_string=+0(%si):string'
ftrace.event.kprobes.do_sys_openat2.enable
ftrace.event.kprobes.vfs_read__return.probes = 'vfs_read%return $retval'
ftrace.event.kprobes.vfs_read__return.enable
ftrace.event.kprobes.vfs_read_L12.probes = 'vfs_read+88 f_pos=+0(%r12):s64 s=\"a":string'
ftrace.event.kprobes.vfs_read_L12.enable
ftrace.event.kprobes.inl.probes = 'do_open+10', 'path_openat+20'
ftrace.event.kprobes.inl.enable
`
	if text != want {
		t.Fatalf("got:\n%s\nwant:\n%s", text, want)
	}
	// What trace_boot makes of it: each value after "p:kprobes/EVENT ".
	keys, vals := xbcRead(t, text)
	var got []probe.Probe
	for _, k := range keys {
		if ev, ok := strings.CutSuffix(strings.TrimPrefix(k, "ftrace.event.kprobes."), ".probes"); ok && ev != k {
			for _, v := range vals[k] {
				got = append(got, parse(t, "p:kprobes/"+ev+" "+v))
			}
		}
	}
	if len(got) != len(probes) {
		t.Fatalf("the kernel would define %d probes, want %d", len(got), len(probes))
	}
	for i, p := range probes {
		g := got[i]
		if g.Group != "kprobes" || g.Event != p.Event || g.Return != p.Return || g.Target.Symbol != p.Target.Symbol ||
			g.Target.Offset != p.Target.Offset || len(g.Args) != len(p.Args) {
			t.Errorf("probe %d: the kernel reads %q, want the probe %q", i, g.String(), p.String())
		}
		for j := range g.Args {
			if g.Args[j].String() != p.Args[j].String() {
				t.Errorf("probe %d argument %d: %q, want %q", i, j, g.Args[j], p.Args[j])
			}
		}
	}
}

func TestBootconfigRefuses(t *testing.T) {
	long := "p:probe/long vfs_read+0"
	for i := range 25 {
		long += fmt.Sprintf(" a%d=%%di:s32", i)
	}
	for _, c := range []struct {
		line, why string
		err       error
	}{
		{"p:probe_true/main /bin/true:0x1040", "", ErrUprobe},
		{"f:probe/vfs_read vfs_read", "not fprobe events", ErrBootconfig},
		{"t:probe/sched_switch sched_switch", "not tprobe events", ErrBootconfig},
		{"e:probe/openat syscalls.sys_enter_openat", "not eprobe events", ErrBootconfig},
		{"r16:probe/vfs_read__return vfs_read+0", "maxactive", ErrBootconfig},
		{long, "boot-time tracing composes it in 254", ErrBootconfig},
		{"p:probe/" + strings.Repeat("x", 60) + " vfs_read+0", "the name is too long", ErrBootconfig},
	} {
		p, perr := probedef.Parse(c.line, &probedef.Options{NoStat: true, Features: &probedef.KnownFeatures})
		if perr != nil {
			t.Fatalf("%s: %v", c.line, perr)
		}
		_, err := Bootconfig([]probe.Probe{*p})
		if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: got %v, want %v with %q", c.line, err, c.err, c.why)
		}
	}
	if _, err := Bootconfig(nil); !errors.Is(err, ErrBootconfig) {
		t.Errorf("no probes: %v", err)
	}
	// Values holding both quotes, or control characters, cannot be written.
	for _, e := range []Event{
		{System: "kprobes", Name: "x", Filter: `comm == "a'b"`},
		{System: "kprobes", Name: "x", Actions: []string{"traceon\t"}},
		{System: "kprobes", Name: "x.y"},
		{System: "kprobes", Name: "x", Fields: []string{"u64 lat"}},
		{System: "synthetic", Name: "x", Fields: []string{strings.Repeat("u64 field_name_x; ", 20)}},
	} {
		if _, err := (&Config{Events: []Event{e}}).Render(); !errors.Is(err, ErrBootconfig) {
			t.Errorf("%+v: got %v, want ErrBootconfig", e, err)
		}
	}
	// A value holding ' is quoted with ".
	c := &Config{Events: []Event{{System: "kprobes", Name: "x", Filter: `comm == 'sh'`, Enable: true}}}
	if text, err := c.Render(); err != nil || text != "ftrace.event.kprobes.x.filter = \"comm == 'sh'\"\nftrace.event.kprobes.x.enable\n" {
		t.Errorf("got %q, %v", text, err)
	}
	// An event set up twice.
	c = &Config{Events: []Event{{System: "synthetic", Name: "x", Fields: []string{"u64 a"}}, {System: "synthetic", Name: "x"}}}
	if _, err := c.Render(); !errors.Is(err, ErrBootconfig) {
		t.Errorf("event twice: %v", err)
	}
}
