package kallsyms

import (
	"os"
	"strings"
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

func TestFunctions(t *testing.T) {
	k := New([]byte("ffffffff81000000 T _stext\n" +
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
	if _, _, ok := New([]byte("0000000000000000 T _stext\n0000000000000000 T _etext\n")).Text(); ok {
		t.Error("Text() with hidden addresses")
	}
}

// TestKallsymsIndex: lookups by name answer the same before the names
// are indexed (reading the text) and after (the index made once more than
// a few were asked), duplicates and module symbols included.
func TestKallsymsIndex(t *testing.T) {
	text := "ffffffff81000000 T _stext\nffffffff81000010 t dup\nffffffff81000020 t dup\nffffffff81000030 T vfs_read\n" +
		"ffffffffc0000000 t dup\t[loop]\nffffffffc0000010 t mod_only\t[loop]\nffffffff81e00000 T _etext\n"
	names := []string{"dup", "vfs_read", "mod_only", "nosuch", "_etext", "vfs_rea", "t"}
	type answer struct {
		addr uint64
		n    int
	}
	var before []answer
	read := New([]byte(text))
	read.lookups = -1000 // never indexed
	for _, n := range names {
		before = append(before, answer{read.Address(n), read.Count(n)})
	}
	k := New([]byte(text))
	for i := 0; i <= indexAfter; i++ {
		k.Count("vfs_read")
	}
	if k.names == nil || read.names != nil {
		t.Fatal("indexed when it should not, or not when it should")
	}
	for i, n := range names {
		if got := (answer{k.Address(n), k.Count(n)}); got != before[i] {
			t.Errorf("%s: indexed %+v, read %+v", n, got, before[i])
		}
	}
	if before[0] != (answer{0xffffffff81000010, 3}) || before[3] != (answer{}) {
		t.Errorf("read: %+v", before)
	}
}
