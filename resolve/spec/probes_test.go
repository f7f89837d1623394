package spec

import "testing"

// TestParseProbes: every definition in order; the first error stops it.
func TestParseProbes(t *testing.T) {
	ps, err := ParseProbes([]string{"vfs_read count", "do_sys_open%return $retval"}, Options{})
	if err != nil || len(ps) != 2 || ps[0].Point.Function != "vfs_read" || !ps[1].Point.Return {
		t.Fatalf("%v %v", ps, err)
	}
	if _, err := ParseProbes([]string{"vfs_read", "vfs_read:abc", ""}, Options{}); err == nil || err.Error() != mustErr("vfs_read:abc") {
		t.Errorf("%v, want the error of vfs_read:abc", err)
	}
}

func mustErr(def string) string {
	_, err := ParseProbe(def)
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
