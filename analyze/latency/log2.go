package latency

import "github.com/gprobe/gprobe/internal/log2lat"

// Log2 is one function's (and group's) latencies as something other than
// Analyzer aggregated them: in log2 buckets (gprobe latency's in-kernel
// histograms). Log2Result turns it into the Result Analyzer would report
// for the same calls, with the same buckets: Buckets[i] are the buckets
// of Result.Histogram.
type Log2 = log2lat.Hist

// Log2Bucket is what a log2 bucket knows of its calls.
type Log2Bucket = log2lat.Bucket

// Log2Result summarises l as Analyzer.Results summarises calls: count, mean,
// minimum and maximum are exact. A percentile is the mean of the
// latencies in the bucket that holds it, so it is within that bucket's
// minimum and maximum, less than the bucket's width from the exact value.
// Unmatched entries (returns) are the entry (return) hits no call
// accounts for.
func Log2Result(l *Log2) Result {
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
	r.P50Ns = log2Quantile(l, 0.50, r.Count)
	r.P90Ns = log2Quantile(l, 0.90, r.Count)
	r.P99Ns = log2Quantile(l, 0.99, r.Count)
	r.P999Ns = log2Quantile(l, 0.999, r.Count)
	return r
}

// log2Quantile is the mean of the bucket holding the value of rank ceil(p*n),
// as quantiles.quantile ranks.
func log2Quantile(l *Log2, p float64, n uint64) uint64 {
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
