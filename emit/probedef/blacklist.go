package probedef

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Blacklist is the kernel's kprobe blacklist (kernel/kprobes.c): whole
// symbols no kprobe may be placed in, the NOKPROBE_SYMBOL functions of
// the _kprobe_blacklist section and every symbol of the __kprobes,
// noinstr and (x86) entry text. The kernel refuses a kprobe there
// (register_kprobe: -EINVAL, "Failed to register probe event"); perf
// skips such places ("FUNC is blacklisted function, skip it."). It comes
// from the running kernel (debugfs's kprobes/blacklist) or from an image's
// own sections.
type Blacklist struct {
	// Entries are the blacklisted symbols, each [Start, End) with its
	// name. Addresses are the kernel's (the running one's: relocated by
	// KASLR; an image's: its link addresses), or zero where the kernel
	// hides them (kptr_restrict).
	Entries []BlacklistEntry
	// Source says where the list comes from, for messages.
	Source string
	names  map[string]bool
}

// BlacklistEntry is one blacklisted symbol.
type BlacklistEntry struct {
	Start, End uint64
	Name       string
}

// ParseBlacklist reads the text of debugfs's kprobes/blacklist: lines
// "0xSTART-0xEND\tSYMBOL" (perf's kprobe_blacklist__load); source names it.
func ParseBlacklist(r io.Reader, source string) (*Blacklist, error) {
	b := &Blacklist{Source: source}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		rng, name, _ := strings.Cut(line, "\t")
		lo, hi, ok := strings.Cut(rng, "-")
		start, err1 := strconv.ParseUint(strings.TrimPrefix(lo, "0x"), 16, 64)
		end, err2 := strconv.ParseUint(strings.TrimPrefix(hi, "0x"), 16, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: not a blacklist line: %q", source, line)
		}
		if name == "" {
			name = "unknown"
		}
		// A module's symbol is shown as "sym [mod]".
		name, _, _ = strings.Cut(name, " ")
		b.Entries = append(b.Entries, BlacklistEntry{Start: start, End: end, Name: name})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return b, nil
}

// Listed reports whether the kernel refuses a kprobe at addr, which is in
// the symbol sym, by the addresses of the entries when they are known and
// bias maps addr into their space (ok), else by the symbol's name. As the
// kernel's within_kprobe_blacklist does, a suffixed symbol ("foo.cold",
// "foo.isra.0") is refused when the symbol it was split from is.
func (b *Blacklist) Listed(addr uint64, sym string, bias int64, ok bool) bool {
	if b == nil {
		return false
	}
	if ok && b.hasAddresses() {
		a := uint64(int64(addr) + bias)
		for _, e := range b.Entries {
			if a >= e.Start && a < e.End {
				return true
			}
		}
	} else if b.Named(sym) {
		return true
	}
	if base, _, cut := strings.Cut(sym, "."); cut && base != "" {
		return b.Named(base)
	}
	return false
}

// Named reports whether a symbol of that name is blacklisted.
func (b *Blacklist) Named(sym string) bool {
	if b == nil {
		return false
	}
	if b.names == nil {
		b.names = make(map[string]bool, len(b.Entries))
		for _, e := range b.Entries {
			b.names[e.Name] = true
		}
	}
	return b.names[sym]
}

// Address is the start of the one entry named sym (ok false when none is,
// or several are, or addresses are hidden).
func (b *Blacklist) Address(sym string) (uint64, bool) {
	var addr uint64
	n := 0
	for _, e := range b.Entries {
		if e.Name == sym {
			addr, n = e.Start, n+1
		}
	}
	return addr, n == 1 && addr != 0
}

func (b *Blacklist) hasAddresses() bool {
	for _, e := range b.Entries {
		if e.Start != 0 {
			return true
		}
	}
	return false
}
