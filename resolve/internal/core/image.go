package core

import (
	"debug/elf"
	"errors"
	"fmt"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/internal/symtab"
)

// Image is what probes are resolved against: a kernel (vmlinux), a kernel
// module, a user binary (uprobes), or no image at all (BTF alone), with the
// options of the run and the symbol maps perf builds for it, made on first
// use.
type Image struct {
	// File is the image; nil when there is none (BTF alone answers).
	File *dwarfinfo.File
	// User selects uprobes (-x).
	User bool
	// Module is the kernel module (-m); nil for other images.
	Module *Module
	// Arch is the target's architecture: the image's, else the one given.
	Arch arch.Arch
	Opts Options

	// NoBoundaryCheck leaves out the instruction-boundary check, as perf
	// does (a mistake tests repeat, see internal/perfbug).
	NoBoundaryCheck bool
	// PerfModuleAlt repeats perf 6.1's two mistakes on module addresses
	// (internal/perfbug.ModuleAlt): perf's map of a module file places
	// symbols at st_value plus their section's file offset, while libdwfl
	// lays the sections out on its own, and perf mixes the two spaces:
	//   - for a name DWARF does not know (a .isra or .cold clone, or a line
	//     search that found nothing), find_alternative_probe_point adds the
	//     address libdwfl gave .text to the symbol's file-offset address,
	//     so it looks up DWARF .text's sh_offset bytes (176 in Debian's
	//     modules) past the symbol, in whatever function is there
	//     (PerfAltAddr);
	//   - post_process_module_probe_trace_events converts DWARF addresses
	//     with .text's delta only, which names the wrong symbol in any
	//     other section whose file offset is not where libdwfl put it
	//     (PostProcessSymbols).
	PerfModuleAlt bool
	// PerfUserAlt repeats perf 6.1's mistake on user binaries
	// (internal/perfbug.UserAlt): the alternative search asks DWARF about
	// a symbol's file offset as if it were its address (PerfAltAddr).
	PerfUserAlt bool
	// PerfArangesOnly repeats perf 6.1's search for the unit of an
	// address through .debug_aranges alone in its alternative search
	// (internal/perfbug.ArangesOnly).
	PerfArangesOnly bool
	// PerfAltArgs repeats perf 6.1's failure on a qualified name with
	// arguments (internal/perfbug.AltArgs).
	PerfAltArgs bool

	syms    *symtab.Map
	modSyms *symtab.Tree

	blOnce bool
	bl     *probedef.Blacklist
	blBias int64
	blAddr bool // bl's addresses map onto the image's with blBias
}

// Module is a kernel module target.
type Module struct {
	Name   string // the kernel's name for the module, printed before ':'
	Target string // what the user named (-m), used in messages
}

