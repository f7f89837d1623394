// Package kallsyms reads the kernel's symbol list, /proc/kallsyms: one
// symbol a line, "ADDR TYPE NAME", with "\t[MODULE]" after the names of a
// module's symbols. It is the one reader of that format: the checks of
// definitions against the running kernel (emit/install), recordings that
// keep the list (record) and the symbolizer of recorded stacks read it
// here.
package kallsyms

import (
	"bytes"
	"os"
	"sort"
	"strconv"
)

// Path is where the running kernel lists its symbols.
const Path = "/proc/kallsyms"

// Read returns the running kernel's list.
func Read() ([]byte, error) { return os.ReadFile(Path) }

// Symbol is one line of the list.
type Symbol struct {
	Addr   uint64
	Type   byte   // 'T', 't', 'W', 'd', ...
	Name   string // without its module
	Module string // "" for vmlinux
}

// Each calls fn with every well-formed line of data in order, until fn
// returns false. Lines that are not "ADDR TYPE NAME [MODULE]" are skipped.
func Each(data []byte, fn func(Symbol) bool) {
	for rest := data; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if s, ok := parse(line); ok && !fn(s) {
			return
		}
	}
}

// parse reads one line; the fields are separated by white space.
func parse(line []byte) (Symbol, bool) {
	f := bytes.Fields(line)
	if len(f) < 3 || len(f[1]) != 1 {
		return Symbol{}, false
	}
	a, err := strconv.ParseUint(string(f[0]), 16, 64)
	if err != nil {
		return Symbol{}, false
	}
	s := Symbol{Addr: a, Type: f[1][0], Name: string(f[2])}
	if len(f) > 3 {
		s.Module = string(bytes.Trim(f[3], "[]"))
	}
	return s, true
}

// List is a list as read, searched per name without indexing it: a
// handful of lookups per run costs far less than indexing ~100k names
// (seconds on a slow guest).
type List struct {
	data []byte
	// Hidden reports that every address reads as zero (kptr_restrict, or
	// no CAP_SYSLOG).
	Hidden bool
}

// New returns the list data.
func New(data []byte) *List {
	k := &List{data: data, Hidden: true}
	for rest := data; len(rest) > 0 && k.Hidden; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if sp := bytes.IndexByte(line, ' '); sp > 0 {
			if a, err := strconv.ParseUint(string(line[:sp]), 16, 64); err == nil && a != 0 {
				k.Hidden = false
			}
		}
	}
	return k
}

// each calls fn with the start of every line whose name field is sym.
func (k *List) each(sym string, fn func(lineStart int)) {
	pat := []byte(" " + sym)
	for off := 0; ; {
		i := bytes.Index(k.data[off:], pat)
		if i < 0 {
			return
		}
		i += off
		end := i + len(pat)
		off = end
		// "ADDR T name" or "ADDR t name\t[module]": the match must be the
		// third field, whole.
		if i < 2 || k.data[i-2] != ' ' || (end < len(k.data) && k.data[end] != '\n' && k.data[end] != '\t') {
			continue
		}
		start := bytes.LastIndexByte(k.data[:i-2], '\n') + 1
		if bytes.IndexByte(k.data[start:i-2], ' ') >= 0 {
			continue
		}
		fn(start)
	}
}

// Address is the address of the first symbol named sym, 0 if none.
func (k *List) Address(sym string) uint64 {
	var addr uint64
	k.each(sym, func(start int) {
		if addr != 0 {
			return
		}
		if sp := bytes.IndexByte(k.data[start:], ' '); sp > 0 {
			addr, _ = strconv.ParseUint(string(k.data[start:start+sp]), 16, 64)
		}
	})
	return addr
}

// Count returns how many symbols are named sym.
func (k *List) Count(sym string) int {
	n := 0
	k.each(sym, func(int) { n++ })
	return n
}

// Text is the kernel's text, from _stext to _etext; ok is false when the
// list does not say (addresses hidden, or a symbol missing).
func (k *List) Text() (start, end uint64, ok bool) {
	start, end = k.Address("_stext"), k.Address("_etext")
	if k.Hidden || start == 0 || end <= start {
		return 0, 0, false
	}
	return start, end, true
}

// Functions is perf probe -F without a vmlinux: the names of perf's map of
// the kernel loaded from kallsyms (machine__load_kallsyms): symbols of the
// kernel itself, not of a module, whose type is text, weak, data or bss in
// either case (perf's symbol_type__filter), except ARM's local "$"
// symbols, with duplicates, those match keeps, sorted as strcmp sorts.
func (k *List) Functions(match func(string) bool) []string {
	var out []string
	Each(k.data, func(s Symbol) bool {
		switch s.Type {
		case 'T', 't', 'W', 'w', 'D', 'd', 'B', 'b':
		default:
			return true
		}
		if s.Module == "" && s.Name != "" && s.Name[0] != '$' && match(s.Name) {
			out = append(out, s.Name)
		}
		return true
	})
	sort.Strings(out)
	return out
}

// Running reads the running kernel's list, nil when it cannot be read.
func Running() *List {
	data, err := Read()
	if err != nil {
		return nil
	}
	return New(data)
}
