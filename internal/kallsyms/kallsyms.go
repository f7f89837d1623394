// Package kallsyms reads the kernel's symbol list as /proc/kallsyms shows
// it ("ADDR TYPE NAME[\t[MODULE]]"): what the checks before an install need
// (does a symbol exist, is it unique, is an absolute address in the running
// kernel's text) and what perf probe answers from it when no vmlinux is
// found (the kernel's functions for -F, its text range for an absolute
// address).
package kallsyms

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

// Table is a kallsyms text. The text is kept as read and searched per
// symbol: a handful of lookups per run costs far less than indexing ~100k
// names (seconds on a slow guest).
type Table struct {
	data         []byte
	stext, etext uint64
	// Hidden reports that every address read as zero (kptr_restrict, or not
	// CAP_SYSLOG).
	Hidden bool
}

// Read reads kallsyms text.
func Read(r io.Reader) *Table {
	data, _ := io.ReadAll(r)
	k := &Table{data: data, Hidden: true}
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
	k.stext = k.Address("_stext")
	k.etext = k.Address("_etext")
	return k
}

// Running reads /proc/kallsyms, or returns nil when it cannot be read.
func Running() *Table {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return nil
	}
	defer f.Close()
	return Read(f)
}

// each calls fn with the start of every line whose name field is sym.
func (k *Table) each(sym string, fn func(lineStart int)) {
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

// Address is the address of the first line naming sym, 0 if none.
func (k *Table) Address(sym string) uint64 {
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

// Count returns how many kallsyms entries are named sym.
func (k *Table) Count(sym string) int {
	n := 0
	k.each(sym, func(int) { n++ })
	return n
}

// Text is the running kernel's text, [_stext, _etext); ok is false when
// kallsyms does not say (addresses hidden, or a symbol missing).
func (k *Table) Text() (start, end uint64, ok bool) {
	if k.Hidden || k.stext == 0 || k.etext <= k.stext {
		return 0, 0, false
	}
	return k.stext, k.etext, true
}

// CheckAddress checks an absolute kprobe address against the running
// kernel's text. restrict is /proc/sys/kernel/kptr_restrict, for the message
// (KptrRestrict).
func (k *Table) CheckAddress(addr uint64, restrict string) error {
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

// Functions is perf probe -F without a vmlinux: the names of perf's map of
// the kernel loaded from kallsyms (machine__load_kallsyms): symbols of the
// kernel itself, not of a module ("\t[MODULE]"), whose type is text, weak,
// data or bss in either case (perf's symbol_type__filter), except ARM's
// local "$" symbols, with duplicates, those match keeps, sorted as strcmp
// sorts.
func (k *Table) Functions(match func(string) bool) []string {
	var out []string
	for rest := k.data; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		// ADDR SP TYPE SP NAME [TAB [MODULE]]
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 || len(line) < sp+4 || line[sp+2] != ' ' {
			continue
		}
		switch line[sp+1] {
		case 'T', 't', 'W', 'w', 'D', 'd', 'B', 'b':
		default:
			continue
		}
		name := line[sp+3:]
		if bytes.IndexByte(name, '\t') >= 0 || len(name) == 0 || name[0] == '$' {
			continue
		}
		if n := string(name); match(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// KptrRestrict is /proc/sys/kernel/kptr_restrict ("?" if unreadable).
func KptrRestrict() string {
	b, err := os.ReadFile("/proc/sys/kernel/kptr_restrict")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
