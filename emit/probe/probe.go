// Package probe holds the value that carries one probe from resolution to the
// kernel, and its kprobe_events / uprobe_events text form.
//
// Everything upstream (resolve) produces a [Probe]; everything downstream
// (emit's tracefs client, record) consumes it. The text a [Probe] turns into is
// produced here and nowhere else, and matches what `perf probe -D` (6.1) prints:
//
//	p:probe/vfs_read vfs_read+0 count=%dx:x64
//	r:probe/vfs_read__return vfs_read+0 $retval
//	p:probe_prog/work /tmp/prog:0x1139 n=%di:s32
package probe

import (
	"fmt"
	"strconv"
	"strings"
)

// Probe is one trace event definition: one address, one line of
// kprobe_events or uprobe_events.
type Probe struct {
	Group, Event string // "probe", "vfs_read_L18"
	Return       bool   // a return probe (r:)
	MaxActive    int    // r<N>; 0 = kernel default (perf never prints it)
	Target       Location
	Args         []FetchArg
}

// Location is where a probe sits. Kernel probes use Symbol+Offset (with
// Module for module symbols, or Address for absolute addresses); user-space
// probes use Path+Offset, where Offset is a file offset.
type Location struct {
	Module  string // kernel module name, "" for vmlinux
	Symbol  string // kernel symbol; "" with Address set means an absolute address
	Address uint64 // absolute kernel address when Symbol == ""
	Path    string // user binary; non-empty makes this a uprobe
	Offset  uint64 // bytes from Symbol, or file offset within Path
}

// IsUprobe reports whether the location is in a user-space binary.
func (l Location) IsUprobe() bool { return l.Path != "" }

// String renders the place the way perf probe 6.1 writes it:
// "[MOD:]SYM+OFF" (decimal, +0 always printed), "[MOD:]0xADDR", or
// "PATH:0xOFF".
func (l Location) String() string {
	switch {
	case l.Path != "":
		return l.Path + ":0x" + strconv.FormatUint(l.Offset, 16)
	case l.Symbol == "":
		return modPrefix(l.Module) + "0x" + strconv.FormatUint(l.Address, 16)
	default:
		return modPrefix(l.Module) + l.Symbol + "+" + strconv.FormatUint(l.Offset, 10)
	}
}

func modPrefix(m string) string {
	if m == "" {
		return ""
	}
	return m + ":"
}

// FetchArg is one fetch argument: NAME=EXPR:TYPE. Name and Type may be empty;
// an argument without a name is named arg<N> by the kernel.
type FetchArg struct {
	Name string
	Expr Fetch
	Type string
}

// String renders the argument as it appears in a probe definition.
func (a FetchArg) String() string {
	var b strings.Builder
	if a.Name != "" {
		b.WriteString(a.Name)
		b.WriteByte('=')
	}
	b.WriteString(a.Expr.String())
	if a.Type != "" {
		b.WriteByte(':')
		b.WriteString(a.Type)
	}
	return b.String()
}

// Fetch is the expression part of a fetch argument.
type Fetch interface {
	fmt.Stringer
	isFetch()
}

// Reg fetches a register by its kprobe name without the '%' ("di", "x0").
type Reg string

// Mem dereferences Inner+Off; User selects user memory (+u).
type Mem struct {
	Off   int64
	User  bool
	Inner Fetch
}

// Stack fetches the N-th stack entry ($stackN); N < 0 means $stack.
type Stack int

// Retval is $retval.
type Retval struct{}

// Comm is $comm.
type Comm struct{}

// Arg is $argN (1-based).
type Arg int

// Imm is an immediate value (\IMM).
type Imm int64

// Symbol fetches memory at a kernel symbol: @SYM+OFF. The offset is always
// printed, as perf prints DWARF-resolved globals ("@jiffies+0").
type Symbol struct {
	Name string
	Off  int64
}

// Raw is fetch text passed through verbatim (already validated by the caller).
type Raw string

func (r Reg) String() string { return "%" + string(r) }
func (m Mem) String() string {
	// The kernel reads "+u"/"-u" then the magnitude; perf's "+u%ld" would
	// give "+u-8(", which the kernel rejects (BAD_DEREF_OFFS).
	if m.User {
		if m.Off < 0 {
			return "-u" + strconv.FormatUint(uint64(-m.Off), 10) + "(" + m.Inner.String() + ")"
		}
		return "+u" + strconv.FormatInt(m.Off, 10) + "(" + m.Inner.String() + ")"
	}
	sign := "+"
	if m.Off < 0 {
		sign = ""
	}
	return sign + strconv.FormatInt(m.Off, 10) + "(" + m.Inner.String() + ")"
}
func (s Stack) String() string {
	if s < 0 {
		return "$stack"
	}
	return "$stack" + strconv.Itoa(int(s))
}
func (Retval) String() string   { return "$retval" }
func (Comm) String() string     { return "$comm" }
func (a Arg) String() string    { return "$arg" + strconv.Itoa(int(a)) }
func (i Imm) String() string    { return "\\" + strconv.FormatInt(int64(i), 10) }
func (s Symbol) String() string { return fmt.Sprintf("@%s%+d", s.Name, s.Off) }
func (r Raw) String() string    { return string(r) }

func (Reg) isFetch()    {}
func (Mem) isFetch()    {}
func (Stack) isFetch()  {}
func (Retval) isFetch() {}
func (Comm) isFetch()   {}
func (Arg) isFetch()    {}
func (Imm) isFetch()    {}
func (Symbol) isFetch() {}
func (Raw) isFetch()    {}

// String renders the whole definition line (without a trailing newline),
// exactly as perf probe -D prints it.
func (p Probe) String() string {
	var b strings.Builder
	if p.Return {
		b.WriteByte('r')
		if p.MaxActive > 0 {
			b.WriteString(strconv.Itoa(p.MaxActive))
		}
	} else {
		b.WriteByte('p')
	}
	b.WriteByte(':')
	b.WriteString(p.Group)
	b.WriteByte('/')
	b.WriteString(p.Event)
	b.WriteByte(' ')
	b.WriteString(p.Target.String())
	for _, a := range p.Args {
		b.WriteByte(' ')
		b.WriteString(a.String())
	}
	return b.String()
}
