package dwarfexpr

import "testing"

// BenchmarkDecode decodes a mix of the location expressions the kernel's
// DWARF holds: registers, fbreg/breg with SLEB offsets, pieces, entry values.
func BenchmarkDecode(b *testing.B) {
	exprs := [][]byte{
		{0x55},                               // DW_OP_reg5
		{0x91, 0xb0, 0x7f},                   // DW_OP_fbreg -80
		{0x77, 0x80, 0x01},                   // DW_OP_breg7 128
		{0x55, 0x93, 0x04, 0x54, 0x93, 0x04}, // reg5 piece 4 reg4 piece 4
		{0xa3, 0x01, 0x55, 0x9f},             // entry_value(reg5) stack_value
		{0x03, 0x40, 0x10, 0x00, 0x81, 0xff, 0xff, 0xff, 0xff}, // DW_OP_addr
		{0x92, 0x31, 0xff, 0xff, 0xff, 0xff, 0x0f},             // bregx 49 large
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, e := range exprs {
			if _, err := Decode(e, 8); err != nil {
				b.Fatal(err)
			}
		}
	}
}
