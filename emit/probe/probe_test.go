package probe

import "testing"

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
	}
	for _, c := range cases {
		if got := c.p.String(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
