package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gprobe/gprobe/internal/kallsyms"
)

// ErrHiddenAddresses: /proc/kallsyms shows zero addresses (kptr_restrict),
// so an absolute kernel address cannot be checked.
var ErrHiddenAddresses = errors.New("kernel addresses are hidden")

// ErrNotKernelText: an absolute kprobe address outside the running
// kernel's text (typically an address from another machine's vmlinux on a
// kernel relocated by KASLR).
var ErrNotKernelText = errors.New("address is not in the running kernel's text")

// Kallsyms is what the checks need from /proc/kallsyms: its symbols, and
// the kernel's text range.
type Kallsyms struct {
	*kallsyms.List
	stext, etext uint64
}

// ReadKallsyms reads /proc/kallsyms text.
func ReadKallsyms(r io.Reader) *Kallsyms {
	data, _ := io.ReadAll(r)
	k := &Kallsyms{List: kallsyms.New(data)}
	k.stext = k.Address("_stext")
	k.etext = k.Address("_etext")
	return k
}

// InText is List.InText; a nil k cannot tell.
func (k *Kallsyms) InText(sym string) (in, known bool) {
	if k == nil {
		return false, false
	}
	return k.List.InText(sym)
}

// Symbolize is List.Symbolize; a nil k knows no symbol.
func (k *Kallsyms) Symbolize(sym string, off uint64) (name string, fnOff uint64, ok bool) {
	if k == nil {
		return "", 0, false
	}
	return k.List.Symbolize(sym, off)
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
	data, err := kallsyms.Read()
	if err != nil {
		return nil
	}
	return ReadKallsyms(bytes.NewReader(data))
}

// kptrRestrict is /proc/sys/kernel/kptr_restrict ("?" if unreadable).
func kptrRestrict() string {
	b, err := os.ReadFile("/proc/sys/kernel/kptr_restrict")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
