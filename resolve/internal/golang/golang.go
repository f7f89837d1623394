// Package golang is what gprobe knows about programs built by the Go
// toolchain, read from the program itself:
//
//   - whether a binary, and a compile unit, is Go ([IsGo], [IsGoUnit]),
//     and whether a function keeps the running goroutine's g in the g
//     register ([KeepsG]);
//   - Go's types as its DWARF describes them ([Types]): strings, slices
//     and interfaces are small structs of two or three words, maps,
//     channels and functions are pointers;
//   - the layout of the runtime's goroutine, runtime.g ([ReadRuntime]),
//     for $goid and for pairing a call's entry with its return by
//     goroutine and stack depth;
//   - the register ABI ([Assign]): which registers (or stack slots) hold a
//     function's arguments and results, since Go's DWARF gives results no
//     location;
//   - how a Go value becomes fetch arguments ([Fetch]): a string is its
//     pointer and length (or its text and length), a slice its pointer,
//     length and capacity, an interface its type word and data word.
//
// Nothing here touches tracefs; probes are built by resolve.
package golang

import (
	"debug/elf"
	"errors"
	"strings"

	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// Sentinel errors; returned errors wrap one of them.
var (
	// ErrNotGo: the binary, unit or function is not Go code.
	ErrNotGo = errors.New("not Go code")
	// ErrNoRuntime: the binary's DWARF has no runtime.g to read offsets
	// from.
	ErrNoRuntime = errors.New("no runtime.g in the debug information")
	// ErrUnsupported: a Go value a probe cannot fetch as asked.
	ErrUnsupported = errors.New("not supported")
	// ErrNoField: a field, method of access or index the value does not
	// have.
	ErrNoField = errors.New("no such field")
)

// LangGo is DW_LANG_Go, the DW_AT_language of units the Go compiler
// writes.
const LangGo = 0x16

// IsGo reports whether f was built by the Go toolchain: its Go build id
// note (.note.go.buildid) or its build information (.go.buildinfo).
func IsGo(f *dwarfinfo.File) bool {
	return f != nil && IsGoELF(f.ELF)
}

// IsGoELF is IsGo for an ELF file read by debug/elf.
func IsGoELF(f *elf.File) bool {
	return f != nil && (f.Section(".note.go.buildid") != nil || f.Section(".go.buildinfo") != nil)
}

// IsGoUnit reports whether cu was compiled from Go (not C code linked in
// with cgo).
func IsGoUnit(cu *dwarfinfo.CU) bool { return cu != nil && cu.Language == LangGo }

// KeepsG reports whether a function of a Go unit, declared in the source
// file declFile, keeps the running goroutine's g in the g register (%r14
// on x86-64, %x28 on arm64) from its entry to its returns: code the Go
// compiler wrote does (its register ABI reserves the register), assembly
// (a .s file) need not: ABI0 code on x86-64 reloads or reuses %r14, and
// the runtime's assembly switches goroutines.
func KeepsG(cu *dwarfinfo.CU, declFile string) bool {
	return IsGoUnit(cu) && !strings.HasSuffix(declFile, ".s")
}
