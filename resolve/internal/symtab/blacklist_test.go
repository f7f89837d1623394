package symtab

import (
	"os"
	"slices"
	"sort"
	"testing"

	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// TestImageBlacklist: the blacklist worked out from Debian's 6.1 vmlinux
// is the one its kernel shows in debugfs (testdata: the guest's
// /sys/kernel/debug/kprobes/blacklist, collected by TestQemuSurface61 with
// GPROBE_SAVE_BLACKLIST): the same symbols, at one distance (KASLR).
func TestImageBlacklist(t *testing.T) {
	vmlinux := testenv.Linux61.Vmlinux()
	if !fileExists(vmlinux) {
		testenv.MissingKernel(t, "%s", vmlinux)
	}
	f, err := dwarfinfo.Open(vmlinux)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := NewMap(f, Naming{})
	if err != nil {
		t.Fatal(err)
	}
	img := ImageBlacklist(f, m)
	r, err := os.Open("testdata/kprobe-blacklist-6.1.0-56-cloud-amd64.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	live, err := probedef.ParseBlacklist(r, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	var a, b []key
	// The kernel runs relocated: the distance most same-named entries
	// share.
	votes := map[uint64]int{}
	for _, l := range live.Entries {
		for _, e := range img.Entries {
			if e.Name == l.Name {
				votes[l.Start-e.Start]++
			}
		}
	}
	var bias uint64
	for d, n := range votes {
		if n > votes[bias] {
			bias = d
		}
	}
	for _, e := range img.Entries {
		a = append(a, key{e.Start + bias, e.Name})
	}
	for _, e := range live.Entries {
		b = append(b, key{e.Start, e.Name})
	}
	sort.Slice(a, func(i, j int) bool { return a[i].less(a[j]) })
	sort.Slice(b, func(i, j int) bool { return b[i].less(b[j]) })
	// The kernel lists a NOKPROBE_SYMBOL of its entry text twice (once
	// from the list, once from the area): the same entries.
	b = slices.Compact(b)
	diff := 0
	for i, j := 0, 0; i < len(a) || j < len(b); {
		switch {
		case j == len(b) || i < len(a) && a[i].less(b[j]):
			t.Errorf("only in the image's: %s at %#x", a[i].name, a[i].start-bias)
			i++
			diff++
		case i == len(a) || b[j].less(a[i]):
			t.Errorf("only in the kernel's: %s at %#x", b[j].name, b[j].start)
			j++
			diff++
		default:
			i++
			j++
		}
	}
	t.Logf("%d entries in the image's blacklist, %d in the kernel's, %d differ", len(a), len(b), diff)
}

// key is a blacklist entry's start and name.
type key struct {
	start uint64
	name  string
}

func (x key) less(y key) bool { return x.start < y.start || x.start == y.start && x.name < y.name }
