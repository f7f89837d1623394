package lines

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"testing"
)

// BenchmarkReadTable decodes every line program of the real Debian vmlinux
// (GPROBE_VMLINUX), rows included.
func BenchmarkReadTable(b *testing.B) {
	path := os.Getenv("GPROBE_VMLINUX")
	if path == "" {
		b.Skip("GPROBE_VMLINUX not set")
	}
	ef, err := elf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer ef.Close()
	var s Sections
	for _, sec := range []struct {
		name string
		dst  *[]byte
	}{{".debug_line", &s.Line}, {".debug_str", &s.Str}, {".debug_line_str", &s.LineStr}} {
		if *sec.dst, err = ef.Section(sec.name).Data(); err != nil {
			b.Fatal(err)
		}
	}
	s.Order = binary.LittleEndian
	// The programs follow one another; 32-bit DWARF lengths only.
	var offs []uint64
	for off := uint64(0); off+4 <= uint64(len(s.Line)); off += 4 + uint64(binary.LittleEndian.Uint32(s.Line[off:])) {
		offs = append(offs, off)
	}
	b.ReportAllocs()
	for b.Loop() {
		rows := 0
		for _, off := range offs {
			t, err := ReadTable(s, off, "/build", 8)
			if err != nil {
				b.Fatal(err)
			}
			rows += len(t.Rows)
		}
		if rows == 0 {
			b.Fatal("no rows")
		}
	}
}
