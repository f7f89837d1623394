// Package disasm finds instruction boundaries in machine code and the
// instructions by which a function leaves (Exits), for the architectures
// package disasm/arch describes.
//
// It exists so that a probe offset can be checked before it is handed to the
// kernel, which refuses a kprobe that does not start an instruction, and so
// that a function's returns can be probed where they happen. The package
// does not guess: where it cannot decode bytes with certainty it says so,
// and the caller decides what to do.
//
// Nothing in this package panics on any input.
package disasm

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/gprobe/gprobe/disasm/arch"
)

// Sentinel errors. Errors returned by this package wrap one of these; test
// with errors.Is.
var (
	// ErrNotBoundary: the offset is certainly not the start of an instruction.
	ErrNotBoundary = errors.New("not an instruction boundary")
	// ErrUndecodable: the offset lies in bytes that could not be decoded, so
	// whether it starts an instruction is unknown.
	ErrUndecodable = errors.New("undecodable instruction bytes")
)

// Region is a half-open byte range [Start, End) of code.
type Region struct {
	Start, End int
}

// String formats r as "start-end" (end exclusive).
func (r Region) String() string { return fmt.Sprintf("%d-%d", r.Start, r.End) }

func (r Region) contains(off int) bool { return r.Start <= off && off < r.End }

// Map is the result of Boundaries: which offsets of one function's code start
// an instruction, which certainly do not, and which are unknown. A Map is
// immutable and safe for concurrent use. The zero Map describes empty code.
type Map struct {
	arch arch.Arch
	code []byte // private copy, used to name instructions

	// starts is sorted and unique; lens[i] is the length of the instruction
	// at starts[i], or 0 if that instruction's length is unknown (it begins
	// an undecodable region).
	starts []int
	lens   []int

	// undecodable is sorted and disjoint. Every region begins at an offset
	// in starts whose length is 0.
	undecodable []Region
}

// Boundaries decodes code, the bytes of one function, and returns a Map of
// the offsets at which instructions start.
//
// known lists offsets known to be instruction starts, such as line-table
// addresses; order and duplicates do not matter, offsets outside
// [0, len(code)) are ignored, and offset 0 is always treated as known.
// Decoding runs linearly from each known offset. When it meets bytes it
// cannot decode (including an instruction cut off by the end of code) it does
// not guess: the bytes from the failure point up to the next known offset
// (or the end of code) become an undecodable region, and decoding resumes at
// that known offset. The failure point itself is still reported as a
// boundary, since the instruction before it ended there.
//
// On x86-64 the decoder and the known offsets can disagree: an instruction
// decoded from one known offset may run across the next. The decoder must
// then have lost synchronisation somewhere in between, and it cannot tell
// where, so the whole stretch between the two known offsets is reported as
// undecodable (its first offset stays a boundary, being known).
//
// On arm64 every instruction is 4 bytes and 4-byte aligned: boundaries are the
// multiples of 4, a tail shorter than 4 bytes is undecodable, and a known
// offset that is not a multiple of 4 is an error wrapping ErrNotBoundary.
//
// The only other error is one wrapping arch.ErrUnsupported. Boundaries never
// panics.
func Boundaries(isa arch.Arch, code []byte, known []int) (*Map, error) {
	m := &Map{arch: isa, code: slices.Clone(code)}
	switch isa {
	case arch.AMD64:
		m.decodeSegments(normalizeKnown(known, len(code)), decodeX86)
	case arch.ARM64:
		if err := m.arm64(known); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("arch %v: %w", isa, arch.ErrUnsupported)
	}
	return m, nil
}

