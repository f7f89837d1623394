package histfmt_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/histfmt"
)

// strs are the string fields of the events the testdata comes from.
var strs = &histfmt.Options{Strings: []string{"comm"}}

// render prints tables as the kernel does (hist_show and the helpers it
// calls in kernel/trace/trace_events_hist.c): a model of the printer to
// check that Parse understood every byte.
func render(ts []histfmt.Table) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("# event histogram\n#\n# trigger info: " + t.Trigger)
		if t.Filter != "" {
			b.WriteString(" if " + t.Filter)
		}
		if t.Paused {
			b.WriteString(" [paused]\n#\n\n")
		} else {
			b.WriteString(" [active]\n#\n\n")
		}
		for _, e := range t.Entries {
			b.WriteString("{ ")
			multiline := false
			for j, k := range t.Keys {
				if j > 0 {
					b.WriteString(", ")
				}
				f := e.Keys[j]
				switch k.Kind {
				case histfmt.KindNumber:
					fmt.Fprintf(&b, "%s: %10d", k.Name, f.Num)
				case histfmt.KindHex:
					fmt.Fprintf(&b, "%s: %x", k.Name, f.Num)
				case histfmt.KindLog2:
					fmt.Fprintf(&b, "%s: ~ 2^%-2d", k.Name, f.Num)
				case histfmt.KindBuckets:
					fmt.Fprintf(&b, "%s: ~ %d-%d", k.Name, f.Num, f.Num+k.Buckets-1)
				case histfmt.KindString:
					fmt.Fprintf(&b, "%s: %-50s", k.Name, f.Text)
				case histfmt.KindExecname:
					fmt.Fprintf(&b, "%s: %-16s[%10d]", k.Name, f.Text, f.Num)
				case histfmt.KindSyscall:
					fmt.Fprintf(&b, "%s: %-30s[%3d]", k.Name, f.Text, f.Num)
				case histfmt.KindSym:
					fmt.Fprintf(&b, "%s: [%x] %-45s", k.Name, f.Num, f.Text)
				case histfmt.KindSymOffset:
					fmt.Fprintf(&b, "%s: [%x] %-55s", k.Name, f.Num, f.Text)
				case histfmt.KindStacktrace:
					multiline = true
					if k.Name == "common_stacktrace" {
						b.WriteString("common_stacktrace:\n")
					} else {
						b.WriteString(k.Name)
					}
					if f.Text != "" {
						for _, fr := range strings.Split(f.Text, "\n") {
							b.WriteString("         " + fr + "\n")
						}
					}
				}
			}
			if !multiline {
				b.WriteString(" ")
			}
			b.WriteString("}")
			for j, v := range e.Values {
				if j > 0 || strings.Contains(t.Trigger, ":nohitcount") {
					b.WriteString(" ")
				}
				switch {
				case strings.HasSuffix(v.Name, " (%)") && v.Text == "[ERROR]":
					fmt.Fprintf(&b, " %s:[ERROR]", v.Name)
				case strings.HasSuffix(v.Name, " (%)"):
					fmt.Fprintf(&b, " %s: %3d.%02d", v.Name, v.Num/100, v.Num%100)
				case isGraph(t.Trigger, j):
					fmt.Fprintf(&b, " %s: %-20s", v.Name, v.Text)
				default:
					fmt.Fprintf(&b, " %s: %10s", v.Name, v.Text)
				}
			}
			for _, a := range e.Actions {
				fmt.Fprintf(&b, "\n\t%s: %10d", a[0].Name, a[0].Num)
				for _, f := range a[1:] {
					if f.Name == "comm" {
						fmt.Fprintf(&b, "  %s: %-32s", f.Name, f.Text)
					} else {
						fmt.Fprintf(&b, "  %s: %10d", f.Name, f.Num)
					}
				}
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "\nTotals:\n    Hits: %d\n    Entries: %d\n    Dropped: %d\n", t.Hits, len(t.Entries), t.Dropped)
	}
	return b.String()
}

// isGraph tells whether the i-th printed value of the trigger's entries is
// a .graph bar.
func isGraph(trigger string, i int) bool {
	for _, a := range strings.Split(trigger, ":") {
		if vals, ok := strings.CutPrefix(a, "vals="); ok {
			v := strings.Split(vals, ",")
			return i < len(v) && strings.HasSuffix(v[i], ".graph")
		}
	}
	return false
}

