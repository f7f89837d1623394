package probedef

import (
	"strings"
	"testing"
)

func TestParseFeatures(t *testing.T) {
	readme := "  uprobe_events\t\t- Create/append/remove/show the userspace dynamic events\n" +
		"\t     type: s8/16/32/64, u8/16/32/64, x8/16/32/64, char, string, symbol,\n" +
		"\t           b<bit-width>@<bit-offset>/<container-size>, ustring,\n" +
		"\t           symstr, %pd/%pD, <type>\\[<array-size>\\]\n" +
		"\t    efield: For event probes\n"
	f := ParseFeatures(readme)
	got := strings.Join(f.Types, " ")
	want := "s8 s16 s32 s64 u8 u16 u32 u64 x8 x16 x32 x64 char string symbol bitfield ustring symstr %pd %pD"
	if got != want || !f.MultiProbe || !f.HexTypes || !f.Arrays || f.Immediates {
		t.Errorf("got %+v\ntypes %s\nwant %s", f, got, want)
	}
}
