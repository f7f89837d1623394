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
func ParseLineRange(s string) (*LineRange, error) {
	name := cString(s)
	lr := &LineRange{Start: 0, End: math.MaxInt32}
	if i := strings.IndexByte(name, ':'); i >= 0 {
		rng := name[i+1:]
		name = name[:i]
		start, n, err := parseLineNum(rng, "start line")
		if err != nil {
			return nil, err
		}
		rng = rng[n:]
		end := int32(math.MaxInt32)
		if rng != "" && (rng[0] == '+' || rng[0] == '-') {
			c := rng[0]
			rng = rng[1:]
			end, n, err = parseLineNum(rng, "end line")
			if err != nil {
				return nil, err
			}
			rng = rng[n:]
			if c == '+' {
				end = end + start - 1 // int arithmetic, wraps as in perf
			}
		}
		lr.Start, lr.End = int(start), int(end)
		if start > end {
			return nil, semErr("Start line must be smaller than end line.")
		}
		if rng != "" {
			return nil, semErr("Tailing with invalid str '%s'.", rng)
		}
	}

	switch {
	case strings.IndexByte(name, '@') >= 0:
		i := strings.IndexByte(name, '@')
		lr.Function, lr.HasFunction = name[:i], true
		lr.File, lr.HasFile = name[i+1:], true
	case strings.ContainsAny(name, "/."):
		lr.File, lr.HasFile = name, true
	case IsCFuncName(name):
		lr.Function, lr.HasFunction = name, true
	default:
		return nil, semErr("'%s' is not a valid function name.", name)
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
