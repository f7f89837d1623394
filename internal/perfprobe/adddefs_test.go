package perfprobe

import (
	"errors"
	"testing"

	"github.com/gprobe/gprobe/resolve/spec"
)

// TestAddDefs: raw lines and PROBEDEFs keep their order, the --from file
// follows them, the modern kinds' requests come last; a PROBEDEF that
// does not parse is an error.
func TestAddDefs(t *testing.T) {
	items, specs, modern, err := AddDefs([]string{"vfs_read count", "p:g/e do_sys_open", "vfs_write"}, "defs.txt", false, spec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 4 || len(specs) != 2 || len(modern) != 0 {
		t.Fatalf("items %d, specs %d, modern %d", len(items), len(specs), len(modern))
	}
	if items[0].Req == nil || items[0].Req.Point != "vfs_read" || len(items[0].Req.Args) != 1 || items[0].Req.Args[0] != "count" ||
		len(items[1].Lines) != 1 || items[1].Lines[0] != "p:g/e do_sys_open" || items[2].Req.Point != "vfs_write" || items[3].From != "defs.txt" {
		t.Errorf("items %+v", items)
	}
	items, specs, modern, err = AddDefs([]string{"vfs_read%return $retval", "p:g/e do_sys_open"}, "", true, spec.Options{})
	if err != nil || len(specs) != 0 || len(modern) != 1 || modern[0] != "vfs_read%return $retval" || len(items) != 2 ||
		len(items[0].Lines) != 1 || items[1].Req == nil || items[1].Req.Point != "" {
		t.Errorf("dynamic: items %+v, specs %v, modern %v, err %v", items, specs, modern, err)
	}
	if _, _, _, err := AddDefs([]string{"vfs_read", "vfs_read%retrun"}, "", false, spec.Options{}); err == nil {
		t.Error("a bad PROBEDEF parsed")
	}
}

// TestCheckAdd: definitions or a --from file are needed; --maxactive,
// when given, within the kernel's range.
func TestCheckAdd(t *testing.T) {
	if err := CheckAdd(nil, "", 0, false); !errors.Is(err, ErrNothingToAdd) {
		t.Errorf("nothing: %v", err)
	}
	if err := CheckAdd(nil, "defs.txt", 0, false); err != nil {
		t.Errorf("--from: %v", err)
	}
	if err := CheckAdd([]string{"vfs_read"}, "", 16, true); err != nil {
		t.Errorf("--maxactive 16: %v", err)
	}
	for _, n := range []int{0, 4097} {
		if err := CheckAdd([]string{"vfs_read"}, "", n, true); err == nil || errors.Is(err, ErrNothingToAdd) {
			t.Errorf("--maxactive %d: %v", n, err)
		}
	}
	if err := CheckAdd([]string{"vfs_read"}, "", 0, false); err != nil {
		t.Errorf("--maxactive not given: %v", err)
	}
}
