package resolve

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/spec"
)

// Kernel modules (-m). A module is a relocatable ELF file: dwarfinfo lays
// its sections out as libdwfl does and relocates its debug sections, so
// DWARF addresses and symbol addresses share one space. Probes are placed
// as MOD:SYM+OFF, MOD being the name the kernel knows the module by.

// moduleInfo is the module a resolver works on.
type moduleInfo struct {
	name   string // kernel's name for the module, printed before ':'
	target string // what the user named (-m), used in messages
	syms   *rbSymbols
}

// addrSymbols finds the symbol holding an address.
type addrSymbols interface {
	find(addr uint64) (symbol, bool)
}

// nameSymbols is the map perf searches by name: for a module, its
// alias-keeping map in address order (aliases in table order).
func (r *Resolver) nameSymbols() (*symbolMap, error) {
	if r.mod == nil {
		return r.symbols()
	}
	if r.mod.syms == nil {
		t, err := newModuleSymbols(r.f, false)
		if err != nil {
			return nil, err
		}
		r.mod.syms = t
	}
	rb := r.mod.syms
	m := &symbolMap{syms: make([]symbol, 0, len(rb.nodes))}
	rb.inorder(rb.root, func(i int32) { m.syms = append(m.syms, rb.nodes[i].sym) })
	return m, nil
}

// postProcessSymbols is the map perf renames DWARF points with: for a
// module, perf's own alias-keeping map of the module file.
func (r *Resolver) postProcessSymbols() (addrSymbols, error) {
	if r.mod == nil {
		return r.symbols()
	}
	if r.opts.PerfModuleAltBug {
		t, err := newModuleSymbols(r.f, true)
		if err != nil {
			return nil, err
		}
		text, _ := r.f.SectionAddr(".text")
		if s := r.f.ELF.Section(".text"); s != nil {
			text -= s.Offset
		}
		return perfSpaceSymbols{t: t, textOffs: text}, nil
	}
	if r.mod.syms == nil {
		t, err := newModuleSymbols(r.f, false)
		if err != nil {
			return nil, err
		}
		r.mod.syms = t
	}
	return r.mod.syms, nil
}

// NewModule returns a resolver for the kernel module f (an ET_REL .ko
// file, possibly the separate debug file of the module). target is the
// -m argument (the module's path), which perf names in its messages.
func NewModule(f *dwarfinfo.File, target string, opts Options) (*Resolver, error) {
	if !f.IsRelocatable() {
		return nil, fmt.Errorf("%s: %w: not a kernel module (ELF type %v, want ET_REL)", f.Path, ErrUnsupported, f.Type)
	}
	r, err := New(f, false, opts)
	if err != nil {
		return nil, err
	}
	name, ok := ModuleName(f)
	if !ok {
		// perf's fallback: the -m argument itself.
		name = target
	}
	r.mod = &moduleInfo{name: name, target: target}
	if r.opts.PerfModuleAltBug {
		r.opts.AllowMidInsn = true // perf has no boundary check either
	}
	return r, nil
}

// ModuleName returns the name a module's .gnu.linkonce.this_module
// section (its struct module) carries, as perf's find_module_name reads
// it: at offset 24 (12 on 32-bit), after the state and the list head.
func ModuleName(f *dwarfinfo.File) (string, bool) {
	b := f.Section(".gnu.linkonce.this_module")
	off := 24
	if f.ELF.Class == elf.ELFCLASS32 {
		off = 12
	}
	if len(b) <= off {
		return "", false
	}
	b = b[off:]
	const moduleNameLen = 64 - 8 // MODULE_NAME_LEN on 64-bit
	if len(b) > moduleNameLen {
		b = b[:moduleNameLen]
	}
	i := bytes.IndexByte(b, 0)
	if i <= 0 {
		return "", false
	}
	return string(b[:i]), true
}

// errNoModuleSymbol: no symbol of the module holds a DWARF address. perf
// then drops every point and reports the probe as not found.
var errNoModuleSymbol = errors.New("no module symbol at the address")

// vmlinux reports whether the resolver's target is the kernel image (not
// a module, not a user binary): only there does perf rebase symbol-table
// probes on _text and check them against the kernel's .text.
func (r *Resolver) vmlinux() bool { return !r.user && r.mod == nil }

// moduleName is the MOD of MOD:SYM+OFF, "" outside modules.
func (r *Resolver) moduleName() string {
	if r.mod == nil {
		return ""
	}
	return r.mod.name
}

// targetName is how perf names the image in "Failed to find symbol %s in
// %s".
func (r *Resolver) targetName() string {
	switch {
	case r.user:
		return r.f.Path
	case r.mod != nil:
		return r.mod.target
	}
	return "kernel"
}

// dsoFunctions is perf -F on a module or a user binary: every name of the
// DSO's symbol map (neither is loaded as a kernel image, so data objects
// and labels of text and data sections are listed too), aliases
// included, with a user binary's synthesized @plt entries, sorted.
func (r *Resolver) dsoFunctions(filter *spec.Filter) ([]string, error) {
	var out []string
	err := r.f.Symbols(func(s dwarfinfo.Symbol) {
		if _, ok := inModuleMap(r.f, s); ok && filter.Match(string(s.RawName)) {
			out = append(out, string(s.RawName))
		}
	})
	if err != nil {
		return nil, err
	}
	if r.mod == nil {
		for _, n := range pltSymbolNames(r.f.ELF) {
			if filter.Match(n) {
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// inModuleMap reports whether perf's dso__load_sym keeps a module file's
// symbol (functions, objects, and labels of text and data sections, in
// allocated sections), and returns its section.
func inModuleMap(f *dwarfinfo.File, s dwarfinfo.Symbol) (*elf.Section, bool) {
	sections := f.ELF.Sections
	if len(s.RawName) == 0 || s.Sect == elf.SHN_UNDEF || s.Sect >= elf.SHN_LORESERVE || int(s.Sect) >= len(sections) {
		return nil, false
	}
	sec := sections[s.Sect]
	if sec.Flags&elf.SHF_ALLOC == 0 || isMappingSymbol(f.Machine, s.RawName) {
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

// ModuleFileName is the module name a .ko path implies when the file
// cannot be read: the base name without .ko and compression suffixes,
// with '-' as '_' (as kmod normalises names).
func ModuleFileName(path string) string {
	b := filepath.Base(path)
	for _, ext := range []string{".xz", ".zst", ".gz"} {
		b = strings.TrimSuffix(b, ext)
	}
	b = strings.TrimSuffix(b, ".ko")
	return strings.ReplaceAll(b, "-", "_")
}

// perfAltAddr applies Options.PerfModuleAltBug to the address of a symbol-table
// match, when set and the target is a module.
func (r *Resolver) perfAltAddr(addr uint64) uint64 {
	if !r.opts.PerfModuleAltBug || r.mod == nil {
		return addr
	}
	text, ok := r.f.SectionAddr(".text")
	if !ok {
		return addr
	}
	for _, s := range r.f.ELF.Sections {
		base, _ := r.f.SectionAddr(s.Name)
		if s.Flags&elf.SHF_ALLOC != 0 && addr >= base && addr < base+s.Size {
			return addr - base + s.Offset + text
		}
	}
	return addr
}
