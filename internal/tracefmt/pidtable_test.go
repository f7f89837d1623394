package tracefmt

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestPIDTable checks the per-pid search against the whole-listing index,
// for the same lookups, before and after the table switches to the index.
func TestPIDTable(t *testing.T) {
	var b strings.Builder
	for pid := 1; pid <= 200; pid++ {
		fmt.Fprintf(&b, "%d task-%d\n", pid, pid)
	}
	b.WriteString("7 renamed \n")                 // a later line wins, trailing blanks go
	b.WriteString("12\n +13 plus\n0x10 hex\nx\n") // not lines of the listing
	b.WriteString("300 with space inside")        // no final newline
	text := b.String()
	want := func(pid int) (string, bool) {
		switch {
		case pid == 7:
			return "renamed", true
		case pid == 300:
			return "with space inside", true
		case pid >= 1 && pid <= 200:
			return "task-" + strconv.Itoa(pid), true
		}
		return "", false
	}
	pids := []int{7, 300, 12, 13, 16, 0, -1, 201, 1, 200}
	for i := 20; i < 100; i++ {
		pids = append(pids, i) // past indexAfter: the rest come from the index
	}
	lazy := NewPIDTable(text)
	full := NewPIDTable(text)
	all := full.All()
	for _, pid := range pids {
		w, wok := want(pid)
		if got, ok := lazy.Lookup(pid); got != w || ok != wok {
			t.Errorf("Lookup(%d) = %q, %v; want %q, %v", pid, got, ok, w, wok)
		}
		if got, ok := all[pid]; got != w || ok != wok {
			t.Errorf("All()[%d] = %q, %v; want %q, %v", pid, got, ok, w, wok)
		}
	}
	if !lazy.full {
		t.Errorf("%d distinct lookups did not switch to the index", len(pids))
	}
	if len(all) != 201 {
		t.Errorf("All() has %d pids, want 201", len(all))
	}
	tg := NewPIDTable("10 10\n11 10\n12 bad\n")
	if tg.Int(11) != 10 || tg.Int(12) != 0 || tg.Int(13) != 0 {
		t.Errorf("Int: %d %d %d, want 10 0 0", tg.Int(11), tg.Int(12), tg.Int(13))
	}
	var empty *PIDTable
	if _, ok := empty.Lookup(1); ok || empty.Int(1) != 0 {
		t.Error("a nil table found a pid")
	}
}

func FuzzPIDTable(f *testing.F) {
	f.Add("1 a\n2 b\n1 c\n", 1)
	f.Add(" 3 x\n3 y ", 3)
	f.Fuzz(func(t *testing.T, text string, pid int) {
		lazy, full := NewPIDTable(text), NewPIDTable(text)
		got, ok := lazy.Lookup(pid)
		w, wok := full.All()[pid]
		if got != w || ok != wok {
			t.Fatalf("Lookup(%d) = %q, %v; index has %q, %v", pid, got, ok, w, wok)
		}
	})
}
