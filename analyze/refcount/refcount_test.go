package refcount

import (
	"errors"
	"reflect"
	"testing"

	"github.com/gprobe/gprobe/analyze/symbolize"
	"github.com/gprobe/gprobe/analyze/trace"
)

func TestParseSpec(t *testing.T) {
	s, err := ParseSpec("get=a,g:b,put=c,key=ptr,new=n,free=f,f2")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Get) != 2 || s.Get[1] != "g:b" || s.Put[0] != "c" || s.Key != "ptr" || s.New[0] != "n" || len(s.Free) != 2 {
		t.Errorf("%+v", s)
	}
	for _, bad := range []string{"", "get=a", "put=a", "x,get=a,put=b", "get=a,put=b,bogus=c", "get=,put=b", "get=a,,put=b", "get=a,put=b,key=x,key=y"} {
		if _, err := ParseSpec(bad); !errors.Is(err, ErrSpec) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// ev is a kernel-side event (no user __probe_ip): keys are global.
func ev(name string, ts uint64, obj string) *trace.Event {
	return &trace.Event{System: "k", Name: name, TS: ts, PID: 7, Comm: "c", Fields: []trace.KV{{Key: "__probe_ip", Val: "func+0x0/0x10"}, {Key: "obj", Val: obj}}}
}

func run(spec string, evs ...*trace.Event) Report {
	s, err := ParseSpec(spec)
	if err != nil {
		panic(err)
	}
	a := New(s, Options{History: 3})
	for _, e := range evs {
		a.Event(e)
	}
	return a.Report()
}

func TestGetPut(t *testing.T) {
	r := run("get=get,put=put",
		ev("get", 1, "0xa"), ev("get", 2, "0xa"), ev("put", 3, "0xa"), // leaked, count 1
		ev("get", 4, "0xb"), ev("put", 5, "0xb"), ev("put", 6, "0xb"), // underflow
		ev("get", 7, "0xb"),                                                                   // new life at a released address: reuse
		ev("put", 8, "0xc"),                                                                   // put without get
		ev("get", 9, "0xd"), ev("put", 10, "0xd"), ev("get", 11, "0xd"), ev("put", 12, "0xd"), // reuse, balanced
	)
	if r.Objects != 5 || r.Outstanding != 2 || r.Underflows != 1 || r.Reused != 2 || r.UnmatchedPuts != 1 || r.UseAfterPut != 0 {
		t.Errorf("%+v", r)
	}
	if r.Leaks[0].Key != "0xa" || r.Leaks[0].Count != 1 || r.Leaks[0].FirstTS != 1 || r.Leaks[0].LastTS != 3 || len(r.Leaks[0].History) != 3 {
		t.Errorf("%+v", r.Leaks[0])
	}
	if len(r.Sites) != 1 || r.Sites[0].Objects != 2 || r.Sites[0].Site != "get" {
		t.Errorf("%+v", r.Sites)
	}
	if u := r.UnderflowObjects[0]; u.Key != "0xb" || u.Count != -1 {
		t.Errorf("%+v", u)
	}
}

func TestNewFree(t *testing.T) {
	r := run("new=alloc,get=get,put=put,free=free",
		ev("alloc", 1, "0x1"), ev("get", 2, "0x1"), ev("put", 3, "0x1"), ev("free", 4, "0x1"),
		ev("get", 5, "0x1"), // use after the final put
		ev("alloc", 6, "0x2"),
		ev("alloc", 7, "0x2"), // allocated again while live: reuse
		ev("free", 8, "0x2"),
	)
	if r.UseAfterPut != 1 || r.Reused != 1 || r.Objects != 3 || r.Outstanding != 1 || r.Leaks[0].Key != "0x1" {
		t.Errorf("%+v", r)
	}
}

func TestHistoryRing(t *testing.T) {
	var evs []*trace.Event
	for i := uint64(1); i <= 5; i++ {
		evs = append(evs, ev("get", i, "0xa"))
	}
	r := run("get=get,put=put", evs...)
	h := r.Leaks[0].History
	if r.Leaks[0].Count != 5 || len(h) != 3 || h[0].TS != 3 || h[2].TS != 5 || h[2].Count != 5 {
		t.Errorf("%+v", r.Leaks[0])
	}
}

func TestUncertainWhenEventsLost(t *testing.T) {
	r := run("get=get,put=put",
		ev("get", 1, "0xa"),
		&trace.Event{Kind: trace.Lost, TS: 5, Count: 3},
		ev("get", 10, "0xb"),
	)
	if r.Outstanding != 2 || r.Uncertain != 1 || !r.Leaks[0].Uncertain || r.Leaks[1].Uncertain {
		t.Errorf("%+v", r)
	}
}

func TestUserKeysPerProcess(t *testing.T) {
	u := func(name string, pid int, obj string) *trace.Event {
		return &trace.Event{Name: name, PID: pid, Fields: []trace.KV{{Key: "__probe_ip", Val: "0x401000"}, {Key: "obj", Val: obj}}}
	}
	r := run("get=get,put=put", u("get", 1, "0x10"), u("get", 2, "0x10"), u("put", 1, "0x10"))
	if r.Objects != 2 || r.Outstanding != 1 || r.Leaks[0].Key != "2:0x10" {
		t.Errorf("%+v", r)
	}
	// key= picks another field; group-qualified names match.
	e := u("get", 1, "0x10")
	e.System = "grp"
	e.Fields = append(e.Fields, trace.KV{Key: "other", Val: "0x99"})
	r = run("get=grp:get,put=put,key=other", e)
	if r.Objects != 1 || r.Leaks[0].Key != "1:0x99" {
		t.Errorf("%+v", r)
	}
	r = run("get=nogrp:get,put=put", e)
	if r.Objects != 0 {
		t.Errorf("other group matched: %+v", r)
	}
}

// Leak sites are named by the caller each get recorded: an argument the
// probe definition fetches from the stack pointer ($stack0), symbolized
// with the recording's kallsyms.
func TestLeakSitesSymbolized(t *testing.T) {
	defs := []string{"p:k/get foo_get %di:x64 $stack0:x64", "p:k/put foo_put %di:x64"}
	kallsyms := "ffffffff81000000 T foo_open\nffffffff81000100 T foo_dup\nffffffff81000200 T foo_get\n"
	spec, _ := ParseSpec("get=get,put=put")
	a := New(spec, Options{Symbols: symbolize.New(defs, func() ([]byte, error) { return []byte(kallsyms), nil })})
	get := func(ts uint64, obj, caller string) *trace.Event {
		return &trace.Event{System: "k", Name: "get", TS: ts, Fields: []trace.KV{{Key: "__probe_ip", Val: "0xffffffff81000200"}, {Key: "arg1", Val: obj}, {Key: "arg2", Val: caller}}}
	}
	for _, e := range []*trace.Event{get(1, "0xa", "0xffffffff81000013"), get(2, "0xb", "0xffffffff81000013"), get(3, "0xc", "0xffffffff81000120")} {
		a.Event(e)
	}
	r := a.Report()
	want := []Site{
		{Site: "get arg2=0xffffffff81000013", Objects: 2, Symbol: "foo_open+0x13", Function: "foo_open"},
		{Site: "get arg2=0xffffffff81000120", Objects: 1, Symbol: "foo_dup+0x20", Function: "foo_dup"},
	}
	if !reflect.DeepEqual(r.Sites, want) || r.Sites[0].Where() != "foo_open+0x13" {
		t.Errorf("sites %+v, want %+v", r.Sites, want)
	}
	if w := (Site{Function: "f", Source: "a.c:3", Symbol: "f+0x1"}).Where(); w != "f() at a.c:3" {
		t.Errorf("Where %q", w)
	}
}
