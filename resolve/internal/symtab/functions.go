package symtab

import (
	"debug/elf"
	"fmt"
	"strings"
	"unsafe"

	"github.com/gprobe/gprobe/internal/demangle"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// KernelFunctions lists a kernel image's function names as perf -F does:
// named function and label symbols of executable sections (perf splits a
// vmlinux's other sections into maps of their own), aliases and duplicates
// included, each named as n says, those match keeps, sorted.
func KernelFunctions(f *dwarfinfo.File, n Naming, match func(string) bool) ([]string, error) {
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
		out = append(out, string(s.RawName))
	})
	if err != nil {
		return nil, err
	}
	return n.List(out, match), nil
}

// DSOFunctions is perf -F on a module or a user binary: every name of the
// DSO's symbol map (neither is loaded as a kernel image, so data objects
// and labels of text and data sections are listed too), aliases included,
// those of .dynsym after those of .symtab (perf 6.1 loads both),
// with plt the @plt entries perf synthesizes for a user binary, each named
// as n says; fn is called with those match keeps, sorted, until it
// returns false. A name given to fn may alias the image's cache: it is
// valid during the call.
//
// Demangled, the sorted names are kept with the image (a Listing, as
// derived data of f), so that the next run demangles nothing.
func DSOFunctions(f *dwarfinfo.File, plt bool, n Naming, match func(string) bool, fn func(string) bool) error {
	cached := listingName(plt, n)
	if n.Demangle {
		if data, ok := f.LoadDerived(cached); ok {
			if l, ok := DecodeListing(data); ok {
				l.Each(match, fn)
				return nil
			}
		}
	}
	// The ELF names are views of the mapped file, valid until f closes:
	// no copies of a library's every name.
	// Counted first: appended one by one, libjvm's 58,000 names would
	// leave outgrown slices behind.
	total := 0
	count := func(s dwarfinfo.Symbol) {
		if _, ok := InModuleMap(f, s); ok {
			total++
		}
	}
	if err := f.Symbols(count); err != nil {
		return err
	}
	if err := f.DynamicSymbols(count); err != nil {
		return err
	}
	raws := make([]string, 0, total)
	add := func(s dwarfinfo.Symbol) {
		if _, ok := InModuleMap(f, s); ok {
			raws = append(raws, unsafe.String(unsafe.SliceData(s.RawName), len(s.RawName)))
		}
	}
	f.Symbols(add)
	f.DynamicSymbols(add)
	if plt {
		raws = append(raws, PLTNames(f)...)
	}
	names := n.List(raws, func(string) bool { return true })
	if n.Demangle {
		f.StoreDerived(cached, EncodeListing(names))
	}
	for _, name := range names {
		if match(name) && !fn(name) {
			break
		}
	}
	return nil
}

// listingName names the derived data of a DSO's listing: what it lists
// (with the @plt entries or not) and how it names them, and the
// demangler's version.
func listingName(plt bool, n Naming) string {
	name := fmt.Sprintf("funcs-v2-demangle%d", demangle.Version)
	if n.Params {
		name += "-params"
	}
	if plt {
		name += "-plt"
	}
	return name
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
