// Package symbolize names the code addresses probes record, such as the
// return address of the function that called the probed one: kernel
// addresses by the kallsyms text a recording carries, user-space ones by
// the probed binary's ELF symbols and DWARF line table (the binary is the
// one the recording's probe definitions name, read where it lies now).
// It also tells which field of an event holds such a caller address.
package symbolize

import (
	"fmt"
	"strings"

	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
)

// Place is where a code address lies.
type Place struct {
	Function string // the function holding the address
	Offset   uint64 // the address less the function's start
	Module   string // kernel module, "" for vmlinux and binaries
	File     string // source file (DWARF), "" when unknown
	Line     int
}

// Symbol is "FUNC+0xOFF" (and " [module]").
func (p Place) Symbol() string {
	s := fmt.Sprintf("%s+0x%x", p.Function, p.Offset)
	if p.Module != "" {
		s += " [" + p.Module + "]"
	}
	return s
}

// Source is "FILE:LINE", or "" without a line table.
func (p Place) Source() string {
	if p.File == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// String is "FUNC+0xOFF FILE:LINE", the source when known.
func (p Place) String() string {
	if s := p.Source(); s != "" {
		return p.Symbol() + " " + s
	}
	return p.Symbol()
}

// Where reads "FUNC() at FILE:LINE", or "FUNC+0xOFF" without a line table.
func (p Place) Where() string {
	if s := p.Source(); s != "" {
		return p.Function + "() at " + s
	}
	return p.Symbol()
}

// CallerFields are the argument names that say they hold a call site, in
// order of preference.
var CallerFields = []string{"site", "call_site", "caller"}

// Symbolizer symbolizes the addresses of one recording's events. Tables
// are loaded on first use and kept; it is not safe for concurrent use.
type Symbolizer struct {
	kallsyms   func() ([]byte, error)
	kernel     *table
	kernelRead bool
	// defs are the recording's probes by "system:event" and by event.
	defs map[string]*probe.Probe
	bins map[string]*binary // by path; nil when it cannot be read
}

// New returns a symbolizer for a recording with the probe definitions
// defs (lines of kprobe_events/uprobe_events; others are ignored) and,
// when kallsyms is not nil, the kallsyms text it returns.
func New(defs []string, kallsyms func() ([]byte, error)) *Symbolizer {
	s := &Symbolizer{kallsyms: kallsyms, defs: map[string]*probe.Probe{}, bins: map[string]*binary{}}
	for _, d := range defs {
		p, err := probedef.Parse(d, &probedef.Options{NoStat: true, AnyRegister: true, Features: &probedef.KnownFeatures})
		if err != nil || p.Event == "" {
			continue
		}
		s.defs[p.GroupOrDefault()+":"+p.Event] = p
		s.defs[p.Event] = p
	}
	return s
}

func (s *Symbolizer) def(e *trace.Event) *probe.Probe {
	if s == nil {
		return nil
	}
	if e.System != "" {
		return s.defs[e.System+":"+e.Name]
	}
	return s.defs[e.Name]
}

// CallerField names e's field holding a return address into its caller,
// or "" when none: an argument named site, call_site or caller; else an
// argument whose definition fetches the word at the stack pointer
// ($stack0, +0($stack), +0(%sp)) on a probe that is not a return probe
// (at a function's entry, on x86-64, the return address); else a return
// probe's __probe_ret_ip. s may be nil: names only.
func (s *Symbolizer) CallerField(e *trace.Event) string {
	for _, f := range CallerFields {
		if e.Has(f) {
			return f
		}
	}
	if p := s.def(e); p != nil && !p.Return {
		for i, a := range p.Args {
			if atStackPointer(a.Expr) && e.Has(p.ArgName(i)) {
				return p.ArgName(i)
			}
		}
	}
	if e.Has("__probe_ret_ip") {
		return "__probe_ret_ip"
	}
	return ""
}

// atStackPointer tells a fetch of the word the stack pointer points to.
func atStackPointer(f probe.Fetch) bool {
	switch f := f.(type) {
	case probe.Stack:
		return f == 0
	case probe.Mem:
		if f.Off != 0 || f.User {
			return false
		}
		switch in := f.Inner.(type) {
		case probe.Stack:
			return in < 0
		case probe.Reg:
			return in == "sp" || in == "rsp" || in == "esp"
		}
	}
	return false
}

// userSpace is the top of user addresses on 64-bit kernels; uprobe
// events' __probe_ip lies below it.
const userSpace = 1 << 47

// IsUser tells an event of user space: its probe address (a uprobe's)
// lies below the kernel's half.
func IsUser(e *trace.Event) bool {
	ip, ok := e.Uint("__probe_ip")
	if !ok {
		ip, ok = e.Uint("__probe_func")
	}
	return ok && ip < userSpace
}

// Code symbolizes addr, a return address recorded by e: a kernel address
// by kallsyms, a user-space one by the binary e's uprobe is on (the
// binary's load address follows from the probe's own address). The
// function and line are those of the call instruction before addr.
func (s *Symbolizer) Code(e *trace.Event, addr uint64) (Place, bool) {
	if s == nil || addr == 0 {
		return Place{}, false
	}
	if !IsUser(e) {
		if addr < userSpace {
			return Place{}, false
		}
		return s.kernelTable().lookup(addr)
	}
	p := s.def(e)
	if p == nil || p.Target.Path == "" {
		return Place{}, false
	}
	ip, ok := e.Uint("__probe_ip")
	if !ok {
		ip, ok = e.Uint("__probe_func")
	}
	if !ok {
		return Place{}, false
	}
	b := s.binary(p.Target.Path)
	if b == nil {
		return Place{}, false
	}
	probeAddr, ok := b.vaddr(p.Target.Offset)
	if !ok {
		return Place{}, false
	}
	return b.lookup(addr - (ip - probeAddr))
}

func (s *Symbolizer) kernelTable() *table {
	if !s.kernelRead {
		s.kernelRead = true
		if s.kallsyms != nil {
			if text, err := s.kallsyms(); err == nil {
				s.kernel = parseKallsyms(text)
			}
		}
	}
	return s.kernel
}

func (s *Symbolizer) binary(path string) *binary {
	b, ok := s.bins[path]
	if !ok {
		b, _ = openBinary(path)
		s.bins[path] = b
	}
	return b
}

// trimDir drops dir/ from the start of name.
func trimDir(name, dir string) string {
	if dir != "" && strings.HasPrefix(name, dir+"/") {
		return name[len(dir)+1:]
	}
	return name
}
