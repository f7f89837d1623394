package khist

import "testing"

// TestLog2: each row becomes one latency row of the function, with its
// buckets, hits and events, uncertain when the kernel lost hits.
func TestLog2(t *testing.T) {
	res := &Result{Function: "f", EntryEvent: "g:f", ReturnEvent: "g:f__return", Lost: 1, Rows: []Row{
		{Group: "a", Entries: 3, Returns: 2},
		{Group: "b", Entries: 1, Returns: 1},
	}}
	res.Rows[0].Buckets[11] = Bucket{Count: 2, SumNs: 2500, MinNs: 1100, MaxNs: 1400}
	res.Rows[1].Buckets[20] = Bucket{Count: 1, SumNs: 600000, MinNs: 600000, MaxNs: 600000}
	ls := res.Log2()
	if len(ls) != 2 {
		t.Fatalf("%d rows", len(ls))
	}
	for i, l := range ls {
		if l.Function != "f" || l.Group != res.Rows[i].Group || l.EntryEvent != "g:f" || l.ReturnEvent != "g:f__return" || !l.Uncertain ||
			l.Buckets != res.Rows[i].Buckets || l.Entries != res.Rows[i].Entries || l.Returns != res.Rows[i].Returns {
			t.Errorf("row %d: %+v", i, l)
		}
	}
	res.Lost = 0
	if res.Log2()[1].Uncertain {
		t.Error("uncertain without lost hits")
	}
}
