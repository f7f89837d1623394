package dwarfinfo

import (
	"encoding/binary"
	"os"
	"testing"
)

// A note with the GNU build-id among others, as /sys/kernel/notes has
// (Xen notes first).
var kernelNotes = []byte{
	4, 0, 0, 0, 6, 0, 0, 0, 6, 0, 0, 0, 'X', 'e', 'n', 0, 'l', 'i', 'n', 'u', 'x', 0, 0, 0,
	4, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 0xde, 0xad, 0xbe, 0xef,
}

func TestNoteBuildID(t *testing.T) {
	if got := NoteBuildID(kernelNotes, binary.LittleEndian); got != "deadbeef" {
		t.Errorf("NoteBuildID = %q", got)
	}
	if got := NoteBuildID(kernelNotes[:len(kernelNotes)-1], binary.LittleEndian); got != "" {
		t.Errorf("truncated note: %q", got)
	}
	// The running kernel's, when readable.
	if b, err := os.ReadFile("/sys/kernel/notes"); err == nil {
		if id := NoteBuildID(b, binary.NativeEndian); len(id) < 16 {
			t.Errorf("/sys/kernel/notes: build-id %q", id)
		}
	}
}

func FuzzNoteBuildID(f *testing.F) {
	f.Add(kernelNotes)
	f.Fuzz(func(t *testing.T, b []byte) {
		NoteBuildID(b, binary.LittleEndian)
		NoteBuildID(b, binary.BigEndian)
	})
}
