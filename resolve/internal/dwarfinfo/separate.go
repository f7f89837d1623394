package dwarfinfo

import (
	"debug/elf"
	"fmt"
)

// OpenSeparate opens debug, the separate debug file of the binary exec (a
// distribution's -dbg file, or what debuginfod serves for exec's build-id),
// as perf probe uses the debuginfo it finds for -x: DWARF, symbols and
// call frame information come from debug alone. The File is named exec,
// and its allocated sections have exec's file offsets: a debug file's
// SHT_NOBITS sections carry placeholder offsets, and uprobes are placed by
// file offset, which perf reads from the binary
// (add_exec_to_probe_trace_events).
func OpenSeparate(debug, exec string) (*File, error) {
	ef, err := elf.Open(exec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", exec, ErrNotELF, err)
	}
	defer ef.Close()
	f, err := Open(debug)
	if err != nil {
		return nil, err
	}
	for _, s := range f.ELF.Sections {
		if s.Type != elf.SHT_NOBITS || s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		if es := ef.Section(s.Name); es != nil && es.Addr == s.Addr {
			s.Offset = es.Offset
		}
	}
	f.Path = exec
	return f, nil
}
