package trace

import (
	"encoding/binary"
	"testing"

	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
)

// A Go string's text is cut at its NAME_len field: the kernel's string
// fetch read on past its end up to a NUL.
func TestValueCutsGoStrings(t *testing.T) {
	// The format of "p:g/e ... s=+0(%ax):string s_len=%bx:s64 t=+0(%cx):string n=%dx:u64".
	f, err := eventfmt.Parse("g", `name: e
ID: 1234
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:unsigned long __probe_ip;	offset:8;	size:8;	signed:0;
	field:__data_loc char[] s;	offset:16;	size:4;	signed:1;
	field:s64 s_len;	offset:20;	size:8;	signed:1;
	field:__data_loc char[] t;	offset:28;	size:4;	signed:1;
	field:u64 n;	offset:32;	size:8;	signed:0;

print fmt: "(%lx) s=\"%s\" s_len=%Ld t=\"%s\" n=%Lu", REC->__probe_ip, __get_str(s), REC->s_len, __get_str(t), REC->n
`)
	if err != nil {
		t.Fatal(err)
	}
	rec := make([]byte, 40)
	str := []byte("alphabeta-and-what-follows\x00")
	other := []byte("plain\x00")
	binary.LittleEndian.PutUint32(rec[16:], uint32(len(str))<<16|uint32(len(rec)))
	binary.LittleEndian.PutUint64(rec[20:], 5)
	rec = append(rec, str...)
	binary.LittleEndian.PutUint32(rec[28:], uint32(len(other))<<16|uint32(len(rec)))
	rec = append(rec, other...)
	binary.LittleEndian.PutUint64(rec[32:], 12345)
	e := &Event{Format: f, Data: rec, Order: binary.LittleEndian}
	for name, want := range map[string]string{"s": "alpha", "t": "plain", "s_len": "5", "n": "0x3039"} {
		if got, ok := e.Value(name); !ok || got != want {
			t.Errorf("binary %s = %q, %v; want %q", name, got, ok, want)
		}
	}

	// Printed text: the same, and a number keeps its digits.
	te := &Event{Fields: []KV{{"s", "betagamma"}, {"s_len", "4"}, {"n", "123456"}, {"n_len", "2"}, {"u", "short"}, {"u_len", "40"}}}
	for name, want := range map[string]string{"s": "beta", "n": "123456", "u": "short"} {
		if got, ok := te.Value(name); !ok || got != want {
			t.Errorf("text %s = %q, %v; want %q", name, got, ok, want)
		}
	}
}
