package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// ErrHiddenAddresses: /proc/kallsyms shows zero addresses (kptr_restrict),
// so an absolute kernel address cannot be checked.
var ErrHiddenAddresses = errors.New("kernel addresses are hidden")

// ErrNotKernelText: an absolute kprobe address outside the running
// kernel's text (typically an address from another machine's vmlinux on a
// kernel relocated by KASLR).
var ErrNotKernelText = errors.New("address is not in the running kernel's text")

// Kallsyms is what the checks need from /proc/kallsyms. The text is kept
// as read and searched per symbol: a handful of lookups per run costs far
// less than indexing ~100k names (seconds on a slow guest).
type Kallsyms struct {
	data         []byte
	stext, etext uint64
	// Hidden reports that every address read as zero (kptr_restrict, or not
	// CAP_SYSLOG).
	Hidden bool
	text   []textSymbol // by address, made by Symbolize

	// names indexes the symbols by name once more than a few were looked
	// up (a function pattern checks each of its functions): each lookup
	// without it reads the whole text.
	lookups int
	names   map[string]nameEntry
}

// nameEntry is what the index knows of a name: its first address and how
// many symbols have it.
type nameEntry struct {
	addr uint64
	n    int
}

// indexAfter is how many lookups by name are made by reading the text
// before the names are indexed.
const indexAfter = 8

// lookup is the first address of sym and how many entries have it.
func (k *Kallsyms) lookup(sym string) (uint64, int) {
	if k.names == nil {
		if k.lookups++; k.lookups > indexAfter {
			k.indexNames()
		} else {
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
	}
	e := k.names[sym]
	return e.addr, e.n
}

// indexNames indexes every line's name.
func (k *Kallsyms) indexNames() {
	k.names = map[string]nameEntry{}
	for rest := k.data; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		f := bytes.Fields(line)
		if len(f) < 3 {
			continue
		}
		name := string(f[2])
		e := k.names[name]
		if e.n == 0 {
			e.addr, _ = strconv.ParseUint(string(f[0]), 16, 64)
		}
		e.n++
		k.names[name] = e
	}
}

// ReadKallsyms reads /proc/kallsyms text.
func ReadKallsyms(r io.Reader) *Kallsyms {
	data, _ := io.ReadAll(r)
	k := &Kallsyms{data: data, Hidden: true}
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
	k.stext = k.address("_stext")
	k.etext = k.address("_etext")
	return k
}

// each calls fn with the start of every line whose name field is sym.
func (k *Kallsyms) each(sym string, fn func(lineStart int)) {
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

// address is the address of the first line naming sym, 0 if none.
func (k *Kallsyms) address(sym string) uint64 {
	a, _ := k.lookup(sym)
	return a
}

// InText reports whether the kernel symbol sym is in the kernel's text
// (_stext to _etext), where kprobes go; known is false when kallsyms
// cannot tell (no such symbol, hidden addresses). An __init function is
// not: its text is freed after boot, and perf skips it ("out of .text").
func (k *Kallsyms) InText(sym string) (in, known bool) {
	if k == nil || k.Hidden || k.stext == 0 || k.etext == 0 {
		return false, false
	}
	a := k.address(sym)
	if a == 0 {
		return false, false
	}
	return a >= k.stext && a <= k.etext, true
}

// Count returns how many kallsyms entries are named sym.
func (k *Kallsyms) Count(sym string) int {
	_, n := k.lookup(sym)
	return n
}

// CheckAddress checks an absolute kprobe address against the running
// kernel's text. restrict is /proc/sys/kernel/kptr_restrict, for the message.
func (k *Kallsyms) CheckAddress(addr uint64, restrict string) error {
	if k.Hidden {
		return fmt.Errorf("%w: cannot check the absolute address 0x%x, /proc/kallsyms shows no addresses (kernel.kptr_restrict=%s; run as root with kptr_restrict <= 1, or probe SYMBOL+OFFSET instead)",
			ErrHiddenAddresses, addr, restrict)
	}
	if k.stext != 0 && k.etext != 0 && (addr < k.stext || addr >= k.etext) {
		return fmt.Errorf("%w: 0x%x is outside 0x%x-0x%x (an address from another kernel image, or KASLR? probe SYMBOL+OFFSET instead)",
			ErrNotKernelText, addr, k.stext, k.etext)
	}
	return nil
}

// RunningKallsyms reads /proc/kallsyms, or returns nil when it cannot be
// read (the symbol checks are then left to the kernel).
func RunningKallsyms() *Kallsyms {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return nil
	}
	defer f.Close()
	return ReadKallsyms(f)
}

// kptrRestrict is /proc/sys/kernel/kptr_restrict ("?" if unreadable).
func kptrRestrict() string {
	b, err := os.ReadFile("/proc/sys/kernel/kptr_restrict")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// textSymbol is one text symbol of /proc/kallsyms.
type textSymbol struct {
	addr uint64
	name string
}

// Symbolize maps SYM+OFF onto the kernel text symbol that holds it, as
// perf's find_perf_probe_point_from_map does through kallsyms: the
// function and the offset in it (what perf -l shows for _text+N). ok is
// false when sym is unknown, addresses are hidden or nothing holds it.
// The text symbols are indexed on the first call.
func (k *Kallsyms) Symbolize(sym string, off uint64) (name string, fnOff uint64, ok bool) {
	if k == nil || k.Hidden {
		return "", 0, false
	}
	base := k.address(sym)
	if base == 0 {
		return "", 0, false
	}
	if k.text == nil {
		k.indexText()
	}
	addr := base + off
	if k.etext != 0 && addr >= k.etext {
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
func (k *Kallsyms) indexText() {
	k.text = []textSymbol{}
	for rest := k.data; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		f := bytes.Fields(line)
		if len(f) != 3 || (f[1][0] != 't' && f[1][0] != 'T') {
			continue
		}
		a, err := strconv.ParseUint(string(f[0]), 16, 64)
		if err != nil {
			continue
		}
		k.text = append(k.text, textSymbol{a, string(f[2])})
	}
	sort.SliceStable(k.text, func(i, j int) bool { return k.text[i].addr < k.text[j].addr })
}
