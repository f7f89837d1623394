package objtrace

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"

	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
)

const (
	userIP   = "0x401136"
	kernelIP = "0xffffffff81234560"
)

// ev is a text event: name, process, time and its printed fields after
// the probe address ip ("" for a tracepoint).
func ev(ts uint64, name string, pid, tgid int, ip string, kv ...string) *trace.Event {
	e := &trace.Event{TS: ts, CPU: 1, PID: pid, TGID: tgid, Comm: "prog", System: "g", Name: name}
	if ip != "" {
		e.Fields = append(e.Fields, trace.KV{Key: "__probe_ip", Val: ip})
	}
	for i := 0; i+1 < len(kv); i += 2 {
		e.Fields = append(e.Fields, trace.KV{Key: kv[i], Val: kv[i+1]})
	}
	return e
}

func TestTracer(t *testing.T) {
	events := []*trace.Event{
		ev(100, "alloc", 10, 10, userIP, "size", "0x20", "p", "0x55d100"),
		ev(200, "get", 11, 10, userIP, "o", "0x55d100", "caller", "0x401200"),
		ev(250, "get", 20, 20, userIP, "o", "0x55d100"), // another process: same number, another object
		ev(300, "kfree", 0, 0, "", "ptr", "0x55d100"),   // a kernel event
		ev(400, "link", 10, 10, userIP, "a", "0x55d100", "b", "0x55d100", "n", "3"),
		ev(500, "put", 10, 10, userIP, "o", "0x55d108"),
	}
	tr := NewTracer(Addr{Proc: 10, Addr: 0x55d100})
	tr.Recording("", trace.Info{})
	var got []string
	for _, e := range events {
		if h, ok := tr.Event(e); ok {
			got = append(got, fmt.Sprintf("%d %s %d/%d %v %v", h.TS, h.Event, h.PID, h.TGID, h.Matched, h.Fields))
		}
	}
	want := []string{
		"100 g:alloc 10/10 [p] [{size 0x20 } {p 0x55d100 }]",
		"200 g:get 11/10 [o] [{o 0x55d100 } {caller 0x401200 }]",
		"400 g:link 10/10 [a b] [{a 0x55d100 } {b 0x55d100 } {n 3 }]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("hits\n%q\nwant\n%q", got, want)
	}
	s := tr.Summary()
	if want := (Summary{Object: "10:0x55d100", Events: 3, FirstTS: 100, LastTS: 400, LifetimeNs: 300, FirstEvent: "g:alloc", LastEvent: "g:link", Elsewhere: []int{20}}); !reflect.DeepEqual(s, want) {
		t.Errorf("summary %+v", s)
	}

	// A bare address is a kernel object: only the kernel event.
	kt := NewTracer(Addr{Addr: 0x55d100})
	kt.Recording("k.dat", trace.Info{})
	var n int
	for _, e := range events {
		if h, ok := kt.Event(e); ok {
			n++
			if h.Event != "g:kfree" || h.File != "k.dat" {
				t.Errorf("kernel hit %+v", h)
			}
		}
	}
	if s := kt.Summary(); n != 1 || !reflect.DeepEqual(s.Elsewhere, []int{10, 20}) {
		t.Errorf("%d kernel hits, summary %+v", n, s)
	}
}

