package probe

import (
	"fmt"
	"strconv"
	"strings"
)

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

// Raw is fetch text kept as written: a spelling the types above would print
// differently ("+0x10(%di)"), or syntax they do not model. emit/probedef
// checks it like any other argument.
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

// ParseFetch reads fetch text into the typed expressions above when it is
// exactly their rendering, and keeps anything else as Raw, so that
// ParseFetch(s).String() == s always. It does not check the text against
// the kernel's grammar (emit/probedef does).
func ParseFetch(s string) Fetch {
	if f, ok := parseFetch(s); ok && f.String() == s {
		return f
	}
	return Raw(s)
}

func parseFetch(s string) (Fetch, bool) {
	switch {
	case s == "$retval":
		return Retval{}, true
	case s == "$comm":
		return Comm{}, true
	case s == "$stack":
		return Stack(-1), true
	case strings.HasPrefix(s, "$stack"):
		n, err := strconv.Atoi(s[len("$stack"):])
		return Stack(n), err == nil && n >= 0
	case strings.HasPrefix(s, "$arg"):
		n, err := strconv.Atoi(s[len("$arg"):])
		return Arg(n), err == nil && n > 0
	case strings.HasPrefix(s, "%"):
		return Reg(s[1:]), len(s) > 1
	case strings.HasPrefix(s, "\\"):
		n, err := strconv.ParseInt(s[1:], 10, 64)
		return Imm(n), err == nil
	case strings.HasPrefix(s, "@"):
		i := strings.LastIndexAny(s, "+-")
		if i <= 1 {
			return nil, false
		}
		off, err := strconv.ParseInt(s[i:], 10, 64)
		return Symbol{Name: s[1:i], Off: off}, err == nil
	case strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-"):
		open := strings.IndexByte(s, '(')
		if open < 0 || !strings.HasSuffix(s, ")") {
			return nil, false
		}
		num, user := s[:open], false
		if len(num) > 1 && num[1] == 'u' {
			num, user = num[:1]+num[2:], true
		}
		off, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return nil, false
		}
		inner, ok := parseFetch(s[open+1 : len(s)-1])
		return Mem{Off: off, User: user, Inner: inner}, ok
	}
	return nil, false
}
