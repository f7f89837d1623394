package debuginfod

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// elfOfSize is an x86-64 ELF file of exactly n bytes (n >= 512) whose
// GNU build-id note holds id: a header, the note, a section of filler
// bytes, the section names and the section headers.
func elfOfSize(id string, n int) []byte {
	desc, err := hex.DecodeString(id)
	if err != nil {
		panic(err)
	}
	le := binary.LittleEndian
	note := le.AppendUint32(nil, 4)
	note = le.AppendUint32(note, uint32(len(desc)))
	note = le.AppendUint32(note, 3) // NT_GNU_BUILD_ID
	note = append(note, "GNU\x00"...)
	note = append(note, desc...)
	for len(note)%4 != 0 {
		note = append(note, 0)
	}
	names := []byte("\x00.note.gnu.build-id\x00.pad\x00.shstrtab\x00")
	const ehdr, shdr, nsec = 64, 64, 4
	fixed := ehdr + len(note) + len(names) + nsec*shdr
	if n < fixed+8 {
		panic("elfOfSize: too small")
	}
	pad := n - fixed
	b := make([]byte, 0, n)
	b = append(b, 0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	b = le.AppendUint16(b, 2)  // ET_EXEC
	b = le.AppendUint16(b, 62) // EM_X86_64
	b = le.AppendUint32(b, 1)
	b = le.AppendUint64(b, 0) // entry
	b = le.AppendUint64(b, 0) // phoff
	shoff := uint64(ehdr + len(note) + pad + len(names))
	b = le.AppendUint64(b, shoff)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint16(b, ehdr)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, shdr)
	b = le.AppendUint16(b, nsec)
	b = le.AppendUint16(b, 3)
	b = append(b, note...)
	for i := 0; i < pad; i++ {
		b = append(b, byte(i*7))
	}
	b = append(b, names...)
	sec := func(name, typ uint32, off, size uint64) {
		b = le.AppendUint32(b, name)
		b = le.AppendUint32(b, typ)
		b = le.AppendUint64(b, 0) // flags
		b = le.AppendUint64(b, 0) // addr
		b = le.AppendUint64(b, off)
		b = le.AppendUint64(b, size)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint64(b, 1)
		b = le.AppendUint64(b, 0)
	}
	sec(0, 0, 0, 0)
	sec(1, 7, ehdr, uint64(len(note)))                         // SHT_NOTE
	sec(20, 1, uint64(ehdr+len(note)), uint64(pad))            // SHT_PROGBITS
	sec(25, 3, uint64(ehdr+len(note)+pad), uint64(len(names))) // SHT_STRTAB
	return b
}

func TestELFOfSize(t *testing.T) {
	for _, n := range []int{512, 5000, 300 << 10} {
		b := elfOfSize(testID, n)
		if len(b) != n {
			t.Errorf("%d bytes, want %d", len(b), n)
		}
		if id, err := dwarfinfo.ReaderBuildID(bytes.NewReader(b)); err != nil || id != testID {
			t.Errorf("build-id %q, %v", id, err)
		}
	}
}
