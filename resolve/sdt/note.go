// Package sdt reads the SDT (USDT) markers of a user-space binary — the
// .note.stapsdt notes that <sys/sdt.h>, systemtap's dtrace and the
// DTRACE_PROBE macros leave in Python, the JVM, libstdc++, PostgreSQL and
// many daemons — and turns each into the uprobe `perf probe` 6.1 defines
// for it:
//
//	$ readelf -n /usr/bin/python3.11
//	    Provider: python
//	    Name: function__entry
//	    Location: 0x00000000004f20a1, Base: 0x00000000008cc5a0, Semaphore: 0x0000000000a84260
//	    Arguments: 8@%rbp 8@%r12 -4@%eax
//	→ p:sdt_python/function__entry /usr/bin/python3.11:0xf20a1(0x683260) arg1=%bp:u64 arg2=%r12:u64 arg3=%ax:s32
//
// The place is the marker's address moved by the prelink adjustment (the
// .stapsdt.base section's address against the base the note records) and
// turned into a file offset through the program headers; the semaphore, a
// 16-bit counter the marker's code tests before doing the work of its
// arguments, becomes the uprobe's reference counter "(0xREF_CTR_OFFSET)",
// which the kernel increments while the probe exists. Each operand
// ("N@OP": N bytes, negative for signed) becomes a fetch argument named
// argI after its position, with perf's type for its size (see [Operands]).
//
// The package reads notes and translates operands with perf 6.1's rules
// (tools/perf/util/symbol-elf.c, util/probe-file.c and
// arch/{x86,arm64}/util/perf_regs.c), and goes further where perf drops an
// operand the kernel can fetch (constants, arm64 register-relative
// operands): [Note.PerfLine] is perf's line, byte for byte, and
// [Note.Probe] gprobe's.
package sdt

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Sections and the note owner perf looks for (util/symbol-elf.h).
const (
	NoteSection  = ".note.stapsdt"
	BaseSection  = ".stapsdt.base"
	ProbeSection = ".probes" // where <sys/sdt.h> puts semaphores
	noteOwner    = "stapsdt"
	noteType     = 3
)

var (
	// ErrNoNotes: the file has no SDT markers (no .note.stapsdt note
	// section, or an empty one); perf's -ENOENT.
	ErrNoNotes = errors.New("no SDT markers")
	// ErrMalformed: a note that cannot be read (too short for its
	// addresses, its provider or name not terminated); perf then ignores
	// every marker of the file.
	ErrMalformed = errors.New("malformed SDT note")
)

// Note is one SDT marker.
type Note struct {
	Provider, Name string
	// Args is the operand string as the note holds it ("8@%rbp 8@%r12
	// -4@%eax"); "" when the marker has no arguments (perf also reads an
	// argument string that starts with ':' as none).
	Args string
	// PC, Base and Semaphore are the note's three addresses as written:
	// the marker's address, the link-time address of .stapsdt.base, and
	// the semaphore's address (0 = none).
	PC, Base, Semaphore uint64

	// Offset is the file offset of the marker: the uprobe's place.
	Offset uint64
	// RefCtr is the file offset of the semaphore, 0 when the marker has
	// none: the uprobe's reference counter.
	RefCtr uint64

	// perfOffset and perfRefCtr are what perf 6.1 computes, from the
	// sections alone (the same numbers for binaries laid out as linkers
	// lay them out).
	perfOffset, perfRefCtr uint64
}

// File is the markers of one binary.
type File struct {
	Machine elf.Machine
	Class   elf.Class
	Notes   []Note // in the order of the note section
}

// Open reads the markers of the ELF file at path. A file without markers
// gives an error wrapping ErrNoNotes.
func Open(path string) (*File, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sf, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sf, nil
}

// Read reads the markers of an ELF file as perf's get_sdt_note_list does:
// the first section named .note.stapsdt must be a note section that is not
// allocated; its notes owned by "stapsdt" are the markers, and the first
// such note of another type than 3 ends the list.
func Read(f *elf.File) (*File, error) {
	sf := &File{Machine: f.Machine, Class: f.Class}
	sec := f.Section(NoteSection)
	if sec == nil || sec.Type != elf.SHT_NOTE || sec.Flags&elf.SHF_ALLOC != 0 {
		return nil, ErrNoNotes
	}
	data, err := sectionData(sec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", NoteSection, err)
	}
	align := uint64(4)
	if sec.Addralign == 8 {
		align = 8 // libelf's ELF_T_NHDR8 notes
	}
	notes, err := parseSection(data, f.Class, f.ByteOrder, align)
	if err != nil {
		return nil, err
	}
	l := layoutOf(f)
	for i := range notes {
		l.place(&notes[i])
	}
	sf.Notes = notes
	if len(sf.Notes) == 0 {
		return nil, ErrNoNotes
	}
	return sf, nil
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }

// parseSection reads the markers of a note section's contents.
func parseSection(data []byte, class elf.Class, order binary.ByteOrder, align uint64) ([]Note, error) {
	var notes []Note
	for off := uint64(0); off+12 <= uint64(len(data)); {
		namesz := uint64(order.Uint32(data[off:]))
		descsz := uint64(order.Uint32(data[off+4:]))
		typ := order.Uint32(data[off+8:])
		nameOff := off + 12
		descOff := nameOff + alignUp(namesz, align)
		next := descOff + alignUp(descsz, align)
		if namesz > uint64(len(data)) || descsz > uint64(len(data)) || next > uint64(len(data)) {
			break // libelf stops at a note that does not fit
		}
		if namesz == uint64(len(noteOwner)+1) && bytes.Equal(data[nameOff:nameOff+namesz], []byte(noteOwner+"\x00")) {
			if typ != noteType {
				break
			}
			n, err := parseNote(data[descOff:descOff+descsz], class, order)
			if err != nil {
				return nil, fmt.Errorf("note %d at offset %#x of %s: %w", len(notes)+1, off, NoteSection, err)
			}
			notes = append(notes, n)
		}
		off = next
	}
	return notes, nil
}

