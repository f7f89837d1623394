package spec

import (
	"strings"
)

// Arg is a parsed probe argument (perf's struct perf_probe_arg):
//
//	[NAME=]LOCALVAR|$retval|%REG|@SYMBOL|$vars|$params|RAWFETCH[:TYPE][@user]
//	LOCALVAR := var { "->" field | "." field | "[" N "]" }
type Arg struct {
	Name    string // NAME; when not given but Fields exist, the last non-index field name
	HasName bool   // perf's arg->name != NULL (NAME= given, possibly empty, or auto-named)
	Var     string // the variable, or the whole raw fetch text for non-C-variable args
	Fields  []Field
	Type    string // after the first ':'
	HasType bool   // a ':' was present (Type may be "")
	User    bool   // "@user" suffix (user-space dereference)
	Raw     string // the original text
}

// Field is one member access or array index (perf's perf_probe_arg_field).
type Field struct {
	// Name is the member name, or for an index the literal text "[N]" as
	// written (perf keeps the brackets, e.g. "[0x10]").
	Name    string
	Index   int64 // strtol(N, 0), saturated on overflow as in perf
	IsIndex bool
	Ref     bool // "->" or "[N]" (pointer dereference), false for "."
}

// isCVarname is perf's is_c_varname(): only the first byte is checked.
func isCVarname(s string) bool {
	return s != "" && (toolsIsAlpha(s[0]) || s[0] == '_')
}

// IsCVarname reports whether perf treats an argument's Var as a C variable
// (first byte a letter or '_'); perf rejects such arguments on return probes.
func IsCVarname(s string) bool { return isCVarname(cString(s)) }

// Options adapts parsing to the target, for the few grammar decisions perf
// makes with knowledge of the running kernel.
type Options struct {
	// NoUserAccess tells that the kernel's tracefs README does not advertise
	// user-space memory access ("*u]<offset>*"). perf then rejects an
	// argument with an "@user" suffix, at the moment the suffix is seen
	// (before type and field parsing), with UserAccessUnsupportedMsg.
	NoUserAccess bool
	// EntryValues lets variables follow a %return point: on kernels that
	// offer entry values at return (Linux 6.9+), they are the values the
	// function's arguments had at its entry (the resolver checks the
	// kernel). perf 6.1 refuses them ("You can't specify local variable
	// for kretprobe").
	EntryValues bool
}

// UserAccessUnsupportedMsg is perf's message for "@user" on a kernel
// without user-space access support (see Options.NoUserAccess).
const UserAccessUnsupportedMsg = semanticPrefix + "ftrace does not support user access"

// ParseArg parses one probe argument like perf's parse_perf_probe_arg(),
// assuming the kernel supports "@user" (see ParseArgOpts).
func ParseArg(s string) (*Arg, error) { return ParseArgOpts(s, Options{}) }

// ParseArgOpts is ParseArg with target options.
func ParseArgOpts(s string, opts Options) (*Arg, error) {
	s = cString(s)
	a := &Arg{Raw: s}
	str := s
	if i := strings.IndexByte(str, '='); i >= 0 {
		a.Name, a.HasName = str[:i], true
		str = str[i+1:]
	}
	if i := strings.IndexByte(str, '@'); i > 0 && str[i+1:] == "user" {
		if opts.NoUserAccess {
			return nil, &SyntaxError{Perf: UserAccessUnsupportedMsg}
		}
		a.User = true
		str = str[:i]
	}
	if i := strings.IndexByte(str, ':'); i >= 0 {
		a.Type, a.HasType = str[i+1:], true
		str = str[:i]
	}

	const fieldDelims = "-.["
	t := strings.IndexAny(str, fieldDelims)
	if !isCVarname(str) || t < 0 {
		a.Var = str // register, symbol, special or raw fetch argument
		return a, nil
	}

	a.Var = str[:t]
	goodname := a.Var
	for {
		var f Field
		if str[t] == '[' {
			str = str[t:]
			v, n, _ := strtolC(str[1:])
			end := 1 + n // perf's endptr; 1 when nothing was converted
			f.Index, f.IsIndex, f.Ref = v, true, true
			if end >= len(str) || str[end] != ']' || end == 1 {
				return nil, semErr("Array index must be a number.")
			}
			t = end + 1
			if t == len(str) {
				t = -1
			}
		} else {
			switch {
			case str[t] == '.':
				str = str[t+1:]
			case t+1 < len(str) && str[t+1] == '>':
				// perf does not check that str[t] is '-': after an index,
				// "a[1]x>b" is read as a[1]->b.
				str = str[t+2:]
				f.Ref = true
			default:
				return nil, semErr("Argument parse error: %s", str)
			}
			t = strings.IndexAny(str, fieldDelims)
		}
		if t >= 0 {
			f.Name = str[:t]
		} else {
			f.Name = str // the last field
		}
		if !strings.HasPrefix(str, "[") {
			goodname = f.Name
		}
		a.Fields = append(a.Fields, f)
		if t < 0 {
			break
		}
	}
	if !a.HasName {
		a.Name, a.HasName = goodname, true
	}
	return a, nil
}

// String is perf's synthesize_perf_probe_arg(): "NAME=VAR" (or VAR when
// there is no name), then the fields, then ":TYPE". The "@user" suffix is
// not printed, as in perf.
func (a Arg) String() string {
	var b strings.Builder
	if a.HasName {
		b.WriteString(a.Name + "=" + a.Var)
	} else {
		b.WriteString(a.Var)
	}
	for _, f := range a.Fields {
		switch {
		case strings.HasPrefix(f.Name, "["):
			b.WriteString(f.Name)
		case f.Ref:
			b.WriteString("->" + f.Name)
		default:
			b.WriteString("." + f.Name)
		}
	}
	if a.HasType {
		b.WriteString(":" + a.Type)
	}
	return b.String()
}
