package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
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
func (k *Kallsyms) Count(sym string) int {
	n := 0
	k.each(sym, func(int) { n++ })
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