// maxNoteSection bounds what Read reads of a note section (libjvm.so's,
// with 532 markers, is 40 KiB).
const maxNoteSection = 64 << 20

func sectionData(s *elf.Section) ([]byte, error) {
	if s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	if s.Size > maxNoteSection {
		return nil, fmt.Errorf("%w: %d bytes", ErrMalformed, s.Size)
	}
	b := make([]byte, s.Size)
	n, err := io.ReadFull(s.Open(), b)
	if err != nil {
		return nil, fmt.Errorf("%w: section truncated at %d of %d bytes", ErrMalformed, n, s.Size)
	}
	return b, nil
}

// parseNote reads a note's descriptor: three addresses, then
// "provider\0name\0args\0" (perf's populate_sdt_note).
func parseNote(desc []byte, class elf.Class, order binary.ByteOrder) (Note, error) {
	var n Note
	size := 8
	if class == elf.ELFCLASS32 {
		size = 4
	}
	if len(desc) < 3*size+3 {
		return n, fmt.Errorf("%w: %d bytes", ErrMalformed, len(desc))
	}
	addr := func(i int) uint64 {
		if size == 4 {
			return uint64(order.Uint32(desc[i*4:]))
		}
		return order.Uint64(desc[i*8:])
	}
	n.PC, n.Base, n.Semaphore = addr(0), addr(1), addr(2)
	rest := desc[3*size:]
	end := bytes.IndexByte(rest, 0)
	if end < 0 {
		return n, fmt.Errorf("%w: provider not terminated", ErrMalformed)
	}
	n.Provider, rest = string(rest[:end]), rest[end+1:]
	end = bytes.IndexByte(rest, 0)
	if end < 0 {
		// perf reads on past the note (strdup); the name is what the
		// note holds.
		n.Name = string(rest)
		return n, nil
	}
	n.Name, rest = string(rest[:end]), rest[end+1:]
	// No arguments: nothing left, an empty string, or one starting with ':'.
	if len(rest) == 0 || rest[0] == ':' || rest[0] == 0 {
		return n, nil
	}
	if end = bytes.IndexByte(rest, 0); end >= 0 {
		rest = rest[:end]
	}
	n.Args = string(rest)
	return n, nil
}

// layout is what placing a marker needs from the file: the sections perf
// uses and the loadable segments.
type layout struct {
	class        elf.Class
	base, probes *elf.Section
	segments     []*elf.Prog
}

func layoutOf(f *elf.File) layout {
	l := layout{class: f.Class, base: f.Section(BaseSection), probes: f.Section(ProbeSection)}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			l.segments = append(l.segments, p)
		}
	}
	return l
}

// place computes a note's file offsets, perf's and gprobe's.
//
// perf (sdt_adjust_loc, sdt_adjust_refctr) adds the file offset of
// .stapsdt.base minus the note's base to the address, and subtracts the
// address-to-offset distance of .probes from the semaphore; it leaves
// either unchanged when the section is missing or at offset 0. That is
// right when the marker lies in the segment of .stapsdt.base and the
// semaphore in that of .probes, as linkers lay binaries out. gprobe
// applies the prelink adjustment (the address of .stapsdt.base minus the
// note's base) and maps each address through the loadable segment that
// holds it; an address no segment holds (a relocatable object) keeps
// perf's number.
func (l layout) place(n *Note) {
	n.perfOffset, n.perfRefCtr = n.PC, n.Semaphore
	var adjust uint64
	if l.base != nil && l.base.Offset != 0 {
		n.perfOffset = l.wrap(n.PC + l.base.Offset - n.Base)
		adjust = l.base.Addr - n.Base
	}
	if n.Semaphore != 0 && l.probes != nil && l.probes.Offset != 0 {
		n.perfRefCtr = l.wrap(n.Semaphore - (l.probes.Addr - l.probes.Offset))
	}
	n.Offset = n.perfOffset
	if off, ok := l.fileOffset(l.wrap(n.PC + adjust)); ok {
		n.Offset = off
	}
	n.RefCtr = n.perfRefCtr
	if n.Semaphore != 0 {
		if off, ok := l.fileOffset(l.wrap(n.Semaphore + adjust)); ok {
			n.RefCtr = off
		}
	}
}

// wrap keeps 32-bit arithmetic in 32 bits, as perf's Elf32_Addr does.
func (l layout) wrap(v uint64) uint64 {
	if l.class == elf.ELFCLASS32 {
		return uint64(uint32(v))
	}
	return v
}

// fileOffset maps a virtual address to its file offset through the
// loadable segment holding it in the file.
func (l layout) fileOffset(addr uint64) (uint64, bool) {
	for _, p := range l.segments {
		if addr >= p.Vaddr && addr-p.Vaddr < p.Filesz {
			return addr - p.Vaddr + p.Off, true
		}
	}
	return 0, false
}
