package disasm

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/arch/arm64/arm64asm"
)

// arm64 fills m for fixed-width, 4-byte aligned arm64 code.
func (m *Map) arm64(known []int) error {
	n := len(m.code)
	for _, k := range known {
		if k >= 0 && k < n && k%4 != 0 {
			return fmt.Errorf("known offset %d: arm64 instructions are 4-byte aligned: %w", k, ErrNotBoundary)
		}
	}
	whole := n &^ 3
	m.starts = make([]int, 0, whole/4+1)
	m.lens = make([]int, 0, whole/4+1)
	for p := 0; p < whole; p += 4 {
		m.add(p, 4)
	}
	if whole < n {
		m.add(whole, 0)
		m.undecodable = []Region{{whole, n}}
	}
	return nil
}

// textARM64 renders one 4-byte instruction in GNU syntax, or as ".inst
// 0x........" (as objdump does) if arm64asm does not know it.
func textARM64(b []byte) (text string) {
	if len(b) != 4 {
		return "(bad)"
	}
	// arm64asm does not know the pointer-authenticating returns.
	switch binary.LittleEndian.Uint32(b) {
	case arm64RetAA:
		return "retaa"
	case arm64RetAB:
		return "retab"
	}
	defer func() {
		if recover() != nil {
			text = fmt.Sprintf(".inst 0x%08x", binary.LittleEndian.Uint32(b))
		}
	}()
	inst, err := arm64asm.Decode(b)
	if err != nil {
		return fmt.Sprintf(".inst 0x%08x", binary.LittleEndian.Uint32(b))
	}
	return arm64asm.GNUSyntax(inst)
}