func seeds(t testing.TB) map[string]string {
	paths, err := filepath.Glob("testdata/*.hist")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata/*.hist: %v", err)
	}
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = string(b)
	}
	return out
}

// TestRealFiles: hist files read from Linux 6.1 and 6.12 parse, and print
// back byte for byte.
func TestRealFiles(t *testing.T) {
	for name, text := range seeds(t) {
		ts, err := histfmt.Parse(text, strs)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := render(ts); got != text {
			t.Errorf("%s: printed back differently:\n%s\nwant\n%s", name, got, text)
		}
	}
}

// TestSynth checks the values read from the latency triggers' tables of
// Linux 6.1: keys, sums, the tracked maximum and the saved pid.
func TestSynth(t *testing.T) {
	b, err := os.ReadFile("testdata/linux61-synth.hist")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := histfmt.Parse(string(b), strs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 4 {
		t.Fatalf("%d tables, want 4", len(ts))
	}
	t0 := ts[0]
	wantKeys := []histfmt.Key{{Name: "comm", Kind: histfmt.KindString}, {Name: "ns_plus1", Kind: histfmt.KindLog2}}
	if !reflect.DeepEqual(t0.Keys, wantKeys) || t0.Paused || t0.Hits != 16 || t0.Dropped != 0 || len(t0.Entries) != 6 {
		t.Fatalf("table 0: %+v", t0)
	}
	e := t0.Entries[0]
	if e.Keys[0].Text != "sleeper" || e.Keys[1].Num != 22 || e.Keys[1].Text != "~ 2^22" {
		t.Errorf("entry 0 keys: %+v", e.Keys)
	}
	if hc, ok := e.Value("hitcount"); !ok || hc.Num != 1 {
		t.Errorf("hitcount: %+v", hc)
	}
	if s, ok := e.Value("ns_plus1"); !ok || s.Num != 4045446 {
		t.Errorf("sum: %+v", s)
	}
	if m, ok := e.Value("max"); !ok || m.Num != 4045446 {
		t.Errorf("max: %+v", m)
	}
	if p, ok := e.Value("pid"); !ok || p.Num != 99 {
		t.Errorf("pid: %+v", p)
	}
	if _, ok := e.Value("nothing"); ok {
		t.Error("found a value that is not there")
	}
	if !strings.HasPrefix(ts[1].Trigger, "hist:keys=comm,ns_plus1.log2:vals=hitcount:mn=-(ns_plus1)") {
		t.Errorf("table 1 trigger %q", ts[1].Trigger)
	}
}

// TestStrings: a comm may hold the separators; its column width tells
// where it ends. Without Options.Strings a string key is not a number.
func TestStrings(t *testing.T) {
	text := "# event histogram\n#\n# trigger info: hist:keys=comm,lat.log2:vals=hitcount:sort=hitcount:size=2048 if comm != \"x\" [paused]\n#\n\n" +
		fmt.Sprintf("{ comm: %-50s, lat: ~ 2^3  } hitcount: %10d\n", "a, lat: ~ 2^3 }", 7) +
		fmt.Sprintf("{ comm: %-50s, lat: ~ 2^12 } hitcount: %10d\n", "", 1) +
		fmt.Sprintf("{ comm: %-50s, lat: ~ 2^5  } hitcount: %10d\n", strings.Repeat("z", 60), 2) +
		"\nTotals:\n    Hits: 10\n    Entries: 3\n    Dropped: 4\n"
	ts, err := histfmt.Parse(text, strs)
	if err != nil {
		t.Fatal(err)
	}
	tb := ts[0]
	if !tb.Paused || tb.Filter != `comm != "x"` || tb.Dropped != 4 || len(tb.Entries) != 3 {
		t.Fatalf("%+v", tb)
	}
	for i, want := range []string{"a, lat: ~ 2^3 }", "", strings.Repeat("z", 60)} {
		if got := tb.Entries[i].Keys[0].Text; got != want {
			t.Errorf("entry %d: comm %q, want %q", i, got, want)
		}
	}
	if got := render(ts); got != text {
		t.Errorf("printed back:\n%s", got)
	}
	if _, err := histfmt.Parse(text, nil); !errors.Is(err, histfmt.ErrSyntax) {
		t.Errorf("comm read as a number: %v", err)
	}
}

// TestMalformed: damaged files are errors wrapping ErrSyntax, never a panic
// or a silent partial result.
func TestMalformed(t *testing.T) {
	b, err := os.ReadFile("testdata/linux61-synth.hist")
	if err != nil {
		t.Fatal(err)
	}
	good := string(b)
	for name, text := range map[string]string{
		"cut":            good[:len(good)/2],
		"no state":       strings.Replace(good, " [active]", "", 1),
		"entries count":  strings.Replace(good, "Entries: 6", "Entries: 7", 1),
		"not a number":   strings.Replace(good, "hitcount:          1", "hitcount:          x", 1),
		"bad key":        strings.Replace(good, "keys=comm,", "keys=comm.bogus,", 1),
		"not hist":       strings.Replace(good, "trigger info: hist:", "trigger info: snapshot:", 1),
		"no totals":      good[:strings.Index(good, "\nTotals:")],
		"garbage":        "hello\n",
		"missing braces": strings.Replace(good, "{ comm", "comm", 1),
	} {
		if _, err := histfmt.Parse(text, strs); !errors.Is(err, histfmt.ErrSyntax) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if ts, err := histfmt.Parse("", nil); err != nil || len(ts) != 0 {
		t.Errorf("empty file: %v, %v", ts, err)
	}
}

// FuzzParse: any text parses or fails with ErrSyntax, and what parses
// prints back (as the kernel would print it) to text that parses to the
// same tables.
func FuzzParse(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ts, err := histfmt.Parse(text, strs)
		if err != nil {
			if !errors.Is(err, histfmt.ErrSyntax) {
				t.Fatalf("error not wrapping ErrSyntax: %v", err)
			}
			return
		}
		again, err := histfmt.Parse(render(ts), strs)
		if err != nil {
			t.Fatalf("printed back, it does not parse: %v\n%q", err, render(ts))
		}
		if !reflect.DeepEqual(ts, again) {
			t.Fatalf("printed back, it parses differently:\n%+v\n%+v", ts, again)
		}
	})
}
