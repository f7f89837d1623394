package install

import (
	"errors"
	"strings"
	"testing"
)

func TestKallsymsSymbols(t *testing.T) {
	n := ReadKallsyms(strings.NewReader("ffffffff81000000 T _text\n" +
		"ffffffff81234560 t name_show\nffffffff81234999 t name_show\n" +
		"ffffffffc0001000 t ext4_sync_fs\t[ext4]\nffffffff82000000 D jiffies\n")).Count
	for sym, want := range map[string]int{"name_show": 2, "_text": 1, "ext4_sync_fs": 1, "jiffies": 1, "nosuch": 0} {
		if got := n(sym); got != want {
			t.Errorf("%s: %d, want %d", sym, got, want)
		}
	}
}

func TestKallsymsAddresses(t *testing.T) {
	const text = "ffffffff81000000 T _stext\nffffffff81234560 t vfs_read\nffffffff81e00000 T _etext\n"
	k := ReadKallsyms(strings.NewReader(text))
	if k.Hidden {
		t.Fatal("addresses reported hidden")
	}
	if err := k.CheckAddress(0xffffffff81234560, "0"); err != nil {
		t.Errorf("address in text: %v", err)
	}
	err := k.CheckAddress(0xffffffff9a000000, "0")
	if !errors.Is(err, ErrNotKernelText) || strings.Contains(err.Error(), "\n") {
		t.Errorf("address outside text: %v", err)
	}
	hidden := ReadKallsyms(strings.NewReader("0000000000000000 T _stext\n0000000000000000 t vfs_read\n0000000000000000 T _etext\n"))
	err = hidden.CheckAddress(0xffffffff81234560, "2")
	if !hidden.Hidden || !errors.Is(err, ErrHiddenAddresses) || !strings.Contains(err.Error(), "kernel.kptr_restrict=2") {
		t.Errorf("hidden addresses: %v", err)
	}
	if hidden.Count("vfs_read") != 1 {
		t.Error("names must still count when addresses are hidden")
	}
}
