package dwarfinfo

import (
	"debug/elf"
	"fmt"
)

// OpenSeparate opens debug, the separate debug file of the binary exec (a
// distribution's -dbg file, what .gnu_debuglink names, or what debuginfod
// serves for exec's build-id), as perf probe uses the debuginfo it finds
// for -x: DWARF, symbols and call frame information come from debug alone.
// The File is named exec, and its allocated sections have exec's file
// offsets: a debug file's SHT_NOBITS sections carry placeholder offsets,
// and uprobes are placed by file offset, which perf reads from the binary
// (add_exec_to_probe_trace_events). Code (the instruction-boundary checks)
// reads the instructions from exec, since the debug file has none.
//
// debug is opened first: most candidate paths of a search do not exist.
func OpenSeparate(debug, exec string) (*File, error) {
	f, err := Open(debug)
	if err != nil {
		return nil, err
	}
	x, err := Open(exec)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", exec, err)
	}
	for _, s := range f.ELF.Sections {
		if s.Type != elf.SHT_NOBITS || s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		if es := x.ELF.Section(s.Name); es != nil && es.Addr == s.Addr {
			s.Offset = es.Offset
		}
	}
	f.Path = exec
	f.exec = x
	return f, nil
}
