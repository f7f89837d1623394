package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze/objtrace"
	"github.com/gprobe/gprobe/analyze/refcount"
)

// Symbolized leak sites read as a sentence under the table.
func TestLeakSiteSentence(t *testing.T) {
	r := &Report{Format: "f", Refcount: &refcount.Report{Objects: 3, Outstanding: 3, Sites: []refcount.Site{
		{Site: "get caller=0x1", Objects: 2, Symbol: "leak_open+0x18", Function: "leak_open", Source: "objprog.c:43"},
		{Site: "get caller=0x2", Objects: 1, Symbol: "foo_dup+0x20", Function: "foo_dup"},
		{Site: "get", Objects: 1}}}}
	var b strings.Builder
	if err := Text(&b, r, Unit{"us", 1000}, 5); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n2 objects leaked, taken in leak_open() at objprog.c:43\n", "\n1 object leaked, taken in foo_dup+0x20\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	if strings.Count(b.String(), "taken in") != 2 {
		t.Errorf("an unsymbolized site got a sentence:\n%s", b.String())
	}
}

// The object trace streams its hits; its JSON is one document.
func TestObjectTrace(t *testing.T) {
	hits := []objtrace.Hit{
		{TS: 1500000000, CPU: 1, PID: 10, TGID: 10, Comm: "prog", Event: "g:get", Matched: []string{"o"},
			Fields: []objtrace.Field{{Name: "o", Value: "0x55d100"}, {Name: "caller", Value: "0x401200", Caller: "leak_open+0x18 objprog.c:43"}}},
		{TS: 1500002000, CPU: 0, PID: 10, TGID: 10, Comm: "prog", Event: "g:put", Matched: []string{"o"}, Fields: []objtrace.Field{{Name: "o", Value: "0x55d100"}}},
	}
	sum := objtrace.Summary{Object: "10:0x55d100", Events: 2, FirstTS: 1500000000, LastTS: 1500002000, LifetimeNs: 2000, FirstEvent: "g:get", LastEvent: "g:put", Elsewhere: []int{20}}
	addr := objtrace.Addr{Proc: 10, Addr: 0x55d100}
	var text, js bytes.Buffer
	for _, w := range []*ObjectTrace{NewObjectTrace(&text, addr, false, Unit{"us", 1000}), NewObjectTrace(&js, addr, true, Unit{"us", 1000})} {
		for _, h := range hits {
			if err := w.Hit(h); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(sum); err != nil {
			t.Fatal(err)
		}
	}
	want := `OBJECT 10:0x55d100
  1.500000000 [001] prog-10 g:get matched=o caller=0x401200 <leak_open+0x18 objprog.c:43>
  1.500002000 [000] prog-10 g:put matched=o
10:0x55d100: 2 events, first 1.500000000 g:get, last 1.500002000 g:put, lifetime 2 us
note: user-space events of process 20 carry the same number: name one as PID:ADDR (user-space addresses are per process)
`
	if text.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", text.String(), want)
	}
	var doc struct {
		Object  string
		Events  []objtrace.Hit
		Summary objtrace.Summary
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.Object != "10:0x55d100" || len(doc.Events) != 2 || doc.Summary.Events != 2 || doc.Events[0].Fields[1].Caller == "" {
		t.Errorf("json %v %+v\n%s", err, doc, js.String())
	}
}
