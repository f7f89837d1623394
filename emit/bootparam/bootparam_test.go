package bootparam

import (
	"errors"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
)

// kernelReads is what Linux 6.1 and 6.12 make of a command line: its
// parameters split as lib/cmdline.c next_arg does (white space outside
// double quotes; quotes toggle and are dropped around a value), the last
// kprobe_event= value kept (strlcpy into COMMAND_LINE_SIZE), commas made
// spaces and definitions split at ';' (setup_boot_kprobe_events).
func kernelReads(cmdline string) []string {
	var value string
	found := false
	args := strings.TrimLeft(cmdline, " \t\n")
	for args != "" {
		inQuote := false
		i := 0
		for ; i < len(args); i++ {
			c := args[i]
			if (c == ' ' || c == '\t' || c == '\n') && !inQuote {
				break
			}
			if c == '"' {
				inQuote = !inQuote
			}
		}
		param := args[:i]
		args = strings.TrimLeft(args[i:], " \t\n")
		if v, ok := strings.CutPrefix(param, Param); ok {
			v = strings.TrimPrefix(v, `"`)
			v = strings.TrimSuffix(v, `"`)
			if len(v) > CommandLineSize-1 {
				v = v[:CommandLineSize-1]
			}
			value, found = v, true
		}
	}
	if !found {
		return nil
	}
	var defs []string
	for _, d := range strings.Split(strings.ReplaceAll(value, ",", " "), ";") {
		if d != "" {
			defs = append(defs, d)
		}
	}
	return defs
}

func parse(t *testing.T, line string) probe.Probe {
	t.Helper()
	p, err := probedef.Parse(line, &probedef.Options{NoStat: true})
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return *p
}

func TestKprobeEvent(t *testing.T) {
	lines := []string{
		"p:probe/do_sys_openat2_L10 do_sys_openat2+115 dfd=%bp:s32 filename_string=+0(%r12):string",
		"r:probe/vfs_read__return vfs_read+0 $retval",
		"r16:probe/ksys_read__return ksys_read+0 ret=$retval:s64",
		"p:probe/getname_flags__retinsn getname_flags+58 %ax",
	}
	var probes []probe.Probe
	for _, l := range lines {
		probes = append(probes, parse(t, l))
	}
	got, err := KprobeEvent(probes)
	if err != nil {
		t.Fatal(err)
	}
	want := "kprobe_event=p:probe/do_sys_openat2_L10,do_sys_openat2+115,dfd=%bp:s32,filename_string=+0(%r12):string;" +
		"r:probe/vfs_read__return,vfs_read+0,$retval;r16:probe/ksys_read__return,ksys_read+0,ret=$retval:s64;" +
		"p:probe/getname_flags__retinsn,getname_flags+58,%ax"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// The kernel reads back the very lines, from anywhere on a command
	// line.
	cl, err := CommandLine(probes)
	if err != nil || cl != want+" ftrace=nop" {
		t.Errorf("CommandLine: %q, %v", cl, err)
	}
	read := kernelReads("console=ttyS0 quiet " + cl + " panic=-1")
	if strings.Join(read, "\n") != strings.Join(lines, "\n") {
		t.Errorf("the kernel would read\n%s", strings.Join(read, "\n"))
	}
}

func TestKprobeEventRefuses(t *testing.T) {
	kp := func(args ...probe.FetchArg) probe.Probe {
		return probe.Probe{Group: "probe", Event: "ev", Target: probe.Location{Symbol: "vfs_read"}, Args: args}
	}
	raw := func(s string) probe.FetchArg { return probe.FetchArg{Expr: probe.Raw(s)} }
	long := make([]probe.Probe, 40)
	for i := range long {
		long[i] = kp(raw("+0(%di):string"), raw("+8(%di):u64"), raw("+16(%di):u64"))
	}
	for _, c := range []struct {
		name   string
		probes []probe.Probe
		why    string
	}{
		{"none", nil, "no probe to define"},
		{"uprobe", []probe.Probe{{Kind: probe.Uprobe, Group: "g", Event: "e", Target: probe.Location{Path: "/bin/sh", Offset: 16}}}, "there is no boot parameter for uprobe events"},
		{"string-immediate", []probe.Probe{kp(raw(`\"a,b":string`))}, "double quote"},
		{"comma-in-name", []probe.Probe{{Group: "probe", Event: "e", Target: probe.Location{Place: "a,b"}}}, "comma, which the kernel turns into a space"},
		{"semicolon", []probe.Probe{kp(raw("x;y"))}, "semicolon"},
		{"quote", []probe.Probe{kp(raw(`\"s":string`))}, "double quote"},
		{"space", []probe.Probe{kp(raw(`a  b`))}, "white space other than single spaces"},
		{"tab", []probe.Probe{kp(raw("a\tb"))}, "control character"},
		{"size", long, "the kernel's command line holds 2047 in all"},
	} {
		_, err := KprobeEvent(c.probes)
		var be *Error
		if !errors.Is(err, ErrDoesNotFit) || !errors.As(err, &be) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v; want ErrDoesNotFit with %q", c.name, err, c.why)
		}
	}
}

// FuzzKprobeEvent: whatever the kernel's grammar accepts either fits, and
// then the kernel reads it back exactly, or is refused with a reason.
func FuzzKprobeEvent(f *testing.F) {
	f.Add("p:probe/vfs_read vfs_read+0 count=%dx:u64", "r:probe/vfs_read__return vfs_read $retval")
	f.Add(`p:g/e vfs_read s=\"a,b":string`, "p:g/f vfs_read+5")
	f.Fuzz(func(t *testing.T, a, b string) {
		var probes []probe.Probe
		var lines []string
		for _, l := range []string{a, b} {
			p, err := probedef.Parse(l, &probedef.Options{NoStat: true, AnyRegister: true})
			if err != nil {
				return
			}
			probes, lines = append(probes, *p), append(lines, p.String())
		}
		param, err := KprobeEvent(probes)
		if err != nil {
			if !errors.Is(err, ErrDoesNotFit) {
				t.Fatalf("%v", err)
			}
			return
		}
		if got := kernelReads(param); strings.Join(got, "\n") != strings.Join(lines, "\n") {
			t.Fatalf("%q reads back as %q", param, got)
		}
	})
}

// TestText: -D's output in each of its forms.
func TestText(t *testing.T) {
	p, err := probedef.Parse("p:probe/vfs_read vfs_read+0", nil)
	if err != nil {
		t.Fatal(err)
	}
	ps := []probe.Probe{*p, *p}
	for _, c := range []struct {
		boot, bootconfig bool
		want             string
	}{
		{false, false, "p:probe/vfs_read vfs_read+0\np:probe/vfs_read vfs_read+0\n"},
		{true, false, "kprobe_event=p:probe/vfs_read,vfs_read+0;p:probe/vfs_read,vfs_read+0 ftrace=nop\n"},
		{false, true, "kernel.ftrace = nop\nftrace.event.kprobes.vfs_read.probes = 'vfs_read+0', 'vfs_read+0'\nftrace.event.kprobes.vfs_read.enable\n"},
	} {
		if got, err := Text(ps, c.boot, c.bootconfig); err != nil || got != c.want {
			t.Errorf("boot %v bootconfig %v: %q, %v; want %q", c.boot, c.bootconfig, got, err, c.want)
		}
	}
	if got, _ := Text(nil, false, false); got != "" {
		t.Errorf("no probes: %q", got)
	}
}
