package kallsyms

import (
	"errors"
	"strings"
	"testing"
)

func TestKallsymsSymbols(t *testing.T) {
	n := Read(strings.NewReader("ffffffff81000000 T _text\n" +
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
	k := Read(strings.NewReader(text))
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
	hidden := Read(strings.NewReader("0000000000000000 T _stext\n0000000000000000 t vfs_read\n0000000000000000 T _etext\n"))
	err = hidden.CheckAddress(0xffffffff81234560, "2")
	if !hidden.Hidden || !errors.Is(err, ErrHiddenAddresses) || !strings.Contains(err.Error(), "kernel.kptr_restrict=2") {
		t.Errorf("hidden addresses: %v", err)
	}
	if hidden.Count("vfs_read") != 1 {
		t.Error("names must still count when addresses are hidden")
	}
}

func TestFunctions(t *testing.T) {
	k := Read(strings.NewReader("ffffffff81000000 T _stext\n" +
		"ffffffff81000010 t zeta\nffffffff81000020 T alpha\nffffffff81000030 t zeta\n" +
		"ffffffff81000040 W weak_one\nffffffff82000000 D jiffies\nffffffff82000100 d local_data\n" +
		"ffffffff82100000 B bss_one\nffffffff82100100 b bss_local\nffffffff82200000 R rodata_one\n" +
		"ffffffff82200100 r rodata_local\nffffffff82300000 A abs_one\nffffffff81000050 t $x\n" +
		"ffffffffc0001000 t ext4_sync_fs\t[ext4]\nffffffffc0002000 t ftrace_trampoline\t[__builtin__ftrace]\n" +
		"ffffffff81000060 T .E_copy\nffffffff82209988 T _etext\n"))
	got := strings.Join(k.Functions(func(string) bool { return true }), " ")
	const want = ".E_copy _etext _stext alpha bss_local bss_one jiffies local_data weak_one zeta zeta"
	if got != want {
		t.Errorf("Functions:\n got %s\nwant %s", got, want)
	}
	noUnderscore := strings.Join(k.Functions(func(s string) bool { return !strings.HasPrefix(s, "_") }), " ")
	if noUnderscore != ".E_copy alpha bss_local bss_one jiffies local_data weak_one zeta zeta" {
		t.Errorf("filtered: %s", noUnderscore)
	}
	if lo, hi, ok := k.Text(); !ok || lo != 0xffffffff81000000 || hi != 0xffffffff82209988 {
		t.Errorf("Text() = %x %x %v", lo, hi, ok)
	}
}
