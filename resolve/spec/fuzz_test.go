package spec

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/emit/probedef"
)

// checkErrType asserts the error contract: grammar errors are *SyntaxError
// matching ErrSyntax.
func checkErrType(t *testing.T, in string, err error) {
	t.Helper()
	var se *SyntaxError
	switch {
	case errors.As(err, &se):
		if !errors.Is(err, ErrSyntax) {
			t.Fatalf("%q: bad error chain for %v", in, err)
		}
		if se.Perf != "" && !strings.HasPrefix(se.Perf, semanticPrefix) {
			t.Fatalf("%q: message without perf prefix: %q", in, se.Perf)
		}
	default:
		t.Fatalf("%q: unexpected error type %T: %v", in, err, err)
	}
}

// pointRoundTrips reports whether perf's grammar guarantees that
// ParsePoint(p.String()) gives back p (event/group aside). It does not when:
//   - there is a lazy pattern (synthesize_perf_probe_point omits it);
//   - a name contains a byte that is special in the grammar, a quote or a
//     backslash (escapes and quotes are removed when parsing and not
//     re-added);
//   - the file is "*" (only from a quoted "*": FUNC@* has no file);
//   - the file is longer than 30 bytes (shortened);
//   - there is neither function nor file (":1" is accepted by perf, and
//     printed as "");
//   - the function is empty but present (only from the input "\");
//   - "FUNC:LINE" with a '.' in FUNC and no file reads back as SRC:ALN;
//   - the result looks like an SDT event ("sdt_X:Y").
func pointRoundTrips(p *Point) bool {
	const special = "\\;:+@%=\"'"
	switch {
	case p.HasLazy,
		p.File == "*", // reads back as FUNC@*
		!p.HasFunction && !p.HasFile,
		strings.ContainsAny(p.Function, special),
		strings.ContainsAny(p.File, special),
		len(p.File) > 30,
		p.HasFunction && p.Function == "",
		strings.Contains(p.Function, ".") && !p.HasFile && p.Line != 0:
		return false
	}
	return !isSDTEvent(p.String())
}

func checkPointRoundTrip(t *testing.T, in string, p *Point) {
	t.Helper()
	if (p.Function != "" && !p.HasFunction) || (p.File != "" && !p.HasFile) ||
		(p.Lazy != "" && !p.HasLazy) || (p.IsAbs && !strings.HasPrefix(p.Function, "0x")) {
		t.Fatalf("%q: inconsistent point %#v", in, *p)
	}
	if !pointRoundTrips(p) {
		return
	}
	s := p.String()
	q, err := ParsePoint(s)
	if err != nil {
		t.Fatalf("%q -> %q: reparse failed: %v", in, s, err)
	}
	want := *p
	want.Group, want.Event = "", ""
	if !reflect.DeepEqual(*q, want) {
		t.Fatalf("%q -> %q:\n got %#v\nwant %#v", in, s, *q, want)
	}
}

// checkArgRoundTrip: synthesize_perf_probe_arg() output re-parses to the
// same argument except for "@user" (not synthesized) and Raw.
func checkArgRoundTrip(t *testing.T, in string, a *Arg) {
	t.Helper()
	if len(a.Fields) > 0 && !a.HasName {
		t.Fatalf("%q: fields without a name", in)
	}
	s := a.String()
	b, err := ParseArg(s)
	if err != nil {
		t.Fatalf("%q -> %q: reparse failed: %v", in, s, err)
	}
	want := *a
	want.User, want.Raw = false, s
	if !reflect.DeepEqual(*b, want) {
		t.Fatalf("%q -> %q:\n got %#v\nwant %#v", in, s, *b, want)
	}
}

func FuzzParseProbe(f *testing.F) {
	for _, c := range pointCases {
		f.Add(c.in)
	}
	for _, c := range probeCases {
		f.Add(c.in)
	}
	for _, c := range argCases {
		f.Add("vfs_read " + c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pr, err := ParseProbe(s)
		if err != nil {
			checkErrType(t, s, err)
			return
		}
		words := argvSplit(cString(s))
		if len(pr.Args) != len(words)-1 || len(pr.Args) > probedef.MaxTraceArgs {
			t.Fatalf("%q: %d args for %d words", s, len(pr.Args), len(words))
		}
		pt, err := ParsePoint(words[0])
		if err != nil {
			t.Fatalf("%q: ParsePoint(%q) fails: %v", s, words[0], err)
		}
		if !pr.UserEvent && pt.Event == "" {
			pt.Event = pr.Point.Event // the generated FUNC_L<line> name
		}
		if !reflect.DeepEqual(*pt, pr.Point) {
			t.Fatalf("%q: point %#v vs %#v", s, *pt, pr.Point)
		}
		checkPointRoundTrip(t, s, &pr.Point)
		for i := range pr.Args {
			a := &pr.Args[i]
			if a.Raw != words[i+1] {
				t.Fatalf("%q: Raw %q", s, a.Raw)
			}
			if pr.Point.Return && isCVarname(a.Var) {
				t.Fatalf("%q: C variable on a return probe accepted", s)
			}
			checkArgRoundTrip(t, s, a)
		}
	})
}

func FuzzParsePoint(f *testing.F) {
	for _, c := range pointCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePoint(s)
		if err != nil {
			checkErrType(t, s, err)
			return
		}
		checkPointRoundTrip(t, s, p)
	})
}

func FuzzParseArg(f *testing.F) {
	for _, c := range argCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseArg(s)
		if err != nil {
			checkErrType(t, s, err)
			return
		}
		checkArgRoundTrip(t, s, a)
	})
}

// FuzzParseLineRange: a parsed range renders (LineRange.String) and re-parses
// to the same value; this is exact because names cannot contain ':' and the
// '@' split is at the first '@'.
func FuzzParseLineRange(f *testing.F) {
	for _, c := range lineCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lr, err := ParseLineRange(s)
		if err != nil {
			checkErrType(t, s, err)
			return
		}
		if !lr.HasFunction && !lr.HasFile || lr.Start > lr.End {
			t.Fatalf("%q: bad range %#v", s, *lr)
		}
		s2 := lr.String()
		lr2, err := ParseLineRange(s2)
		if err != nil || !reflect.DeepEqual(lr, lr2) {
			t.Fatalf("%q -> %q: %#v, %v", s, s2, lr2, err)
		}
	})
}
