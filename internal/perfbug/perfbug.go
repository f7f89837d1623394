// Package perfbug lets a test make gprobe repeat one of perf probe 6.1's
// mistakes, to prove that a disagreement with perf is that mistake and
// nothing else. The mistakes ride in the context given to resolve.Open
// (resolve.Options.Target.Context), so no public option names them and
// nothing outside this module can ask for them.
package perfbug

import "context"

// Mistake is a set of perf's mistakes.
type Mistake uint

const (
	// ModuleAlt: perf 6.1 mixes two address spaces on kernel modules: its
	// symbol map places symbols at st_value plus their section's file
	// offset while libdwfl lays sections out on its own, so its
	// alternative search (a name DWARF does not know) looks .text's file
	// offset past the symbol, and its renaming of DWARF addresses names
	// the wrong symbol in any section placed elsewhere than libdwfl put
	// it. perf checks no instruction boundary there either.
	ModuleAlt Mistake = 1 << iota
	// NoBoundaryCheck: perf writes probes inside instructions (the kernel
	// refuses them with EILSEQ); gprobe checks instruction boundaries.
	NoBoundaryCheck
	// UserAlt: for a name DWARF does not know (a C++ or Rust name
	// qualified, or a linkage name), perf 6.1's find_alternative_probe_point
	// looks the symbol up in its map of a user binary, whose symbols sit
	// at their file offsets, and asks DWARF about that offset as if it
	// were an address. Where .text's address is not its file offset
	// (rustc's and lld's layouts), that is another function, or none
	// ("Failed to find debug information for address ...").
	UserAlt
	// ArangesOnly: perf 6.1 finds the unit of an address through
	// .debug_aranges alone (libdw 0.188's dwarf_addrdie), which clang does
	// not write: its alternative search (a name DWARF does not know, such
	// as a qualified C++ name) then fails with "Failed to find debug
	// information for address ...".
	ArangesOnly
	// AltArgs: with arguments, perf 6.1 fails on a function DWARF does
	// not know before its alternative search (fill_empty_trace_arg), so
	// a qualified C++ or Rust name with arguments is never found.
	AltArgs
)

type key struct{}

// With returns ctx carrying the mistakes m (added to any it carries).
func With(ctx context.Context, m Mistake) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, key{}, In(ctx)|m)
}

// In returns the mistakes ctx carries (none for a nil context).
func In(ctx context.Context) Mistake {
	if ctx == nil {
		return 0
	}
	m, _ := ctx.Value(key{}).(Mistake)
	return m
}
