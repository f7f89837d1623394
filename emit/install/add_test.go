package install

import "testing"

func TestRawDefinitionOrProbedef(t *testing.T) {
	for s, raw := range map[string]bool{
		"p:probe/x vfs_read+0":            true,
		"r:probe/x__return vfs_read+0":    true,
		"r16:x vfs_read":                  true,
		"p:x /bin/sh:0x10 a=%di":          true,
		"p:grp/ev=vfs_read":               false, // GROUP:EVENT=FUNC
		"p:10":                            false, // function p, line 10
		"p:10 x":                          false,
		"vfs_read:3 count":                false,
		"p:probe/x":                       true, // raw, then refused: "No probe place"
		"probe:vfs_read=vfs_read $retval": false,
		"f:probe/vfs_read vfs_read count": true,
		"f8:x vfs_read%return $retval":    true,
		"t:probe/kfree kfree $arg*":       true,
		"e:probe/openat syscalls.sys_enter_openat $filename:ustring": true,
		"e:10 x":            false, // function e, line 10
		"t8:x kfree":        false, // no maxactive on t:
		"f:grp/ev=vfs_read": false,
	} {
		if got := IsDefinition(s); got != raw {
			t.Errorf("IsDefinition(%q) = %v", s, got)
		}
	}
}
