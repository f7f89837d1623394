package probe

import (
	"reflect"
	"testing"
)

func TestString(t *testing.T) {
	cases := []struct {
		p    Probe
		want string
	}{
		{Probe{Group: "probe", Event: "vfs_read", Target: Location{Symbol: "vfs_read"}},
			"p:probe/vfs_read vfs_read+0"},
		{Probe{Group: "probe", Event: "do_sys_openat2_L16", Target: Location{Symbol: "do_sys_openat2", Offset: 160}},
			"p:probe/do_sys_openat2_L16 do_sys_openat2+160"},
		{Probe{Group: "probe", Event: "vfs_read__return", Return: true, Target: Location{Symbol: "vfs_read"},
			Args: []FetchArg{{Expr: Retval{}}}},
			"r:probe/vfs_read__return vfs_read+0 $retval"},
		{Probe{Group: "probe", Event: "x", Return: true, MaxActive: 16, Target: Location{Module: "ext4", Symbol: "ext4_sync_fs", Offset: 4}},
			"r16:probe/x ext4:ext4_sync_fs+4"},
		{Probe{Group: "probe_prog", Event: "work", Target: Location{Path: "/tmp/prog", Offset: 0x1139},
			Args: []FetchArg{{Name: "n", Expr: Reg("di"), Type: "s32"}}},
			"p:probe_prog/work /tmp/prog:0x1139 n=%di:s32"},
		{Probe{Group: "probe", Event: "vfs_read", Target: Location{Symbol: "vfs_read"},
			Args: []FetchArg{
				{Name: "name", Expr: Mem{Inner: Mem{Off: 40, Inner: Mem{Off: 24, Inner: Reg("di")}}}, Type: "string"},
				{Name: "count", Expr: Reg("dx"), Type: "x64"},
				{Name: "x", Expr: Mem{Off: -16, Inner: Reg("bp")}, Type: "s32"},
				{Expr: Mem{Off: 8, User: true, Inner: Stack(-1)}},
				{Name: "c", Expr: Comm{}, Type: "string"},
				{Name: "a", Expr: Arg(2)},
				{Name: "i", Expr: Imm(-3)},
				{Name: "g", Expr: Symbol{Name: "jiffies"}, Type: "u64"},
				{Name: "h", Expr: Symbol{Name: "jiffies", Off: -8}},
				{Name: "s", Expr: Stack(3)},
			}},
			"p:probe/vfs_read vfs_read+0 name=+0(+40(+24(%di))):string count=%dx:x64 x=-16(%bp):s32 +u8($stack) c=$comm:string a=$arg2 i=\\-3 g=@jiffies+0:u64 h=@jiffies-8 s=$stack3"},
		{Probe{Group: "probe", Event: "abs", Target: Location{Address: 0xffffffff81000010}},
			"p:probe/abs 0xffffffff81000010"},
		{Probe{Kind: Fprobe, Group: "probe", Event: "vfs_read", Target: Location{Symbol: "vfs_read"},
			Args: []FetchArg{{Name: "f_pos", Expr: Mem{Off: 112, Inner: Arg(1)}, Type: "s64"}, {Name: "count", Expr: Arg(3), Type: "u64"}}},
			"f:probe/vfs_read vfs_read f_pos=+112($arg1):s64 count=$arg3:u64"},
		{Probe{Kind: Fprobe, Group: "probe", Event: "vfs_read__return", Return: true, MaxActive: 8, Target: Location{Symbol: "vfs_read"},
			Args: []FetchArg{{Expr: Retval{}}, {Expr: Var{Name: "count"}}, {Expr: Var{Name: "file", Fields: []Member{{Name: "f_path", Arrow: true}, {Name: "dentry"}}}}, {Expr: Args{}}}},
			"f8:probe/vfs_read__return vfs_read%return $retval count file->f_path.dentry $arg*"},
		{Probe{Kind: Tprobe, Group: "probe", Event: "sched_process_exec", Target: Location{Symbol: "sched_process_exec"},
			Args: []FetchArg{{Name: "comm", Expr: Mem{Off: 2976, Inner: Arg(1)}, Type: "string"}}},
			"t:probe/sched_process_exec sched_process_exec comm=+2976($arg1):string"},
		{Probe{Kind: Eprobe, Group: "probe", Event: "openat", Target: Location{Event: EventID{System: "syscalls", Name: "sys_enter_openat"}},
			Args: []FetchArg{{Name: "filename", Expr: Mem{Inner: EventField("filename")}, Type: "ustring"}, {Expr: EventField("dfd")}}, Filter: "dfd == -100"},
			"e:probe/openat syscalls.sys_enter_openat filename=+0($filename):ustring $dfd if dfd == -100"},
	}
	for _, c := range cases {
		if got := c.p.String(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

// TestParseFetchOf: eprobes read $NAME as the attached event's field, other
// kinds as the probe's variables; BTF names and $arg* are typed; anything
// else is kept as written.
func TestParseFetchOf(t *testing.T) {
	for _, c := range []struct {
		k    Kind
		text string
		want Fetch
	}{
		{Eprobe, "$stack", EventField("stack")},
		{Kprobe, "$stack", Stack(-1)},
		{Eprobe, "$comm", Comm{}},
		{Eprobe, "+0($filename)", Mem{Inner: EventField("filename")}},
		{Fprobe, "$arg*", Args{}},
		{Fprobe, "file->f_pos", Var{Name: "file", Fields: []Member{{Name: "f_pos", Arrow: true}}}},
		{Kprobe, "$retval->sk", Var{Name: "$retval", Fields: []Member{{Name: "sk", Arrow: true}}}},
		{Fprobe, "+112($arg1)", Mem{Off: 112, Inner: Arg(1)}},
		{Fprobe, "file-.x", Raw("file-.x")},
		{Fprobe, "$retval1", Raw("$retval1")},
		{Eprobe, "$1x", Raw("$1x")},
	} {
		got := ParseFetchOf(c.k, c.text)
		if !reflect.DeepEqual(got, c.want) || got.String() != c.text {
			t.Errorf("%v %q: got %#v (%q), want %#v", c.k, c.text, got, got.String(), c.want)
		}
	}
}

// TestKinds: each kind's file, error_log subsystem and default group are
// those of the kernel's code.
func TestKinds(t *testing.T) {
	want := map[Kind][3]string{
		Kprobe: {"kprobe_events", "trace_kprobe", "kprobes"},
		Uprobe: {"uprobe_events", "trace_uprobe", "uprobes"},
		Fprobe: {"dynamic_events", "trace_fprobe", "fprobes"},
		Tprobe: {"dynamic_events", "trace_fprobe", "tracepoints"},
		Eprobe: {"dynamic_events", "event_probe", "eprobes"},
		// user_events' own system (it logs nothing in error_log).
		UserEvent: {"dynamic_events", "user_events", "user_events"},
	}
	for _, k := range Kinds {
		if got := [3]string{k.File(), k.Subsystem(), k.DefaultGroup()}; got != want[k] {
			t.Errorf("%v: %v, want %v", k, got, want[k])
		}
	}
}

func TestParseEventID(t *testing.T) {
	for in, want := range map[string]EventID{
		"sched/sched_switch":        {System: "sched", Name: "sched_switch"},
		"syscalls:sys_enter_openat": {System: "syscalls", Name: "sys_enter_openat"},
	} {
		if got, ok := ParseEventID(in); !ok || got != want {
			t.Errorf("ParseEventID(%q) = %+v, %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", "sched", "/x", "x/", "a b/c", "sched/sched\tswitch"} {
		if got, ok := ParseEventID(bad); ok {
			t.Errorf("ParseEventID(%q) = %+v, accepted", bad, got)
		}
	}
}
