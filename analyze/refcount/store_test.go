package refcount

import (
	"math/rand"
	"testing"
)

// TestIndexAgainstMap drives the index and a Go map through the same
// random inserts and removals (clustered and spread keys, growth): they
// always agree.
func TestIndexAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var s slab
	var ix index
	want := map[key]uint32{}
	var keys []key
	for i := 0; i < 200000; i++ {
		if len(keys) > 0 && rng.Intn(3) == 0 {
			j := rng.Intn(len(keys))
			k := keys[j]
			keys[j] = keys[len(keys)-1]
			keys = keys[:len(keys)-1]
			ix.remove(&s, k, hashKey(k))
			s.release(want[k])
			delete(want, k)
			continue
		}
		k := key{addr: uint64(rng.Intn(1 << 20)), tag: uint32(rng.Intn(4))}
		if i%2 == 0 {
			k.addr = 0x10000000 + uint64(i)*32 // heap-like sequential addresses
		}
		if _, ok := want[k]; ok {
			continue
		}
		slot := s.alloc()
		o := s.at(slot)
		o.addr, o.tag = k.addr, k.tag
		ix.insert(hashKey(k), slot)
		want[k] = slot
		keys = append(keys, k)
	}
	if ix.n != len(want) {
		t.Fatalf("index holds %d keys, want %d", ix.n, len(want))
	}
	if n := ix.mem.tables(); n != 1 {
		t.Errorf("%d index tables kept after growing, want only the current one", n)
	}
	for k, slot := range want {
		if got, ok := ix.find(&s, k); !ok || got != slot {
			t.Fatalf("find %+v = %d %v, want %d", k, got, ok, slot)
		}
	}
	for i := 0; i < 10000; i++ {
		k := key{addr: uint64(1<<21 + i), tag: 1}
		if _, ok := ix.find(&s, k); ok {
			t.Fatalf("found absent %+v", k)
		}
	}
}

// TestHistoryPacking: steps come back with their times, events, threads
// and counts; the ring keeps the latest ones that fit; a step too large
// to fit leaves the history empty but the times right.
func TestHistoryPacking(t *testing.T) {
	var o obj
	o.first = 1000
	steps := []step{{1000, 0, 0, 1}, {1005, 1, 3, 2}, {1_000_000_000_000, 1, 300, -5}, {1_000_000_000_001, 2, 70000, 1 << 30}}
	for _, s := range steps {
		o.record(s.ts, s.event, s.thread, s.count, 8)
	}
	h := o.history()
	if len(h) == 0 || h[len(h)-1] != steps[len(steps)-1] {
		t.Fatalf("history %+v", h)
	}
	for i := range h {
		if h[i] != steps[len(steps)-len(h)+i] {
			t.Errorf("step %d = %+v, want %+v", i, h[i], steps[len(steps)-len(h)+i])
		}
	}
	if int(o.hlen) > histBytes {
		t.Errorf("ring uses %d bytes", o.hlen)
	}
	// max steps
	var p obj
	for i := uint64(0); i < 5; i++ {
		p.record(10+i, 0, 0, int32(i), 2)
	}
	if h := p.history(); len(h) != 2 || h[0].ts != 13 || h[1].count != 4 {
		t.Errorf("capped history %+v", h)
	}
	// A step that cannot fit (time jump of 2^63 ns, huge thread and count).
	var q obj
	q.record(1, 0, 0, 1, 8)
	q.record(1<<63, 1<<20, 1<<31, -1<<31, 8)
	if h := q.history(); len(h) != 0 || q.last != 1<<63 {
		t.Errorf("oversized step: history %+v last %d", h, q.last)
	}
	q.record(1<<63+5, 1, 1, 1, 8)
	if h := q.history(); len(h) != 1 || h[0].ts != 1<<63+5 {
		t.Errorf("after oversized step: %+v", h)
	}
}

// TestQuarantineForgets: a double put is an underflow while the object is
// in quarantine, a put without get once it was forgotten; objects used
// again after their release are not forgotten by their older release.
func TestQuarantineForgets(t *testing.T) {
	spec, _ := ParseSpec("get=get,put=put")
	a := New(spec, Options{Quarantine: 2})
	ts := uint64(0)
	feed := func(name, obj string) {
		ts++
		a.Event(ev(name, ts, obj))
	}
	for _, o := range []string{"0x1", "0x2", "0x3"} {
		feed("get", o)
		feed("put", o)
	}
	feed("put", "0x1") // forgotten: 0x2 and 0x3 were released since
	feed("put", "0x3") // still quarantined
	r := a.Report()
	if r.UnmatchedPuts != 1 || r.Underflows != 1 || r.UnderflowObjects[0].Key != "0x3" {
		t.Errorf("%+v", r)
	}
	// The index and slab keep only quarantined objects.
	if a.ix.n != 2 {
		t.Errorf("%d objects indexed, want the 2 quarantined", a.ix.n)
	}
}
