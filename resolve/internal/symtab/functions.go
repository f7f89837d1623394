package symtab

import (
	"debug/elf"
	"sort"
	"strings"

	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// KernelFunctions lists a kernel image's function names as perf -F does:
// named function and label symbols of executable sections (perf splits a
// vmlinux's other sections into maps of their own), aliases and duplicates
// included, those match keeps, sorted.
func KernelFunctions(f *dwarfinfo.File, match func(string) bool) ([]string, error) {
	sections := f.ELF.Sections
	var out []string
	err := f.Symbols(func(s dwarfinfo.Symbol) {
		if len(s.RawName) == 0 || s.Sect == elf.SHN_UNDEF || s.Sect == elf.SHN_ABS || int(s.Sect) >= len(sections) {
			return
		}
		if sections[s.Sect].Flags&elf.SHF_EXECINSTR == 0 {
			return
		}
		switch s.Type {
		case elf.STT_FUNC, elf.STT_GNU_IFUNC:
		case elf.STT_NOTYPE:
			if s.Vis == elf.STV_HIDDEN || s.Vis == elf.STV_INTERNAL {
				return
			}
		default:
			return
		}
		if IsMappingSymbol(f.Machine, s.RawName) {
			return
		}
		if n := string(s.RawName); match(n) {
			out = append(out, n)
		}
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// DSOFunctions is perf -F on a module or a user binary: every name of the
// DSO's symbol map (neither is loaded as a kernel image, so data objects
// and labels of text and data sections are listed too), aliases included,
// with plt the @plt entries perf synthesizes for a user binary, those match
// keeps, sorted.
func DSOFunctions(f *dwarfinfo.File, plt bool, match func(string) bool) ([]string, error) {
	var out []string
	err := f.Symbols(func(s dwarfinfo.Symbol) {
		if _, ok := InModuleMap(f, s); ok && match(string(s.RawName)) {
			out = append(out, string(s.RawName))
		}
	})
	if err != nil {
		return nil, err
	}
	if plt {
		for _, n := range PLTNames(f.ELF) {
			if match(n) {
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// InModuleMap reports whether perf's dso__load_sym keeps a module file's
// symbol (functions, objects, and labels of text and data sections, in
// allocated sections), and returns its section.
func InModuleMap(f *dwarfinfo.File, s dwarfinfo.Symbol) (*elf.Section, bool) {
	sections := f.ELF.Sections
	if len(s.RawName) == 0 || s.Sect == elf.SHN_UNDEF || s.Sect >= elf.SHN_LORESERVE || int(s.Sect) >= len(sections) {
		return nil, false
	}
	sec := sections[s.Sect]
	if sec.Flags&elf.SHF_ALLOC == 0 || IsMappingSymbol(f.Machine, s.RawName) {
		return nil, false
	}
	switch s.Type {
	case elf.STT_FUNC, elf.STT_GNU_IFUNC, elf.STT_OBJECT:
		return sec, true
	case elf.STT_NOTYPE:
		// perf's elf_sym__is_label and elf_sec__filter.
		return sec, s.Vis != elf.STV_HIDDEN && s.Vis != elf.STV_INTERNAL &&
			(strings.Contains(sec.Name, "text") || strings.Contains(sec.Name, "data"))
	}
	return nil, false
}
