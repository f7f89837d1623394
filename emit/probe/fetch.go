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

// Args is $arg*: every parameter of the probed function, which kernels
// with BTF arguments expand into one argument each, named as BTF names them.
type Args struct{}

// Var is a function parameter by the name BTF gives it, with the struct or
// union members reached through it: "count", "file->f_pos",
// "$retval->sk_state" (Name "$retval": the returned value). Kernels with BTF
// arguments (fprobes, kprobes at a function's entry or return, tprobes)
// resolve it.
type Var struct {
	Name   string
	Fields []Member
}

// Member is one step of a Var: ->NAME through a pointer (Arrow), or .NAME
// inside the struct reached so far.
type Member struct {
	Name  string
	Arrow bool
}

// EventField is $NAME on an eprobe: the field NAME of the attached event.
type EventField string

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
func (Retval) String() string       { return "$retval" }
func (Comm) String() string         { return "$comm" }
func (a Arg) String() string        { return "$arg" + strconv.Itoa(int(a)) }
func (i Imm) String() string        { return "\\" + strconv.FormatInt(int64(i), 10) }
func (s Symbol) String() string     { return fmt.Sprintf("@%s%+d", s.Name, s.Off) }
func (r Raw) String() string        { return string(r) }
func (Args) String() string         { return "$arg*" }
func (f EventField) String() string { return "$" + string(f) }
func (v Var) String() string {
	var b strings.Builder
	b.WriteString(v.Name)
	for _, m := range v.Fields {
		if m.Arrow {
			b.WriteString("->")
		} else {
			b.WriteByte('.')
		}
		b.WriteString(m.Name)
	}
	return b.String()
}

func (Reg) isFetch()        {}
func (Mem) isFetch()        {}
func (Stack) isFetch()      {}
func (Retval) isFetch()     {}
func (Comm) isFetch()       {}
func (Arg) isFetch()        {}
func (Imm) isFetch()        {}
func (Symbol) isFetch()     {}
func (Raw) isFetch()        {}
func (Args) isFetch()       {}
func (Var) isFetch()        {}
func (EventField) isFetch() {}

// ParseFetch reads fetch text of a kprobe or uprobe line into the typed
// expressions above when it is exactly their rendering, and keeps anything
// else as Raw, so that ParseFetch(s).String() == s always. It does not check
// the text against the kernel's grammar (emit/probedef does).
func ParseFetch(s string) Fetch { return ParseFetchOf(Kprobe, s) }

// ParseFetchOf is ParseFetch for a line of kind k: on an eprobe, $NAME is
// the attached event's field (EventField) rather than a variable of the
// probe ($stack, $arg1), except $comm.
func ParseFetchOf(k Kind, s string) Fetch {
	if f, ok := parseFetch(k, s); ok && f.String() == s {
		return f
	}
	return Raw(s)
}

func parseFetch(k Kind, s string) (Fetch, bool) {
	switch {
	case k == Eprobe && strings.HasPrefix(s, "$") && s != "$comm" && s != "$COMM":
		return EventField(s[1:]), isIdent(s[1:])
	case s == "$arg*":
		return Args{}, true
	case strings.HasPrefix(s, "$retval") && len(s) > len("$retval"):
		return parseVar(s)
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
		inner, ok := parseFetch(k, s[open+1:len(s)-1])
		return Mem{Off: off, User: user, Inner: inner}, ok
	case s != "" && (isAlpha(s[0]) || s[0] == '_'):
		return parseVar(s)
	}
	return nil, false
}

// parseVar reads NAME(->MEMBER|.MEMBER)*, NAME an identifier or $retval.
func parseVar(s string) (Fetch, bool) {
	var v Var
	i := strings.IndexAny(s, ".-")
	if i < 0 {
		i = len(s)
	}
	v.Name, s = s[:i], s[i:]
	if v.Name != "$retval" && !isIdent(v.Name) {
		return nil, false
	}
	for s != "" {
		m := Member{}
		switch {
		case strings.HasPrefix(s, "->"):
			m.Arrow, s = true, s[2:]
		case s[0] == '.':
			s = s[1:]
		default:
			return nil, false
		}
		j := strings.IndexAny(s, ".-")
		if j < 0 {
			j = len(s)
		}
		m.Name, s = s[:j], s[j:]
		if !isIdent(m.Name) {
			return nil, false
		}
		v.Fields = append(v.Fields, m)
	}
	return v, true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isIdent reports whether s follows the rules of C identifiers.
func isIdent(s string) bool {
	if s == "" || !(isAlpha(s[0]) || s[0] == '_') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(isAlpha(c) || c == '_' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
