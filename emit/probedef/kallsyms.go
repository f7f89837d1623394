package probedef

import (
	"bufio"
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

// Kallsyms is what the checks need from /proc/kallsyms.
type Kallsyms struct {
	counts       map[string]int
	stext, etext uint64
	// Hidden reports that every address read as zero (kptr_restrict, or not
	// CAP_SYSLOG).
	Hidden bool
}

// ReadKallsyms parses /proc/kallsyms text.
func ReadKallsyms(r io.Reader) *Kallsyms {
	k := &Kallsyms{counts: map[string]int{}, Hidden: true}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		k.counts[f[2]]++
		addr, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			continue
		}
		if addr != 0 {
			k.Hidden = false
		}
		switch f[2] {
		case "_stext":
			k.stext = addr
		case "_etext":
			k.etext = addr
		}
	}
	return k
}

// Count is an Options.Symbols: how many symbols of any type, including
// module symbols ("name [mod]"), have this name, as the kernel's
// number_of_same_symbols counts them for NON_UNIQ_SYMBOL.
func (k *Kallsyms) Count(sym string) int { return k.counts[sym] }

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

// KallsymsSymbols is ReadKallsyms(r).Count.
func KallsymsSymbols(r io.Reader) func(string) int { return ReadKallsyms(r).Count }

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

// KptrRestrict is /proc/sys/kernel/kptr_restrict ("?" if unreadable).
func KptrRestrict() string {
	b, err := os.ReadFile("/proc/sys/kernel/kptr_restrict")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
