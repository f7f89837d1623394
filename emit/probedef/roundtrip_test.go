package probedef

import (
	"reflect"
	"testing"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
)

// TestRoundTrip: every probe gprobe writes reads back to an equal Probe
// (typed fetches stay typed, no spelling is kept for canonical text), and
// a hand-written line keeps its spelling.
func TestRoundTrip(t *testing.T) {
	probes := []probe.Probe{
		{Group: "probe", Event: "vfs_read", Target: probe.Location{Symbol: "vfs_read"}},
		{Group: "probe", Event: "do_sys_openat2_L16", Target: probe.Location{Symbol: "do_sys_openat2", Offset: 160}},
		{Group: "probe", Event: "vfs_read__return", Return: true, Target: probe.Location{Symbol: "vfs_read"},
			Args: []probe.FetchArg{{Expr: probe.Retval{}}, {Name: "r", Expr: probe.Retval{}, Type: "s64"}}},
		{Group: "probe", Event: "x", Return: true, MaxActive: 16, Target: probe.Location{Module: "ext4", Symbol: "ext4_sync_fs"}},
		{Kind: probe.Uprobe, Group: "probe_prog", Event: "work", Target: probe.Location{Path: "/bin/sh", Offset: 0x1139},
			Args: []probe.FetchArg{{Name: "n", Expr: probe.Reg("di"), Type: "s32"}}},
		{Kind: probe.Uprobe, Group: "probe_prog", Event: "sem", Return: true,
			Target: probe.Location{Path: "/bin/sh", Offset: 0x10, RefCtr: 0x20, HasRefCtr: true}},
		{Group: "probe", Event: "vfs_read", Target: probe.Location{Symbol: "vfs_read"},
			Args: []probe.FetchArg{
				{Name: "name", Expr: probe.Mem{Inner: probe.Mem{Off: 40, Inner: probe.Mem{Off: 24, Inner: probe.Reg("di")}}}, Type: "string"},
				{Name: "count", Expr: probe.Reg("dx"), Type: "x64"},
				{Name: "x", Expr: probe.Mem{Off: -16, Inner: probe.Reg("bp")}, Type: "s32"},
				{Name: "b", Expr: probe.Mem{Off: 8, Inner: probe.Reg("di")}, Type: "b3@1/32"},
				{Name: "c", Expr: probe.Comm{}, Type: "string"},
				{Name: "i", Expr: probe.Imm(-3)},
				{Name: "g", Expr: probe.Symbol{Name: "jiffies"}, Type: "u64"},
				{Name: "h", Expr: probe.Symbol{Name: "jiffies", Off: -8}},
				{Name: "s", Expr: probe.Stack(3)},
				{Name: "sp", Expr: probe.Stack(-1)},
				{Name: "a", Expr: probe.Arg(2)},
				{Name: "arr", Expr: probe.Mem{Inner: probe.Reg("si")}, Type: "u8[4]"},
			}},
		{Kind: probe.Uprobe, Group: "probe_prog", Event: "u", Target: probe.Location{Path: "/bin/sh", Offset: 0x10},
			Args: []probe.FetchArg{{Name: "p", Expr: probe.Mem{Off: -8, User: true, Inner: probe.Reg("sp")}, Type: "ustring"}}},
		{Group: "probe", Event: "abs", Target: probe.Location{Address: 0xffffffff81000010}},
		// The kinds and fetch arguments of Linux 6.12's dynamic_events.
		{Kind: probe.Fprobe, Group: "probe", Event: "vfs_read", Target: probe.Location{Symbol: "vfs_read"},
			Args: []probe.FetchArg{{Name: "f_pos", Expr: probe.Mem{Off: 112, Inner: probe.Arg(1)}, Type: "s64"}, {Name: "count", Expr: probe.Arg(3), Type: "x64"}}},
		{Kind: probe.Fprobe, Group: "probe", Event: "vfs_read__return", Return: true, MaxActive: 16, Target: probe.Location{Symbol: "vfs_read"},
			Args: []probe.FetchArg{{Expr: probe.Retval{}}, {Name: "count", Expr: probe.Arg(3), Type: "x64"},
				{Name: "f_pos", Expr: probe.Mem{Off: 112, Inner: probe.Arg(1)}, Type: "s64"}}},
		{Kind: probe.Fprobe, Group: "fprobes", Event: "vfs_read__entry", Target: probe.Location{Symbol: "vfs_read"},
			Args: []probe.FetchArg{{Expr: probe.Args{}}}},
		{Kind: probe.Fprobe, Group: "g", Event: "btf", Target: probe.Location{Symbol: "vfs_read"},
			Args: []probe.FetchArg{{Expr: probe.Var{Name: "count"}}, {Name: "pos", Expr: probe.Var{Name: "file", Fields: []probe.Member{{Name: "f_pos", Arrow: true}}}},
				{Name: "name", Expr: probe.Var{Name: "file", Fields: []probe.Member{{Name: "f_path", Arrow: true}, {Name: "dentry"}, {Name: "d_name", Arrow: true}, {Name: "name"}}}, Type: "string"}}},
		{Kind: probe.Fprobe, Group: "g", Event: "ret", Return: true, Target: probe.Location{Symbol: "vfs_read"},
			Args: []probe.FetchArg{{Name: "r", Expr: probe.Retval{}, Type: "s64"}, {Name: "file", Expr: probe.Var{Name: "file"}}}},
		{Kind: probe.Tprobe, Group: "probe", Event: "kfree", Target: probe.Location{Symbol: "kfree"},
			Args: []probe.FetchArg{{Name: "site", Expr: probe.Arg(1), Type: "symbol"}, {Name: "p", Expr: probe.Var{Name: "ptr"}}}},
		{Kind: probe.Eprobe, Group: "probe", Event: "openat", Target: probe.Location{Event: probe.EventID{System: "syscalls", Name: "sys_enter_openat"}},
			Args: []probe.FetchArg{{Name: "path", Expr: probe.Mem{Inner: probe.EventField("filename")}, Type: "ustring"}, {Name: "dfd", Expr: probe.EventField("dfd"), Type: "s32"}}},
		{Kind: probe.Eprobe, Group: "probe", Event: "cwd", Target: probe.Location{Event: probe.EventID{System: "syscalls", Name: "sys_enter_openat"}},
			Args: []probe.FetchArg{{Name: "c", Expr: probe.Comm{}, Type: "string"}}, Filter: "dfd == -100"},
		{Group: "probe", Event: "vfs_read__return", Return: true, Target: probe.Location{Symbol: "vfs_read"},
			Args: []probe.FetchArg{{Expr: probe.Retval{}}, {Name: "count", Expr: probe.Arg(3)}, {Name: "f_pos", Expr: probe.Mem{Off: 112, Inner: probe.Arg(1)}, Type: "s64"}}},
	}
	opts := &Options{Arch: arch.AMD64, Stat: RegularFile, Features: readmeFeatures(t, "6.12"), BTF: testBTF, EventFields: testEventFields}
	for _, p := range probes {
		line := p.String()
		got, err := Parse(line, opts)
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		if !reflect.DeepEqual(*got, p) {
			t.Errorf("%s reads back as\n%#v\nwant\n%#v", line, *got, p)
		}
	}
	// Hand-written spellings are kept: the Probe prints back as written.
	for _, line := range []string{
		"p:g/e vfs_read %ax",
		"p:g/e vfs_read+0x10 a=+0x10(%di):u32",
		"p:g/e vfs_read%return $retval",
		"p:g/e /bin/sh:10%return(0x20)",
		"p:g/e /bin/sh:0x0000000000001139",
		"f:g/e vfs_read $retval",
		"e:g/e syscalls/sys_enter_openat $dfd",
	} {
		got, err := Parse(line, opts)
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		if got.String() != line {
			t.Errorf("%s prints back as %s", line, got.String())
		}
		if got.Target.Canonical() {
			t.Errorf("%s: the written place was not kept", line)
		}
	}
}
