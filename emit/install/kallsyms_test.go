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

// TestSymbolize: SYM+OFF maps onto the text symbol holding it (perf -l's
// _text+N), the best-named of several at one address; data symbols,
// module symbols and hidden addresses do not count.
func TestSymbolize(t *testing.T) {
	k := ReadKallsyms(strings.NewReader("ffffffff81000000 T _text\nffffffff81000000 T startup_64\nffffffff81000100 t secondary\n" +
		"ffffffff81200000 T inode_permission\nffffffff81200200 T generic_permission\nffffffff82000000 D some_data\n" +
		"ffffffffc0000000 t mod_fn\t[loop]\n"))
	for _, c := range []struct {
		sym  string
		off  uint64
		name string
		fn   uint64
		ok   bool
	}{
		{"_text", 0x200000, "inode_permission", 0, true},
		{"_text", 0x200010, "inode_permission", 0x10, true},
		{"_text", 0, "startup_64", 0, true},
		{"_text", 0x180, "secondary", 0x80, true},
		{"inode_permission", 0x200, "generic_permission", 0, true},
		{"nosuch", 0, "", 0, false},
	} {
		name, fn, ok := k.Symbolize(c.sym, c.off)
		if name != c.name || fn != c.fn || ok != c.ok {
			t.Errorf("%s+%d: %s+%d %v, want %s+%d %v", c.sym, c.off, name, fn, ok, c.name, c.fn, c.ok)
		}
	}
	hidden := ReadKallsyms(strings.NewReader("0000000000000000 T _text\n0000000000000000 T inode_permission\n"))
	if _, _, ok := hidden.Symbolize("_text", 0x10); ok {
		t.Error("symbolized with hidden addresses")
	}
}

// TestInText: a symbol between _stext and _etext is in the kernel's text,
// an __init one is not, an unknown one cannot be told.
func TestInText(t *testing.T) {
	k := ReadKallsyms(strings.NewReader("ffffffff81000000 T _stext\nffffffff81200000 T inode_permission\n" +
		"ffffffff81e00000 T _etext\nffffffff83000000 T vfs_caches_init\n"))
	for _, c := range []struct {
		sym       string
		in, known bool
	}{{"inode_permission", true, true}, {"vfs_caches_init", false, true}, {"nosuch", false, false}} {
		if in, known := k.InText(c.sym); in != c.in || known != c.known {
			t.Errorf("%s: in %v known %v", c.sym, in, known)
		}
	}
	if _, err := Check("p:probe/vfs_caches_init vfs_caches_init+0", Options{Symbols: k}); !errors.Is(err, ErrNotKernelText) {
		t.Errorf("a probe on an __init function: %v", err)
	}
}
