package spec

import (
	"strings"
	"testing"
)

func TestParseFunction(t *testing.T) {
	for _, fn := range []string{"vfs_read", "vfs_read@fs/read_write.c"} {
		e, r, err := ParseFunction(fn)
		if err != nil || e.Point.Return || !r.Point.Return || e.Point.Function != "vfs_read" || r.Point.Function != "vfs_read" {
			t.Errorf("%q: %+v %+v %v", fn, e, r, err)
		}
	}
	for _, fn := range []string{"vfs_read:3", "vfs_read+4", "vfs_read;x", "0x1000", "ev=vfs_read", "vfs_read count", "fs/open.c:3", "vfs_read%return"} {
		if _, _, err := ParseFunction(fn); err == nil || !strings.HasPrefix(err.Error(), `"`+fn+`": `) {
			t.Errorf("%q: %v", fn, err)
		}
	}
}
