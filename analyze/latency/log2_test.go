package latency

import (
	"math/bits"
	"math/rand"
	"reflect"
	"testing"
)

// log2Of aggregates durations as an in-kernel histogram does.
func log2Of(ds []uint64) Log2 {
	l := Log2{Function: "f", EntryEvent: "g:f", ReturnEvent: "g:f__return"}
	for _, d := range ds {
		b := &l.Buckets[bits.Len64(d)]
		if b.Count == 0 || d < b.MinNs {
			b.MinNs = d
		}
		b.MaxNs = max(b.MaxNs, d)
		b.Count++
		b.SumNs += d
	}
	l.Entries, l.Returns = uint64(len(ds)), uint64(len(ds))
	return l
}

// TestLog2AgreesWithAnalyzer: for the same calls, a log2 aggregate gives
// Analyzer's count, minimum, mean, maximum and histogram exactly, and each
// percentile in the same bucket as Analyzer's, within the bucket's width.
func TestLog2AgreesWithAnalyzer(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	for run := 0; run < 50; run++ {
		n := 1 + rng.Intn(3000)
		ds := make([]uint64, n)
		a := New(Options{})
		for i := range ds {
			switch run % 3 {
			case 0:
				ds[i] = uint64(rng.Intn(5000))
			case 1:
				ds[i] = uint64(rng.ExpFloat64() * 1e6)
			default:
				ds[i] = 1 << uint(rng.Intn(40)) // on the bucket edges
			}
			ts := uint64(i) * 1e12
			a.Event(entry("f", 1, ts, "0x10"))
			a.Event(ret("f__return", 1, ts+ds[i], "0x10"))
		}
		want := a.Results()[0]
		l := log2Of(ds)
		got := Log2Result(&l)
		if got.Count != want.Count || got.MinNs != want.MinNs || got.MaxNs != want.MaxNs || got.MeanNs != want.MeanNs ||
			!reflect.DeepEqual(got.Histogram, want.Histogram) || got.UnmatchedEntries != 0 || got.UnmatchedReturns != 0 ||
			got.Function != "f" || got.EntryEvent != "g:f" || got.ReturnEvent != "g:f__return" {
			t.Fatalf("run %d:\n got %+v\nwant %+v", run, got, want)
		}
		for _, q := range [][2]uint64{{got.P50Ns, want.P50Ns}, {got.P90Ns, want.P90Ns}, {got.P99Ns, want.P99Ns}, {got.P999Ns, want.P999Ns}} {
			g, w := q[0], q[1]
			// Analyzer's own estimate is within 0.2% of the exact value; its
			// bucket is the exact value's but at the bucket's edge.
			if bits.Len64(g) != bits.Len64(w) && bits.Len64(g) != bits.Len64(w+w/256) && bits.Len64(g) != bits.Len64(w-w/256) {
				t.Errorf("run %d: percentile %d is not in the bucket of %d", run, g, w)
			}
			width := uint64(1) << max(bits.Len64(w)-1, 0)
			if d := max(g, w) - min(g, w); d >= width {
				t.Errorf("run %d: percentile %d is %d from %d, a bucket is %d wide", run, g, d, w, width)
			}
		}
	}
}

// TestLog2Unmatched: hits no call accounts for are unmatched; an empty
// aggregate reports its hits and no latency.
func TestLog2Unmatched(t *testing.T) {
	l := log2Of([]uint64{100, 200, 300})
	l.Entries, l.Returns = 5, 4
	r := Log2Result(&l)
	if r.Count != 3 || r.UnmatchedEntries != 2 || r.UnmatchedReturns != 1 || r.P50Ns != 200 || r.P99Ns != 300 {
		t.Errorf("%+v", r)
	}
	l = Log2{Function: "f", Entries: 2, Uncertain: true}
	if r := Log2Result(&l); r.Count != 0 || r.UnmatchedEntries != 2 || r.MaxNs != 0 || len(r.Histogram) != 0 || r.Histogram == nil || !r.Uncertain {
		t.Errorf("no calls: %+v", r)
	}
}
