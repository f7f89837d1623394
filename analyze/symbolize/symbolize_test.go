package symbolize

import (
	"testing"

	"github.com/gprobe/gprobe/analyze/trace"
)

const kallsymsText = `0000000000000000 A fixed_percpu_data
ffffffff81000000 T _stext
ffffffff81234560 t foo_open
ffffffff81234600 T foo_release
ffffffff81234700 d some_data
ffffffffc0001000 t bar_get	[bar]
`

func textEvent(name, ip string, kv ...string) *trace.Event {
	e := &trace.Event{System: "g", Name: name, Fields: []trace.KV{{Key: "__probe_ip", Val: ip}}}
	for i := 0; i+1 < len(kv); i += 2 {
		e.Fields = append(e.Fields, trace.KV{Key: kv[i], Val: kv[i+1]})
	}
	return e
}

func TestKernel(t *testing.T) {
	s := New(nil, func() ([]byte, error) { return []byte(kallsymsText), nil })
	e := textEvent("get", "0xffffffff81234600", "o", "0xffff888000001000")
	for _, c := range []struct {
		addr uint64
		want string
		ok   bool
	}{
		{0xffffffff8123457c, "foo_open+0x1c", true},
		// A return address just past a function's last call is still its.
		{0xffffffff81234600, "foo_open+0xa0", true},
		{0xffffffff81234601, "foo_release+0x1", true},
		{0xffffffffc0001010, "bar_get+0x10 [bar]", true},
		{0xffffffff80000000, "", false},
		{0xffffffffc0101000, "", false}, // far past the last symbol
		{0x401000, "", false},           // not a kernel address
	} {
		p, ok := s.Code(e, c.addr)
		if ok != c.ok || (ok && (p.String() != c.want || p.Where() != c.want)) {
			t.Errorf("Code(%#x) = %q, %v; want %q, %v", c.addr, p.String(), ok, c.want, c.ok)
		}
	}
	// Without kallsyms nothing is named.
	if p, ok := New(nil, nil).Code(e, 0xffffffff8123457c); ok {
		t.Errorf("no kallsyms: %v", p)
	}
	// Hidden addresses (all zero) name nothing either.
	if p, ok := New(nil, func() ([]byte, error) { return []byte("0000000000000000 T foo_open\n"), nil }).Code(e, 0xffffffff8123457c); ok {
		t.Errorf("hidden kallsyms: %v", p)
	}
}

func TestPlace(t *testing.T) {
	p := Place{Function: "leak_open", Offset: 0x18, File: "objprog.c", Line: 43}
	if p.String() != "leak_open+0x18 objprog.c:43" || p.Where() != "leak_open() at objprog.c:43" || p.Source() != "objprog.c:43" {
		t.Errorf("%q %q %q", p.String(), p.Where(), p.Source())
	}
}

func TestCallerField(t *testing.T) {
	defs := []string{
		"p:g/named /bin/prog:0x1136 o=%di:x64 site=+8(%sp):x64",
		"p:g/stack /bin/prog:0x1136 %di:x64 $stack0:x64",
		"p:g/sp /bin/prog:0x1136 o=%di:x64 ra=+0(%sp):x64",
		"p:g/stackderef /bin/prog:0x1136 o=%di:x64 ra=+0($stack):x64",
		"p:g/other /bin/prog:0x1136 o=%di:x64 x=+8(%sp):x64",
		"r:g/ret /bin/prog:0x1136 o=$retval:x64 ra=+0(%sp):x64",
		"not a definition",
	}
	s := New(defs, nil)
	for _, c := range []struct {
		e    *trace.Event
		want string
	}{
		{textEvent("named", "0x401136", "o", "0x1", "site", "0x2"), "site"},
		{textEvent("stack", "0x401136", "arg1", "0x1", "arg2", "0x2"), "arg2"},
		{textEvent("sp", "0x401136", "o", "0x1", "ra", "0x2"), "ra"},
		{textEvent("stackderef", "0x401136", "o", "0x1", "ra", "0x2"), "ra"},
		{textEvent("other", "0x401136", "o", "0x1", "x", "0x2"), ""},
		{&trace.Event{System: "g", Name: "ret", Fields: []trace.KV{{Key: "__probe_func", Val: "0x401136"}, {Key: "__probe_ret_ip", Val: "0x401200"}, {Key: "o", Val: "0x1"}, {Key: "ra", Val: "0x2"}}}, "__probe_ret_ip"},
		{textEvent("unknown", "0x401136", "caller", "0x2"), "caller"},
	} {
		if got := s.CallerField(c.e); got != c.want {
			t.Errorf("%s: CallerField = %q, want %q", c.e.Name, got, c.want)
		}
	}
	var none *Symbolizer
	if got := none.CallerField(textEvent("stack", "0x401136", "arg2", "0x2")); got != "" {
		t.Errorf("nil symbolizer: %q", got)
	}
}
