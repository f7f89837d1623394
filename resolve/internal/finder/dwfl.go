package finder

import "debug/elf"

// dwflOfflineBase is where libdwfl's dwfl_report_offline places the first
// ET_DYN file it is given (OFFLINE_REDZONE): perf opens a user binary's
// DWARF that way, so libdwfl's addresses for a PIE or shared library are
// the file's plus this bias.
const dwflOfflineBase = 0x10000

// dwflAddr is the address perf's convert_to_trace_point really looks up
// when it asks libdwfl for the symbol at a DWARF address (a function with
// DW_AT_ranges and no entry pc: GCC's hot/cold split of C++ code at -O2).
// perf passes the DWARF address unbiased, so for a PIE or shared library
// it names the symbol dwflOfflineBase bytes below it, or none (then perf
// warns "Failed to find symbol at ..." and gives up its DWARF answer).
// The address wraps below 0, which no symbol holds.
func (f *finder) dwflAddr(addr uint64) uint64 {
	if f.im.User && f.im.File.ELF.Type == elf.ET_DYN {
		return addr - dwflOfflineBase
	}
	return addr
}
