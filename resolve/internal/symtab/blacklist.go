package symtab

import (
	"debug/elf"
	"sort"

	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// blacklistAreas are the text areas whose every symbol the kernel
// blacklists (populate_kprobe_blacklist and each architecture's
// arch_populate_kprobe_blacklist in Linux 6.1), by their markers.
var blacklistAreas = map[elf.Machine][][2]string{
	elf.EM_X86_64: {{"__kprobes_text_start", "__kprobes_text_end"}, {"__noinstr_text_start", "__noinstr_text_end"},
		{"__entry_text_start", "__entry_text_end"}},
	elf.EM_AARCH64: {{"__kprobes_text_start", "__kprobes_text_end"}, {"__noinstr_text_start", "__noinstr_text_end"},
		{"__entry_text_start", "__entry_text_end"}, {"__irqentry_text_start", "__irqentry_text_end"},
		{"__idmap_text_start", "__idmap_text_end"}, {"__hyp_text_start", "__hyp_text_end"},
		{"__hyp_idmap_text_start", "__hyp_idmap_text_end"}},
}

// ImageBlacklist is the kprobe blacklist a kernel image carries, as the
// kernel builds it at boot (kernel/kprobes.c): the symbol holding each
// address of the NOKPROBE_SYMBOL list (between __start_kprobe_blacklist
// and __stop_kprobe_blacklist, in a vmlinux's init data) and every symbol
// of the __kprobes, noinstr and architecture's entry text, at the image's
// addresses. nil when the image has none of them (not a kernel).
func ImageBlacklist(f *dwarfinfo.File, m *Map) *probedef.Blacklist {
	markers := map[string]uint64{"__start_kprobe_blacklist": 0, "__stop_kprobe_blacklist": 0}
	areas := blacklistAreas[f.Machine]
	for _, a := range areas {
		markers[a[0]], markers[a[1]] = 0, 0
	}
	found := map[string]bool{}
	_ = f.Symbols(func(s dwarfinfo.Symbol) {
		n := string(s.RawName)
		if _, ok := markers[n]; ok && !found[n] {
			markers[n], found[n] = s.Value, true
		}
	})
	b := &probedef.Blacklist{Source: f.Path}
	seen := map[uint64]bool{}
	add := func(s Symbol) {
		if !seen[s.Start] {
			seen[s.Start] = true
			b.Entries = append(b.Entries, probedef.BlacklistEntry{Start: s.Start, End: s.End, Name: s.Name()})
		}
	}
	if lo, hi := markers["__start_kprobe_blacklist"], markers["__stop_kprobe_blacklist"]; found["__start_kprobe_blacklist"] && hi > lo {
		size := uint64(8)
		if f.ELF.Class == elf.ELFCLASS32 {
			size = 4
		}
		if data := f.Code(lo, hi-lo); data != nil {
			for i := 0; i+int(size) <= len(data); i += int(size) {
				var addr uint64
				if size == 8 {
					addr = f.Order.Uint64(data[i:])
				} else {
					addr = uint64(f.Order.Uint32(data[i:]))
				}
				// The kernel skips what is not text (kprobe_add_ksym_blacklist).
				if s, ok := m.Find(addr); ok && s.Exec {
					add(s)
				}
			}
		}
	}
	type area struct{ lo, hi uint64 }
	var spans []area
	for _, a := range areas {
		if found[a[0]] && found[a[1]] && markers[a[1]] > markers[a[0]] {
			spans = append(spans, area{markers[a[0]], markers[a[1]]})
		}
	}
	if len(spans) > 0 {
		// Every symbol of an area, a zero-sized one ending where the next
		// symbol starts (kallsyms' size).
		var prev Symbol
		inArea := false
		m.Each(func(s Symbol) bool {
			if inArea {
				if prev.End == prev.Start {
					prev.End = s.Start
				}
				add(prev)
			}
			inArea = false
			for _, sp := range spans {
				if s.Exec && s.Start >= sp.lo && s.Start < sp.hi {
					prev, inArea = s, true
				}
			}
			return true
		})
		if inArea {
			add(prev)
		}
	}
	if len(b.Entries) == 0 {
		return nil
	}
	sort.Slice(b.Entries, func(i, j int) bool { return b.Entries[i].Start < b.Entries[j].Start })
	return b
}