// New returns the image f with opts. user selects uprobes (-x). Without an
// image (f nil), isa is the target's architecture (the zero value: the
// running machine's).
func New(f *dwarfinfo.File, user bool, isa arch.Arch, opts Options) (*Image, error) {
	if opts.MaxProbes <= 0 {
		opts.MaxProbes = 128
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	if f == nil {
		isa, err := isa.OrHost()
		if err != nil {
			return nil, err
		}
		return &Image{User: user, Opts: opts, Arch: isa}, nil
	}
	isa, err := arch.ForMachine(f.Machine)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	return &Image{File: f, User: user, Opts: opts, Arch: isa}, nil
}

// NewModule returns the kernel module f (an ET_REL .ko file, possibly the
// separate debug file of the module) known to the kernel as name; target
// is the -m argument (the module's path), which perf names in its
// messages.
func NewModule(f *dwarfinfo.File, name, target string, opts Options) (*Image, error) {
	if !f.IsRelocatable() {
		return nil, fmt.Errorf("%s: %w: not a kernel module (ELF type %v, want ET_REL)", f.Path, ErrUnsupported, f.Type)
	}
	im, err := New(f, false, 0, opts)
	if err != nil {
		return nil, err
	}
	im.Module = &Module{Name: name, Target: target}
	return im, nil
}

// Warnf passes one of perf's non-fatal messages to Options.Warn.
func (im *Image) Warnf(format string, args ...any) { im.Opts.Warn(fmt.Sprintf(format, args...)) }

// Debugf passes one of perf's -v lines to Options.Debug, when set.
func (im *Image) Debugf(format string, args ...any) {
	if im.Opts.Debug != nil {
		im.Opts.Debug(fmt.Sprintf(format, args...))
	}
}

// NoDebugInfo is perf's open_debuginfo message for an image without DWARF:
// the advice names -g for a user binary, the kernel option otherwise.
func (im *Image) NoDebugInfo() error {
	rebuild := "CONFIG_DEBUG_INFO=y"
	if im.User {
		rebuild = "-g"
	}
	return Errorf(ErrNoDebugInfo, "The %s file has no debug information.\nRebuild with %s, or install an appropriate debuginfo package.", im.File.Path, rebuild)
}

// HasDWARF reports whether there is an image with DWARF.
func (im *Image) HasDWARF() bool { return im.File != nil && im.File.HasDWARF() }

// TargetFeatures are the features of the kernel the probes are for:
// Options.TargetFeatures, else Options.Features.
func (im *Image) TargetFeatures() *probedef.Features {
	if im.Opts.TargetFeatures != nil {
		return im.Opts.TargetFeatures
	}
	return &im.Opts.Features
}

// Symbols is perf's symbol map of the image.
func (im *Image) Symbols() (*symtab.Map, error) {
	if im.syms == nil {
		m, err := symtab.NewMap(im.File, im.Naming())
		if err != nil {
			return nil, err
		}
		im.syms = m
	}
	return im.syms, nil
}

// Naming is how perf names the image's symbols: a user binary's demangled
// unless NoDemangle, a kernel's or a module's only with DemangleKernel
// (symbol-elf.c want_demangle).
func (im *Image) Naming() symtab.Naming {
	on := !im.Opts.Names.NoDemangle
	if !im.User {
		on = im.Opts.Names.DemangleKernel
	}
	return symtab.Naming{Demangle: on, Params: im.Opts.Names.Params}
}

// moduleTree is a module's alias-keeping map, made once.
func (im *Image) moduleTree() (*symtab.Tree, error) {
	if im.modSyms == nil {
		t, err := symtab.NewTree(im.File, false)
		if err != nil {
			return nil, err
		}
		im.modSyms = t
	}
	return im.modSyms, nil
}

// NameSymbols is the map perf searches by name: for a module or a user
// binary, its alias-keeping map in address order (aliases in table
// order): perf probe sets allow_aliases, so libc's puts, a weak alias of
// _IO_puts, is found by its name.
func (im *Image) NameSymbols() (*symtab.Map, error) {
	if im.Module == nil && !im.User {
		return im.Symbols()
	}
	t, err := im.moduleTree()
	if err != nil {
		return nil, err
	}
	return t.Map(im.Naming()), nil
}

// PostProcessSymbols is the map perf renames DWARF points with: for a
// module, perf's own alias-keeping map of the module file.
func (im *Image) PostProcessSymbols() (symtab.Finder, error) {
	if im.Module == nil {
		return im.Symbols()
	}
	if im.PerfModuleAlt {
		return symtab.PerfSpace(im.File)
	}
	return im.moduleTree()
}

// ErrNoModuleSymbol: no symbol of the module holds a DWARF address. perf
// then drops every point and reports the probe as not found.
var ErrNoModuleSymbol = errors.New("no module symbol at the address")

// Vmlinux reports whether the target is the kernel image (not a module,
// not a user binary): only there does perf rebase symbol-table probes on
// _text and check them against the kernel's .text.
func (im *Image) Vmlinux() bool { return !im.User && im.Module == nil }

// ModuleName is the MOD of MOD:SYM+OFF, "" outside modules.
func (im *Image) ModuleName() string {
	if im.Module == nil {
		return ""
	}
	return im.Module.Name
}

// TargetName is how perf names the image in "Failed to find symbol %s in
// %s".
func (im *Image) TargetName() string {
	switch {
	case im.User:
		return im.File.Path
	case im.Module != nil:
		return im.Module.Target
	}
	return "kernel"
}

// FileOffset converts an address of a user binary to the file offset
// uprobes take, as perf does: relative to .text's address-offset delta.
func (im *Image) FileOffset(addr uint64) uint64 {
	if s := im.File.ELF.Section(".text"); s != nil {
		return addr - (s.Addr - s.Offset)
	}
	return addr
}

// CodeAddr converts a file offset of a user binary (an absolute uprobe
// address) to the address it is loaded at, through the executable section
// holding it; an offset outside the binary's code is an error wrapping
// ErrInvalid (a uprobe there could never fire).
func (im *Image) CodeAddr(off uint64) (uint64, error) {
	var lo, hi uint64
	for _, s := range im.File.ELF.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Flags&elf.SHF_EXECINSTR == 0 || s.Size == 0 {
			continue
		}
		if off >= s.Offset && off-s.Offset < s.Size {
			return off - s.Offset + s.Addr, nil
		}
		if lo == 0 || s.Offset < lo {
			lo = s.Offset
		}
		hi = max(hi, s.Offset+s.Size)
	}
	if hi == 0 {
		return 0, Errorf(ErrInvalid, "0x%x: %s has no executable section to place a uprobe in.", off, im.File.Path)
	}
	return 0, Errorf(ErrInvalid, "0x%x is not in the code of %s: its executable sections are at file offsets 0x%x-0x%x, and a uprobe elsewhere never fires.", off, im.File.Path, lo, hi)
}