// normalizeKnown returns the sorted, unique known offsets in [0, n), always
// including 0 when n > 0.
func normalizeKnown(known []int, n int) []int {
	if n == 0 {
		return nil
	}
	ks := make([]int, 0, len(known)+1)
	ks = append(ks, 0)
	for _, k := range known {
		if k > 0 && k < n {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return slices.Compact(ks)
}

// decodeFunc decodes the instruction at the start of b and returns its length,
// or ok=false if the bytes cannot be decoded with certainty. It must not
// return a length greater than len(b).
type decodeFunc func(b []byte) (length int, ok bool)

// decodeSegments decodes code linearly between consecutive known offsets.
func (m *Map) decodeSegments(known []int, decode decodeFunc) {
	n := len(m.code)
	for i, k := range known {
		end := n
		if i+1 < len(known) {
			end = known[i+1]
		}
		segStarts, segLens := len(m.starts), len(m.lens)
		for p := k; p < end; {
			l, ok := decode(m.code[p:])
			if !ok || l <= 0 || p+l > n {
				m.add(p, 0)
				m.undecodable = append(m.undecodable, Region{p, end})
				break
			}
			if p+l > end {
				// Ran across a known offset: distrust the whole segment.
				m.starts, m.lens = m.starts[:segStarts], m.lens[:segLens]
				m.add(k, 0)
				m.undecodable = append(m.undecodable, Region{k, end})
				break
			}
			m.add(p, l)
			p += l
		}
	}
}

func (m *Map) add(start, length int) {
	m.starts = append(m.starts, start)
	m.lens = append(m.lens, length)
}

// Arch returns the architecture the Map was decoded for.
func (m *Map) Arch() arch.Arch { return m.arch }

// Len returns the length of the decoded code in bytes.
func (m *Map) Len() int { return len(m.code) }

// Boundaries returns the sorted offsets known to start instructions. The slice is
// a copy.
func (m *Map) Boundaries() []int { return slices.Clone(m.starts) }

// Undecodable returns the sorted, disjoint undecodable regions. Each begins at
// an offset in Boundaries (an instruction whose length is unknown) and covers the
// bytes whose status is unknown. The slice is a copy.
func (m *Map) Undecodable() []Region { return slices.Clone(m.undecodable) }

// index returns the position of the last start <= off, or -1.
func (m *Map) index(off int) int {
	return sort.SearchInts(m.starts, off+1) - 1
}

// region returns the undecodable region containing off, if any.
func (m *Map) region(off int) (Region, bool) {
	i := sort.Search(len(m.undecodable), func(i int) bool { return m.undecodable[i].End > off })
	if i < len(m.undecodable) && m.undecodable[i].contains(off) {
		return m.undecodable[i], true
	}
	return Region{}, false
}

// IsBoundary reports whether an instruction starts at off. It returns true or
// false with a nil error when that is certain, and false with an error
// wrapping ErrUndecodable when off lies inside an undecodable region (the first
// offset of a region is a boundary). Offsets outside [0, Len()) are not
// boundaries.
func (m *Map) IsBoundary(off int) (bool, error) {
	if off < 0 || off >= len(m.code) {
		return false, nil
	}
	if i := m.index(off); i >= 0 && m.starts[i] == off {
		return true, nil
	}
	if r, ok := m.region(off); ok {
		return false, fmt.Errorf("offset %d lies in undecodable bytes %v: %w", off, r, ErrUndecodable)
	}
	return false, nil
}

// Check returns nil if an instruction starts at off. Otherwise it returns an
// error wrapping ErrUndecodable if that is unknown, or ErrNotBoundary if off
// is certainly not a boundary; in the latter case the message names the
// instruction containing off, e.g. "offset 3 is inside a 5-byte instruction
// at offset 0 (callq .+0x0)", or says that off is outside the code.
func (m *Map) Check(off int) error {
	ok, err := m.IsBoundary(off)
	switch {
	case err != nil:
		return err
	case ok:
		return nil
	case off < 0 || off >= len(m.code):
		return fmt.Errorf("offset %d is outside the %d bytes of code: %w", off, len(m.code), ErrNotBoundary)
	}
	if start, length, text, ok := m.Insn(off); ok {
		return fmt.Errorf("offset %d is inside a %d-byte instruction at offset %d (%s): %w",
			off, length, start, text, ErrNotBoundary)
	}
	// Unreachable if the Map is consistent; say what we can.
	return fmt.Errorf("offset %d: %w", off, ErrNotBoundary)
}

// Insn returns the instruction containing off: its start offset, length and
// a disassembly in GNU syntax. ok is false if off is outside the code, or lies
// in an undecodable region (including the first byte of one, whose
// instruction has an unknown length).
func (m *Map) Insn(off int) (start, length int, text string, ok bool) {
	start, length, ok = m.insn(off)
	if !ok {
		return 0, 0, "", false
	}
	b := m.code[start : start+length]
	switch m.arch {
	case arch.AMD64:
		text = textX86(b)
	case arch.ARM64:
		text = textARM64(b)
	}
	return start, length, text, true
}

// insn is Insn without the text.
func (m *Map) insn(off int) (start, length int, ok bool) {
	if off < 0 || off >= len(m.code) {
		return 0, 0, false
	}
	i := m.index(off)
	if i < 0 || m.lens[i] == 0 || off >= m.starts[i]+m.lens[i] {
		return 0, 0, false
	}
	return m.starts[i], m.lens[i], true
}
