package probe

import "testing"

func TestExitEvent(t *testing.T) {
	for _, c := range []struct {
		event string
		exit  Exit
		base  string
	}{
		{"vfs_read__retinsn", ExitInsn, "vfs_read"},
		{"fd_install__tailcall", ExitTailCall, "fd_install"},
		{"vfs_read__retinsn_1", ExitInsn, "vfs_read"},
		{"__do_sys_open__retinsn_12", ExitInsn, "__do_sys_open"},
		{"a__retinsn__tailcall", ExitTailCall, "a__retinsn"},
		{"vfs_read__retinsn_01", NoExit, ""},
		{"vfs_read__retinsn_0", NoExit, ""},
		{"vfs_read__retinsn_x", NoExit, ""},
		{"vfs_read__retinsnx", NoExit, ""},
		{"__retinsn", NoExit, ""},
		{"vfs_read__return", NoExit, ""},
		{"vfs_read", NoExit, ""},
	} {
		exit, base := EventExit(c.event)
		if exit != c.exit || base != c.base {
			t.Errorf("EventExit(%q) = %v, %q; want %v, %q", c.event, exit, base, c.exit, c.base)
		}
	}
	for _, e := range []Exit{ExitInsn, ExitTailCall} {
		name := ExitEvent("getname_flags", e)
		if got, base := EventExit(name); got != e || base != "getname_flags" {
			t.Errorf("%q reads back as %v, %q", name, got, base)
		}
		if got, _ := EventExit(Suffixed(name, 3)); got != e {
			t.Errorf("%q reads back as %v", Suffixed(name, 3), got)
		}
	}
	if ExitEvent("f", NoExit) != "f" {
		t.Error("ExitEvent with NoExit changes the name")
	}
}
