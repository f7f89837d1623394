package testenv

import (
	"debug/elf"
	"testing"
)

// ELFSymbols returns the symbol table of the ELF file at path, read with
// debug/elf (an oracle independent of gprobe's own reader).
func ELFSymbols(t testing.TB, path string) []elf.Symbol {
	t.Helper()
	f, syms := openSymbols(t, path)
	f.Close()
	return syms
}

// FuncSymbol returns the function symbol name of the ELF file at path and
// the file offset of its address, which is what a uprobe definition names.
func FuncSymbol(t testing.TB, path, name string) (elf.Symbol, uint64) {
	t.Helper()
	f, syms := openSymbols(t, path)
	defer f.Close()
	for _, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC && int(s.Section) < len(f.Sections) {
			sec := f.Sections[s.Section]
			return s, s.Value - sec.Addr + sec.Offset
		}
	}
	t.Fatalf("%s: no function symbol %s", path, name)
	return elf.Symbol{}, 0
}

// openSymbols opens the ELF file at path and reads its symbol table; the
// caller closes the file.
func openSymbols(t testing.TB, path string) (*elf.File, []elf.Symbol) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		f.Close()
		t.Fatalf("%s: %v", path, err)
	}
	return f, syms
}
