package kallsyms

import (
	"os"
	"testing"
)

const sample = "ffffffff81000000 T _stext\n" +
	"ffffffff81234560 T vfs_read\n" +
	"ffffffff81234560 t vfs_read_alias\n" +
	"ffffffffc0001000 t loop_init\t[loop]\n" +
	"ffffffffc0002000 t vfs_read\t[other]\n" +
	"garbage\n" +
	"ffffffff81e00000 T _etext"

func TestEach(t *testing.T) {
	var got []Symbol
	Each([]byte(sample), func(s Symbol) bool { got = append(got, s); return true })
	if len(got) != 6 {
		t.Fatalf("%d symbols: %+v", len(got), got)
	}
	if s := got[3]; s.Addr != 0xffffffffc0001000 || s.Type != 't' || s.Name != "loop_init" || s.Module != "loop" {
		t.Errorf("module symbol: %+v", s)
	}
	if s := got[5]; s.Name != "_etext" || s.Module != "" {
		t.Errorf("last line without newline: %+v", s)
	}
	n := 0
	Each([]byte(sample), func(Symbol) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("Each went on after false: %d", n)
	}
}

func TestList(t *testing.T) {
	k := New([]byte(sample))
	if k.Hidden {
		t.Error("addresses read as hidden")
	}
	for name, want := range map[string]int{"vfs_read": 2, "vfs_read_alias": 1, "loop_init": 1, "vfs": 0, "read": 0, "T": 0} {
		if got := k.Count(name); got != want {
			t.Errorf("Count(%q) = %d, want %d", name, got, want)
		}
	}
	if a := k.Address("_etext"); a != 0xffffffff81e00000 {
		t.Errorf("Address(_etext) = %#x", a)
	}
	if a := k.Address("nosuch"); a != 0 {
		t.Errorf("Address(nosuch) = %#x", a)
	}
	if !New([]byte("0000000000000000 T _stext\n0000000000000000 T vfs_read\n")).Hidden {
		t.Error("zero addresses not hidden")
	}
}

// TestRunning: the running kernel's list reads, and every line of it is
// well formed.
func TestRunning(t *testing.T) {
	data, err := Read()
	if err != nil {
		t.Skipf("%s: %v", Path, err)
	}
	lines, n := 0, 0
	for _, c := range data {
		if c == '\n' {
			lines++
		}
	}
	Each(data, func(Symbol) bool { n++; return true })
	if n != lines || n == 0 {
		t.Errorf("%d lines, %d symbols read", lines, n)
	}
	if _, err := os.Stat(Path); err != nil {
		t.Error(err)
	}
}
