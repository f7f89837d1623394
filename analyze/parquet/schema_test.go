package parquet

import (
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze/trace"
)

func textEvent(name string, kv ...string) *trace.Event {
	e := &trace.Event{Name: name}
	for i := 0; i+1 < len(kv); i += 2 {
		e.Fields = append(e.Fields, trace.KV{Key: kv[i], Val: kv[i+1]})
	}
	return e
}

// TestSchemaColumns: one column per field in the order met, typed by what
// the values are, renamed when a fixed column has the name.
func TestSchemaColumns(t *testing.T) {
	s := newSchemaBuilder()
	for _, e := range []*trace.Event{
		textEvent("a", "__probe_ip", "0x10", "addr", "0xffff8880", "n", "-3", "Comm", "bash"),
		textEvent("b", "n", "7", "mixed", "5", "big", "18446744073709551615"),
		textEvent("c", "mixed", "0x5", "arg_ts", "1", "ts", "2"),
		{Kind: trace.Lost, Name: "ignored"},
	} {
		s.event(e)
	}
	var got []string
	for _, c := range s.columns()[numFixed:] {
		got = append(got, c.Name+":"+c.Field+":"+c.Type.String())
	}
	want := "addr:addr:UINT64 n:n:INT64 arg_Comm:Comm:STRING mixed:mixed:STRING big:big:UINT64 arg_ts:arg_ts:INT64 arg_arg_ts:ts:INT64"
	if strings.Join(got, " ") != want {
		t.Errorf("columns\n %s\nwant\n %s", strings.Join(got, " "), want)
	}
}

func TestTextKind(t *testing.T) {
	for v, want := range map[string]kind{
		"0x1f": kindUnsigned, "0X1F": kindUnsigned, "0xzz": kindText, "-12": kindSigned, "12": kindSigned,
		"18446744073709551615": kindUnsigned, `"str"`: kindText, "": kindText, "(fault)": kindText,
	} {
		if got := textKind(v); got != want {
			t.Errorf("textKind(%q) = %d, want %d", v, got, want)
		}
	}
}
