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
	"strings"
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
// (seconds on a slow guest). Past a few lookups (a function pattern checks
// each of its functions) the names are indexed once. A List is not safe
// for concurrent use.
type List struct {
	data []byte
	// Hidden reports that every address reads as zero (kptr_restrict, or
	// no CAP_SYSLOG).
	Hidden bool

	lookups int
	names   map[string]nameEntry // made by lookup past indexAfter lookups
	text    []textSymbol         // by address, made by Symbolize
}

// nameEntry is what the index knows of a name: its first address and how
// many symbols have it.
type nameEntry struct {
	addr uint64
	n    int
}

// indexAfter is how many lookups by name read the text before the names
// are indexed.
const indexAfter = 8

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
	a, _ := k.lookup(sym)
	return a
}

// Count returns how many symbols are named sym.
func (k *List) Count(sym string) int {
	_, n := k.lookup(sym)
	return n
}

// lookup is the first address of sym and how many symbols have it.
func (k *List) lookup(sym string) (uint64, int) {
	if k.names == nil {
		if k.lookups++; k.lookups <= indexAfter {
			var addr uint64
			n := 0
			k.each(sym, func(start int) {
				if n++; n == 1 {
					if sp := bytes.IndexByte(k.data[start:], ' '); sp > 0 {
						addr, _ = strconv.ParseUint(string(k.data[start:start+sp]), 16, 64)
					}
				}
			})
			return addr, n
		}
		k.names = map[string]nameEntry{}
		Each(k.data, func(s Symbol) bool {
			e := k.names[s.Name]
			if e.n == 0 {
				e.addr = s.Addr
			}
			e.n++
			k.names[s.Name] = e
			return true
		})
	}
	e := k.names[sym]
	return e.addr, e.n
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

// InText reports whether the kernel symbol sym is in the kernel's text
// (_stext to _etext), where kprobes go; known is false when the list
// cannot tell (no such symbol, hidden addresses). An __init function is
// not: its text is freed after boot, and perf skips it ("out of .text").
func (k *List) InText(sym string) (in, known bool) {
	if k == nil {
		return false, false
	}
	start, end, ok := k.Text()
	a := k.Address(sym)
	if !ok || a == 0 {
		return false, false
	}
	return a >= start && a <= end, true
}

// textSymbol is one text symbol of the kernel.
type textSymbol struct {
	addr uint64
	name string
}

// Symbolize maps SYM+OFF onto the kernel text symbol that holds it, as
// perf's find_perf_probe_point_from_map does through kallsyms: the
// function and the offset in it (what perf -l shows for _text+N). ok is
// false when sym is unknown, addresses are hidden or nothing holds it.
// The text symbols are indexed on the first call.
func (k *List) Symbolize(sym string, off uint64) (name string, fnOff uint64, ok bool) {
	if k == nil || k.Hidden {
		return "", 0, false
	}
	base := k.Address(sym)
	if base == 0 {
		return "", 0, false
	}
	if k.text == nil {
		k.indexText()
	}
	addr := base + off
	if _, end, ok := k.Text(); ok && addr >= end {
		return "", 0, false
	}
	i := sort.Search(len(k.text), func(i int) bool { return k.text[i].addr > addr }) - 1
	if i < 0 {
		return "", 0, false
	}
	// Several names at one address: as perf's choose_best_symbol, the one
	// with the fewest leading underscores (startup_64 rather than _text).
	best := i
	for j := i; j >= 0 && k.text[j].addr == k.text[i].addr; j-- {
		if underscores(k.text[j].name) <= underscores(k.text[best].name) {
			best = j
		}
	}
	return k.text[best].name, addr - k.text[best].addr, true
}

func underscores(s string) int { return len(s) - len(strings.TrimLeft(s, "_")) }

// indexText sorts the text symbols (types t and T) of the kernel, not
// its modules', by address.
func (k *List) indexText() {
	k.text = []textSymbol{}
	Each(k.data, func(s Symbol) bool {
		if s.Module == "" && (s.Type == 't' || s.Type == 'T') {
			k.text = append(k.text, textSymbol{s.Addr, s.Name})
		}
		return true
	})
	sort.SliceStable(k.text, func(i, j int) bool { return k.text[i].addr < k.text[j].addr })
}