func TestRanker(t *testing.T) {
	events := []*trace.Event{
		ev(100, "alloc", 10, 10, userIP, "size", "0x20", "p", "0x55d100"),
		ev(110, "alloc", 10, 10, userIP, "size", "0x20", "p", "0x55d200"),
		ev(200, "get", 10, 10, userIP, "o", "0x55d200", "caller", "0x401200"),
		ev(210, "get", 10, 10, userIP, "o", "0x55d200", "caller", "0x401200"),
		ev(220, "get", 20, 20, userIP, "o", "0x55d200"), // another process: another object
		ev(300, "kfree", 0, 0, kernelIP, "ptr", "0xffff888000001000", "len", "4096"),
		ev(900, "put", 10, 10, userIP, "o", "0x55d100", "flags", "0x10", "count", "70000"),
	}
	run := func(by By, spec *refcount.Spec, n int) Ranking {
		r := NewRanker(n, by, spec)
		r.Recording(trace.Info{})
		for _, e := range events {
			r.Event(e)
		}
		return r.Ranking()
	}
	byEvents := run(ByEvents, nil, 3)
	var got []string
	for _, o := range byEvents.Top {
		got = append(got, fmt.Sprintf("%s %d %d-%d %s..%s", o.Object, o.Events, o.FirstTS, o.LastTS, o.FirstEvent, o.LastEvent))
	}
	// caller is a code address, flags is below MinAddr, count is not hex.
	want := []string{"10:0x55d200 3 110-210 g:alloc..g:get", "10:0x55d100 2 100-900 g:alloc..g:put", "20:0x55d200 1 220-220 g:get..g:get"}
	if !reflect.DeepEqual(got, want) || byEvents.Objects != 4 || byEvents.Values != 7 ||
		!reflect.DeepEqual(byEvents.Fields, []string{"g:alloc p", "g:get o", "g:kfree ptr", "g:put o"}) {
		t.Errorf("by events %+v\n%q", byEvents, got)
	}
	byLife := run(ByLifetime, nil, 2)
	if len(byLife.Top) != 2 || byLife.Top[0].Object != "10:0x55d100" || byLife.Top[0].LifetimeNs != 800 || byLife.Top[1].Object != "10:0x55d200" || byLife.By != "lifetime" {
		t.Errorf("by lifetime %+v", byLife)
	}
	// With a refcount spec only its events' key field counts.
	spec, err := refcount.ParseSpec("get=get,put=put")
	if err != nil {
		t.Fatal(err)
	}
	rc := run(ByEvents, &spec, 10)
	if rc.Objects != 3 || rc.Values != 4 || !reflect.DeepEqual(rc.Fields, []string{"g:get o", "g:put o"}) {
		t.Errorf("with --refcount %+v", rc)
	}
}

const probeFormat = `name: get
ID: 1801
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:unsigned long __probe_ip;	offset:8;	size:8;	signed:0;
	field:u64 o;	offset:16;	size:8;	signed:0;
	field:u64 n;	offset:24;	size:8;	signed:0;
	field:s64 d;	offset:32;	size:8;	signed:1;
	field:void * ptr;	offset:40;	size:8;	signed:0;
	field:u32 small;	offset:48;	size:4;	signed:0;
	field:u64 caller;	offset:52;	size:8;	signed:0;

print fmt: "(%lx) o=0x%Lx n=%Lu d=%Ld ptr=%p small=0x%x caller=0x%Lx", REC->__probe_ip, REC->o, REC->n, REC->d, REC->ptr, REC->small, REC->caller
`

// Binary events: unsigned 64-bit fields printed in hex or as pointers,
// or of a pointer type, count; the caller does not.
func TestRankerBinary(t *testing.T) {
	f, err := eventfmt.Parse("g", probeFormat)
	if err != nil {
		t.Fatal(err)
	}
	var pointers []string
	for _, a := range f.Args() {
		if Pointer(f, a) {
			pointers = append(pointers, a.Name)
		}
	}
	if want := []string{"o", "ptr", "caller"}; !reflect.DeepEqual(pointers, want) {
		t.Errorf("pointer-like fields %v, want %v", pointers, want)
	}
	data := make([]byte, 60)
	le := binary.LittleEndian
	le.PutUint64(data[8:], 0x401136)
	for _, v := range []struct {
		off int
		val uint64
	}{{16, 0x55d100}, {24, 0x55d200}, {32, 0x55d300}, {40, 0x55d400}, {52, 0x401200}} {
		le.PutUint64(data[v.off:], v.val)
	}
	le.PutUint32(data[48:], 0x55d500)
	r := NewRanker(10, ByEvents, nil)
	r.Recording(trace.Info{})
	r.Event(&trace.Event{TS: 1, PID: 7, TGID: 7, System: "g", Name: "get", Format: f, Data: data, Order: le})
	got := r.Ranking()
	var objs []string
	for _, o := range got.Top {
		objs = append(objs, o.Object)
	}
	if want := []string{"7:0x55d100", "7:0x55d400"}; !reflect.DeepEqual(objs, want) {
		t.Errorf("objects %v, want %v (%+v)", objs, want, got)
	}
}
