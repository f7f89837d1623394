package spec

import (
	"strings"

	"github.com/gprobe/gprobe/emit/probedef"
)

// Go function names are qualified with their package's import path and
// may name a receiver: "main.work", "github.com/x/y.(*T).Method",
// "main.Map[go.shape.int]", "main.work.func1". perf's grammar takes a
// name with a '.' before a ':' or ';' for a source file ("main.work:3" is
// line 3 of the file main.work) and names events after the name's first
// word ("main.work" and "main.other" are both "main"). The functions here
// give the Go reading; the resolver uses it for Go programs, and only
// when no source file of the program has that name.

// sourceExts are the extensions of the source files a Go program's
// DWARF names: Go, assembly, and C for cgo.
var sourceExts = []string{".go", ".s", ".S", ".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".m"}

// couldBeGoFunction reports whether name, read as a source file, could be
// a qualified Go function name instead: it has a '.' in its last path
// element, and no source file extension.
func couldBeGoFunction(name string) bool {
	last := name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		last = name[i+1:]
	}
	// a receiver or type arguments may hold '/' themselves:
	// "main.(*Box[go.shape.*internal/x.T]).Get"
	if strings.ContainsAny(name, "([") {
		last = name
	}
	if !strings.Contains(last, ".") {
		return false
	}
	for _, ext := range sourceExts {
		if strings.HasSuffix(name, ext) {
			return false
		}
	}
	return true
}

// GoFunctionPoint gives the Go reading of a probe point that perf's
// grammar read as SRC:LINE or SRC;PATTERN: FUNC:LINE or FUNC;PATTERN,
// when SRC could be a qualified Go function name ("main.work:3",
// "github.com/x/y.(*T).Method;return"). ok is false for any other point.
func GoFunctionPoint(p Point) (Point, bool) {
	if !p.HasFile || p.HasFunction || !couldBeGoFunction(p.File) {
		return p, false
	}
	p.Function, p.HasFunction = p.File, true
	p.File, p.HasFile = "", false
	return p, true
}

// GoFunctionRange gives the Go reading of a -L range that perf's grammar
// read as a source file: "main.work", "main.work:3-5" name a function.
// ok is false for any other range.
func GoFunctionRange(lr LineRange) (LineRange, bool) {
	if !lr.HasFile || lr.HasFunction || !couldBeGoFunction(lr.File) {
		return lr, false
	}
	lr.Function, lr.HasFunction = lr.File, true
	lr.File, lr.HasFile = "", false
	return lr, true
}

// GoEventName is the event name gprobe derives from a Go function's name
// (where perf's EventName keeps the first word): the import path's
// directories and any type arguments are dropped, and every run of
// characters an event name cannot hold becomes one '_':
//
//	main.work                        main_work
//	github.com/x/y.(*T).Method       y_T_Method
//	main.T.Value                     main_T_Value
//	main.work.func1                  main_work_func1
//	main.Map[go.shape.int]           main_Map
//	main.(*Box[go.shape.string]).Get main_Box_Get
//
// A name longer than the kernel takes keeps its end (the function's own
// name). Two functions that give one name are told apart by the usual
// _N suffix.
func GoEventName(function string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(function); i++ {
		switch c := function[i]; {
		case c == '[':
			depth++
		case c == ']':
			if depth > 0 {
				depth--
			}
		case depth == 0:
			b.WriteByte(c)
		}
	}
	name := b.String()
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	var out []byte
	for i := 0; i < len(name); i++ {
		c := name[i]
		if toolsIsAlnum(c) || c == '_' {
			out = append(out, c)
		} else if len(out) > 0 && out[len(out)-1] != '_' {
			out = append(out, '_')
		}
	}
	s := strings.Trim(string(out), "_")
	// room for the longest suffix gprobe adds (__retinsn_NN)
	room := probedef.MaxEventNameLen - 1 - len("__retinsn_99")
	if len(s) > room {
		s = strings.TrimLeft(s[len(s)-room:], "_0123456789")
	}
	if s == "" || !toolsIsAlpha(s[0]) && s[0] != '_' {
		s = "go_" + s
	}
	if len(s) > room {
		s = s[:room] // "go_" and digits: its start tells more than its end
	}
	return s
}
