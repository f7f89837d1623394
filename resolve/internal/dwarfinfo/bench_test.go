package dwarfinfo

import (
	"os"
	"testing"
)

// benchVmlinux opens the real Debian vmlinux (GPROBE_VMLINUX), or skips:
// the scanner's speed matters on kernel-sized DWARF, not on fixtures.
func benchVmlinux(b *testing.B) (*File, []unitHeader) {
	b.Helper()
	path := os.Getenv("GPROBE_VMLINUX")
	if path == "" {
		b.Skip("GPROBE_VMLINUX not set")
	}
	f := open(b, path)
	units, err := f.unitHeaders()
	if err != nil {
		b.Fatal(err)
	}
	return f, units
}

// BenchmarkScanUnits is FindFuncs' per-unit work on every unit, on one
// goroutine: the allocation-free DIE scanner.
func BenchmarkScanUnits(b *testing.B) {
	f, units := benchVmlinux(b)
	s := scanner{f: f, big: false, str: f.Section(".debug_str"),
		lineStr: f.Section(".debug_line_str"), strOffs: f.Section(".debug_str_offsets")}
	match := ExactName("vfs_read")
	b.ReportAllocs()
	for b.Loop() {
		found := 0
		for i := range units {
			refs, err := s.scanUnit(i, &units[i], match)
			if err != nil {
				b.Fatal(err)
			}
			found += len(refs)
		}
		if found != 1 {
			b.Fatalf("%d vfs_read definitions", found)
		}
	}
}

// BenchmarkDecodeScopes decodes every 25th unit's scope tree and file table.
func BenchmarkDecodeScopes(b *testing.B) {
	f, units := benchVmlinux(b)
	b.ReportAllocs()
	for b.Loop() {
		for i := 0; i < len(units); i += 25 {
			if _, err := f.decodeScopes(i, &units[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkUnitsWithFile reads every unit DIE and line-table file list.
func BenchmarkUnitsWithFile(b *testing.B) {
	f, _ := benchVmlinux(b)
	b.ReportAllocs()
	for b.Loop() {
		if us, err := f.UnitsWithFile("fs/read_write.c"); err != nil || len(us) == 0 {
			b.Fatal(us, err)
		}
	}
}

// BenchmarkLoadCFI builds the FDE table of .debug_frame.
func BenchmarkLoadCFI(b *testing.B) {
	f, _ := benchVmlinux(b)
	b.ReportAllocs()
	for b.Loop() {
		f.cfiSecs = nil
		if err := f.loadCFI(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSortedSymbols sorts the symbol table by address.
func BenchmarkSortedSymbols(b *testing.B) {
	f, _ := benchVmlinux(b)
	b.ReportAllocs()
	for b.Loop() {
		if s, err := f.SortedSymbols(); err != nil || s.Len() == 0 {
			b.Fatal(err)
		}
	}
}
