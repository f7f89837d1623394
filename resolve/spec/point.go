package spec

import (
	"strconv"
	"strings"
	"syscall"
)

// Point is a parsed PROBE POINT (perf's struct perf_probe_point plus the
// event/group names given in front of it):
//
//	[[GROUP:]EVENT=]FUNC[@SRC|@*][:RLN|+OFFS|%return|;PTN]
//	[[GROUP:]EVENT=]SRC:ALN
//	[[GROUP:]EVENT=]SRC;PTN
//	0xADDR
//
// The Has* flags record whether perf's corresponding pointer is non-NULL;
// they differ from `field != ""` only in degenerate inputs ("FUNC@" has an
// empty file, "FUNC;" an empty lazy pattern, "\" an empty function), which
// perf treats as present.
type Point struct {
	Group, Event string // user-given (ParseProbe may generate Event), "" if not given

	Function    string // FUNC (escapes removed); "" for SRC:ALN / SRC;PTN
	HasFunction bool
	File        string // @SRC or SRC (escapes removed)
	HasFile     bool
	Line        int    // 0 = unset (perf treats FUNC:0 as FUNC); C int range
	Offset      uint64 // 0 = unset
	Lazy        string // pattern after ';', escapes kept as perf keeps them
	HasLazy     bool
	Return      bool

	// Abs is the address when Function starts with "0x" (IsAbs); Function
	// then still holds the text, as in perf.
	Abs   uint64
	IsAbs bool

	// SDT is a point naming SDT markers or cached events:
	// "%[GROUP:]EVENT[@TARGET]" or "sdt_PROVIDER:EVENT[@TARGET]". Group
	// and Event are then globs (Group "" for any group), Function is
	// "%EVENT" (perf's pev->point.function, printed in messages), and
	// Target, when HasTarget, is the binary after '@' (a path or a prefix
	// of a cached build-id, escapes removed).
	SDT       bool
	Target    string
	HasTarget bool
}

// ParsePoint parses a probe point the way perf's parse_perf_probe_point()
// does, with two forms of newer perf for names that are not C's: quoted
// parts ("ns::Klass::method", 'Vec<u8>::push') are taken literally, and
// FUNC@* names a function in any file (perf 6.1 reads "*" as a file name).
// The input is a single word: no white-space splitting is done here
// (ParseProbe does that). Errors are *SyntaxError (perf's exact message).
func ParsePoint(s string) (*Point, error) {
	p := &Point{}
	if err := parsePoint(cString(s), p); err != nil {
		return nil, err
	}
	return p, nil
}

// isSDTEvent is perf's is_sdt_event().
func isSDTEvent(s string) bool {
	return strings.HasPrefix(s, "%") ||
		(strings.HasPrefix(s, "sdt_") && strings.IndexByte(s, ':') >= 0 &&
			strings.IndexByte(s, '=') < 0)
}

// parseEventName is perf's parse_perf_probe_event_name(): "[GROUP:]EVENT".
// The group is checked as a C name before unescaping, the event after.
// Error messages quote the raw (still escaped) text.
func parseEventName(s string, sdt bool) (group, event string, err error) {
	if i := strpbrkEsq(s, ":"); i >= 0 {
		raw := s[:i]
		if !sdt && !IsCFuncName(raw) {
			return "", "", badEventName(raw)
		}
		group = strdupEsc(raw)
		s = s[i+1:]
	}
	event, ok := strdupEsq(s)
	if !ok {
		return "", "", unclosedQuote(s)
	}
	if !sdt && !IsCFuncName(event) {
		return "", "", badEventName(s)
	}
	return group, event, nil
}

func badEventName(s string) error {
	return semErr("%s is bad for event name -it must follow C symbol-naming rule.", s)
}

// parseSDT reads an SDT point as perf does: "[%]" then "[GROUP:]EVENT",
// then "@TARGET"; any other of ";=@+%" is an error. perf first tries to
// complete TARGET as a build-id from its cache: the caller does that
// (Target keeps the text).
func parseSDT(arg string, p *Point) error {
	if arg[0] == '%' {
		arg = arg[1:]
	}
	p.SDT = true
	if i := strpbrkEsc(arg, ";=@+%"); i >= 0 {
		if arg[i] != '@' {
			return semErr("%s must be an SDT name.", arg)
		}
		p.Target, p.HasTarget = strdupEsc(arg[i+1:]), true
		arg = arg[:i]
	}
	p.Group, p.Event, _ = parseEventName(arg, true)
	p.Function, p.HasFunction = "%"+p.Event, true
	return nil
}

