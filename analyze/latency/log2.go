package latency

// Log2 is one function's (and group's) latencies as something other than
// Analyzer aggregated them: in log2 buckets, per bucket a count, a sum, a
// minimum and a maximum (gprobe latency's in-kernel histograms). Result
// turns it into the Result Analyzer would report for the same calls, with
// the same buckets.
type Log2 struct {
	Function, Group, EntryEvent, ReturnEvent string
	// Buckets[i] holds the calls whose latency has bits.Len64 i:
	// [2^(i-1), 2^i) ns, and 0 ns for i = 0, the buckets of
	// Result.Histogram.
	Buckets [65]Log2Bucket
	// Entries and Returns count the entry and return probe hits: those
	// the calls do not account for are unmatched.
	Entries, Returns uint64
	// Uncertain: hits were lost, a call may be missing.
	Uncertain bool
}

// Log2Bucket is what a log2 bucket knows of its calls. MinNs and MaxNs are
// meaningful when Count > 0.
type Log2Bucket struct {
	Count, SumNs, MinNs, MaxNs uint64
}

// Result summarises l as Analyzer.Results summarises calls: count, mean,
// minimum and maximum are exact. A percentile is the mean of the
// latencies in the bucket that holds it, so it is within that bucket's
// minimum and maximum, less than the bucket's width from the exact value.
// Unmatched entries (returns) are the entry (return) hits no call
// accounts for.
func (l *Log2) Result() Result {
	r := Result{Function: l.Function, Group: l.Group, EntryEvent: l.EntryEvent, ReturnEvent: l.ReturnEvent, Uncertain: l.Uncertain}
	var h log2hist
	var sum uint64
	for i, b := range l.Buckets {
		if b.Count == 0 {
			continue
		}
		h[i] = b.Count
		if r.Count == 0 || b.MinNs < r.MinNs {
			r.MinNs = b.MinNs
		}
		r.MaxNs = max(r.MaxNs, b.MaxNs)
		r.Count += b.Count
		sum += b.SumNs
	}
	r.Histogram = h.buckets()
	r.UnmatchedEntries = l.Entries - min(l.Entries, r.Count)
	r.UnmatchedReturns = l.Returns - min(l.Returns, r.Count)
	if r.Count == 0 {
		return r
	}
	r.MeanNs = sum / r.Count
	r.P50Ns = l.quantile(0.50, r.Count)
	r.P90Ns = l.quantile(0.90, r.Count)
	r.P99Ns = l.quantile(0.99, r.Count)
	r.P999Ns = l.quantile(0.999, r.Count)
	return r
}

// quantile is the mean of the bucket holding the value of rank ceil(p*n),
// as quantiles.quantile ranks.
func (l *Log2) quantile(p float64, n uint64) uint64 {
	rank := max(uint64(p*float64(n)+0.999999999), 1)
	var cum uint64
	for _, b := range l.Buckets {
		cum += b.Count
		if b.Count > 0 && cum >= rank {
			return min(max(b.SumNs/b.Count, b.MinNs), b.MaxNs)
		}
	}
	return 0
}
