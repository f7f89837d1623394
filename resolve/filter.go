package resolve

import (
	"debug/elf"
	"sort"

	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/spec"
)

// Functions lists the image's function names as perf -F does. For a
// kernel image: named function and label symbols of executable sections
// (perf splits a vmlinux's other sections into maps of their own), aliases
// and duplicates included. For a module or a user binary, every symbol of
// perf's map for the DSO (dso__load_sym: functions, data objects, labels
// of text and data sections) and, for a user binary, the @plt entries perf
// synthesizes. Sorted by name, filtered. Without an image, BTF's functions
// are listed.
func (r *Resolver) Functions(filter *spec.Filter) ([]string, error) {
	if r.f == nil {
		return r.btfFunctions(filter)
	}
	if r.mod != nil || r.user {
		return r.dsoFunctions(filter)
	}
	sections := r.f.ELF.Sections
	var out []string
	err := r.f.Symbols(func(s dwarfinfo.Symbol) {
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
		if isMappingSymbol(r.f.Machine, s.RawName) {
			return
		}
		if n := string(s.RawName); filter.Match(n) {
			out = append(out, n)
		}
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}