func parsePoint(arg string, p *Point) error {
	if isSDTEvent(arg) {
		return parseSDT(arg, p)
	}

	if i := strpbrkEsq(arg, ";=@+%"); i >= 0 && arg[i] == '=' {
		g, e, err := parseEventName(arg[:i], false)
		if err != nil {
			return err
		}
		p.Group, p.Event = g, e
		arg = arg[i+1:]
	}

	// File spec iff: no unescaped '+', '@' or '%'; an unescaped ':' or ';';
	// and a '.' somewhere before it.
	fileSpec := false
	if strpbrkEsq(arg, "+@%") < 0 {
		if i := strpbrkEsq(arg, ";:"); i >= 0 && strings.IndexByte(arg[:i], '.') >= 0 {
			fileSpec = true
		}
	}

	const delims = ";:+@%"
	head, rest, more := arg, "", false
	var nc byte
	if i := strpbrkEsq(arg, delims); i >= 0 {
		head, nc, rest, more = arg[:i], arg[i], arg[i+1:], true
	}
	if head != "" {
		name, ok := strdupEsq(head)
		if !ok {
			return unclosedQuote(head)
		}
		if fileSpec {
			p.File, p.HasFile = name, true
		} else {
			p.Function, p.HasFunction = name, true
			if strings.HasPrefix(name, "0x") {
				v, end, _ := strtoulC(name)
				if end != len(name) {
					return semErr("Invalid absolute address.")
				}
				p.Abs, p.IsAbs = v, true
			}
		}
	}

	for more {
		c, part := nc, rest
		if c == ';' {
			// The lazy pattern is the rest of the spec, escapes kept.
			p.Lazy, p.HasLazy = part, true
			break
		}
		if i := strpbrkEsq(part, delims); i >= 0 {
			part, nc, rest = part[:i], part[i], part[i+1:]
		} else {
			more = false
		}
		switch c {
		case ':':
			v, end, _ := strtoulC(part)
			if end != len(part) {
				return semErr("There is non-digit char in line number.")
			}
			p.Line = int(int32(uint32(v))) // unsigned long stored into an int
		case '+':
			v, end, _ := strtoulC(part)
			if end != len(part) {
				return semErr("There is non-digit character in offset.")
			}
			p.Offset = v
		case '@':
			if p.HasFile {
				return semErr("SRC@SRC is not allowed.")
			}
			if part == "*" {
				// FUNC@*: FUNC is a function, in any file (newer
				// perf; perf 6.1 looks for a file named "*").
				break
			}
			f, ok := strdupEsq(part)
			if !ok {
				return unclosedQuote(part)
			}
			p.File, p.HasFile = f, true
		case '%':
			if part != "return" {
				return &SyntaxError{Perf: semanticPrefix + "%" + part + " is not supported.", Errno: syscall.ENOTSUP}
			}
			p.Return = true
		}
	}

	switch {
	case p.HasLazy && p.Line != 0:
		return semErr("Lazy pattern can't be used with line number.")
	case p.HasLazy && p.Offset != 0:
		return semErr("Lazy pattern can't be used with offset.")
	case p.Line != 0 && p.Offset != 0:
		return semErr("Offset can't be used with line number.")
	case p.Line == 0 && !p.HasLazy && p.HasFile && !p.HasFunction:
		return semErr("File always requires line number or lazy pattern.")
	case p.Offset != 0 && !p.HasFunction:
		return semErr("Offset requires an entry function.")
	case (p.Offset != 0 || p.Line != 0 || p.HasLazy) && p.Return:
		return semErr("Offset/Line/Lazy pattern can't be used with return probe.")
	}
	return nil
}

// String is perf's synthesize_perf_probe_point(), the form used in messages
// such as "Probe point '%s' not found.". It omits the event name and the lazy
// pattern, prints at most one of +OFFS, :LINE and %return (in that priority),
// and shortens a file longer than 30 bytes to its tail (from the first '/'
// within the last 30 bytes, or the last 30 bytes). With neither function nor
// file (":1", ";x") it returns "" where perf 6.1 prints uninitialised memory.
func (p Point) String() string {
	var b strings.Builder
	if p.HasFunction {
		b.WriteString(p.Function)
		switch {
		case p.Offset != 0:
			b.WriteString("+" + strconv.FormatUint(p.Offset, 10))
		case p.Line != 0:
			b.WriteString(":" + strconv.Itoa(p.Line))
		case p.Return:
			b.WriteString("%return")
		}
	}
	if p.HasFile {
		f := p.File
		if len(f) > 30 {
			tail := f[len(f)-30:]
			if i := strings.IndexByte(tail, '/'); i >= 0 {
				f = tail[i+1:]
			} else {
				f = tail
			}
		}
		b.WriteString("@" + f)
		if !p.HasFunction && p.Line != 0 {
			b.WriteString(":" + strconv.Itoa(p.Line))
		}
	}
	return b.String()
}
