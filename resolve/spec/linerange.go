package spec

import (
	"math"
	"strconv"
	"strings"
)

// LineRange is a parsed -L/--line argument (perf's struct line_range):
//
//	FUNC[@SRC][:RLN[+NUM|-RLN2]] | SRC[:ALN[+NUM|-ALN2]]
//
// For FUNC forms Start/End are relative to the function's declaration line,
// for SRC forms they are absolute. Both are C ints: values are truncated to
// 32 bits and "+NUM" arithmetic wraps, exactly as in perf.
type LineRange struct {
	Function    string
	HasFunction bool // FUNC form; with '@' Function may be "" ("@k.c")
	File        string
	HasFile     bool // SRC form, or FUNC@SRC (File may be "" for "FUNC@")
	Start       int  // 0 when not given
	End         int  // inclusive; math.MaxInt32 when open
}

// ParseLineRange parses a -L argument like perf's parse_line_range_desc().
// Unlike probe points, no escapes are processed and the whole string is used
// (white space included).
//
// Rules: the range starts at the first ':'; numbers are strtol base 0 (an
// empty or overflowing number is an error); "+NUM" makes End = Start+NUM-1;
// Start > End is an error, checked before trailing garbage. The name is
// FUNC@SRC if it has an '@' (FUNC is then not validated), else SRC if it has
// a '/' or '.', else it must be a C name.
//
// Two forms of newer perf are taken too: FUNC@* is FUNC in any file
// (perf 6.1 looks for a file "*"), and, in an argument with a quote, quoted
// parts are literal ("ns::Klass::method":3-5); a quoted name without '@'
// is a function unless a '/' or '.' outside quotes makes it a file.
func ParseLineRange(s string) (*LineRange, error) {
	name := cString(s)
	if hasQuote(name) {
		return parseQuotedLineRange(name)
	}
	lr := &LineRange{Start: 0, End: math.MaxInt32}
	if i := strings.IndexByte(name, ':'); i >= 0 {
		if err := lr.parseRange(name[i+1:]); err != nil {
			return nil, err
		}
		name = name[:i]
	}

	switch {
	case strings.IndexByte(name, '@') >= 0:
		i := strings.IndexByte(name, '@')
		lr.Function, lr.HasFunction = name[:i], true
		if f := name[i+1:]; f != "*" {
			lr.File, lr.HasFile = f, true
		} else if i == 0 {
			return nil, semErr("Only '@*' is not allowed.")
		}
	case strings.ContainsAny(name, "/."):
		lr.File, lr.HasFile = name, true
	case IsCFuncName(name):
		lr.Function, lr.HasFunction = name, true
	default:
		return nil, semErr("'%s' is not a valid function name.", name)
	}
	return lr, nil
}

// parseRange reads ":START[+NUM|-END]" after the ':'.
func (lr *LineRange) parseRange(rng string) error {
	start, n, err := parseLineNum(rng, "start line")
	if err != nil {
		return err
	}
	rng = rng[n:]
	end := int32(math.MaxInt32)
	if rng != "" && (rng[0] == '+' || rng[0] == '-') {
		c := rng[0]
		rng = rng[1:]
		end, n, err = parseLineNum(rng, "end line")
		if err != nil {
			return err
		}
		rng = rng[n:]
		if c == '+' {
			end = end + start - 1 // int arithmetic, wraps as in perf
		}
	}
	lr.Start, lr.End = int(start), int(end)
	if start > end {
		return semErr("Start line must be smaller than end line.")
	}
	if rng != "" {
		return semErr("Tailing with invalid str '%s'.", rng)
	}
	return nil
}

// parseQuotedLineRange is ParseLineRange for an argument with quotes, as
// newer perf's parse_line_range_desc reads one (strpbrk_esq, strdup_esq):
// the range starts at the first ':' outside quotes.
func parseQuotedLineRange(name string) (*LineRange, error) {
	lr := &LineRange{Start: 0, End: math.MaxInt32}
	if i := strpbrkEsq(name, ":"); i >= 0 {
		if i == 0 {
			return nil, semErr("No file/function name in '%s'.", name)
		}
		if err := lr.parseRange(name[i+1:]); err != nil {
			return nil, err
		}
		name = name[:i]
	}
	unq := func(s string) (string, error) {
		u, ok := strdupEsq(s)
		if !ok {
			return "", unclosedQuote(s)
		}
		return u, nil
	}
	var err error
	switch i := strpbrkEsq(name, "@"); {
	case i >= 0:
		if f := name[i+1:]; f != "*" {
			if lr.File, err = unq(f); err != nil {
				return nil, err
			}
			lr.HasFile = true
		}
		if name[:i] != "" {
			if lr.Function, err = unq(name[:i]); err != nil {
				return nil, err
			}
			lr.HasFunction = true
		}
		if !lr.HasFunction && !lr.HasFile {
			return nil, semErr("Only '@*' is not allowed.")
		}
	case strpbrkEsq(name, "/.") >= 0:
		if lr.File, err = unq(name); err != nil {
			return nil, err
		}
		lr.HasFile = true
	default:
		if lr.Function, err = unq(name); err != nil {
			return nil, err
		}
		lr.HasFunction = true
	}
	return lr, nil
}

// parseLineNum is perf's parse_line_num(): strtol base 0 into a C int.
func parseLineNum(s, what string) (int32, int, error) {
	v, n, overflow := strtolC(s)
	if overflow || n == 0 {
		return 0, 0, semErr("'%s' is not a valid number.", what)
	}
	return int32(v), n, nil
}

// String renders the range in a form ParseLineRange parses back to the same
// value ("NAME:START-END"). It is not a perf output format.
func (lr LineRange) String() string {
	var name string
	switch {
	case lr.HasFunction && lr.HasFile:
		name = lr.Function + "@" + lr.File
	case lr.HasFile:
		name = lr.File
	default:
		name = lr.Function
	}
	return name + ":" + strconv.Itoa(lr.Start) + "-" + strconv.Itoa(lr.End)
}