// RelocSymbol is perf's ref_reloc_sym: the image's _text (or _stext).
func (im *Image) RelocSymbol() *symtab.Symbol {
	var found [2]*symtab.Symbol
	_ = im.File.Symbols(func(s dwarfinfo.Symbol) {
		for i, name := range []string{"_text", "_stext"} {
			if found[i] == nil && string(s.RawName) == name && s.Sect != elf.SHN_UNDEF {
				found[i] = &symtab.Symbol{Raw: []byte(name), Start: s.Value}
			}
		}
	})
	if found[0] != nil {
		return found[0]
	}
	return found[1]
}

// PerfAltAddr applies PerfModuleAlt or PerfUserAlt to the address of a
// symbol-table match, when set and the target is a module or a user
// binary.
func (im *Image) PerfAltAddr(addr uint64) uint64 {
	if im.PerfUserAlt && im.User {
		return im.FileOffset(addr)
	}
	if !im.PerfModuleAlt || im.Module == nil {
		return addr
	}
	text, ok := im.File.SectionAddr(".text")
	if !ok {
		return addr
	}
	for _, s := range im.File.ELF.Sections {
		base, _ := im.File.SectionAddr(s.Name)
		if s.Flags&elf.SHF_ALLOC != 0 && addr >= base && addr < base+s.Size {
			return addr - base + s.Offset + text
		}
	}
	return addr
}

// blacklist is the blacklist kernel probes are checked against
// (Options.Blacklist, or the image's own with ImageBlacklist) and how
// image addresses map onto its addresses.
func (im *Image) blacklist() (*probedef.Blacklist, int64, bool) {
	if im.blOnce {
		return im.bl, im.blBias, im.blAddr
	}
	im.blOnce = true
	if im.User || im.Module != nil {
		return nil, 0, false
	}
	if im.Opts.ImageBlacklist {
		if m, err := im.Symbols(); err == nil && im.File != nil {
			im.bl, im.blAddr = symtab.ImageBlacklist(im.File, m), true
		}
		return im.bl, 0, im.blAddr
	}
	im.bl = im.Opts.Blacklist
	if im.bl == nil || im.File == nil {
		return im.bl, 0, false
	}
	// The kernel runs relocated (KASLR): a name the blacklist and the
	// image each have once gives the distance.
	m, err := im.Symbols()
	if err != nil {
		return im.bl, 0, false
	}
	type seen struct {
		start uint64
		n     int
	}
	names := map[string]*seen{}
	m.Each(func(s symtab.Symbol) bool {
		if s.Exec && im.bl.Named(string(s.Raw)) {
			n := names[string(s.Raw)]
			if n == nil {
				n = &seen{start: s.Start}
				names[string(s.Raw)] = n
			}
			n.n++
		}
		return true
	})
	for _, e := range im.bl.Entries {
		if n := names[e.Name]; n != nil && n.n == 1 {
			if live, ok := im.bl.Address(e.Name); ok {
				im.blBias, im.blAddr = int64(live-n.start), true
				break
			}
		}
	}
	return im.bl, im.blBias, im.blAddr
}

// Blacklisted reports whether the kernel refuses a kprobe at addr, in the
// symbol sym (perf's kprobe_blacklist__listed). Only kernel probes are
// checked; without an image, by name.
func (im *Image) Blacklisted(addr uint64, sym string) bool {
	bl, bias, ok := im.blacklist()
	if bl == nil {
		return false
	}
	if im.File != nil {
		if m, err := im.Symbols(); err == nil {
			if s, found := m.Find(addr); found {
				sym = s.Name()
			}
		}
	}
	return bl.Listed(addr, sym, bias, ok)
}
