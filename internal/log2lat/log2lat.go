// Package log2lat is latencies aggregated in log2 buckets, per bucket a
// count, a sum, a minimum and a maximum: what gprobe latency's in-kernel
// histograms count (record/khist) and analyze reports
// (latency.Log2Result turns one into the Result the analyzer would give
// for the same calls). A leaf both import, so that record does not reach
// into analyze.
package log2lat

// Hist is one function's (and group's) latencies in log2 buckets.
type Hist struct {
	Function, Group, EntryEvent, ReturnEvent string
	// Buckets[i] holds the calls whose latency has bits.Len64 i:
	// [2^(i-1), 2^i) ns, and 0 ns for i = 0.
	Buckets [65]Bucket
	// Entries and Returns count the entry and return probe hits: those
	// the calls do not account for are unmatched.
	Entries, Returns uint64
	// Uncertain: hits were lost, a call may be missing.
	Uncertain bool
}

// Bucket is what a log2 bucket knows of its calls. MinNs and MaxNs are
// meaningful when Count > 0.
type Bucket struct {
	Count, SumNs, MinNs, MaxNs uint64
}
