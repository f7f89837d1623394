package latency

import "math/bits"

// quantiles is a log-linear histogram (HdrHistogram style): values below
// 1024 are exact, larger ones fall in buckets 1/512 of their magnitude
// wide, so percentiles are within 0.2% whatever the trace length, in
// bounded memory.
type quantiles struct {
	counts []uint64
	n      uint64
}

const subBits = 9 // 512 sub-buckets per power of two above 1024

func qIndex(v uint64) int {
	if v < 1<<(subBits+1) {
		return int(v)
	}
	s := bits.Len64(v) - (subBits + 1)
	return s<<subBits + int(v>>uint(s))
}

// qBounds is the inclusive value range of bucket i.
func qBounds(i int) (lo, hi uint64) {
	if i < 1<<(subBits+1) {
		return uint64(i), uint64(i)
	}
	s := i>>subBits - 1
	m := uint64(i - s<<subBits)
	return m << uint(s), (m+1)<<uint(s) - 1
}

func (q *quantiles) add(v uint64) {
	i := qIndex(v)
	if i >= len(q.counts) {
		n := make([]uint64, i+1+i/4)
		copy(n, q.counts)
		q.counts = n
	}
	q.counts[i]++
	q.n++
}

func (q *quantiles) merge(o *quantiles) {
	if len(o.counts) > len(q.counts) {
		n := make([]uint64, len(o.counts))
		copy(n, q.counts)
		q.counts = n
	}
	for i, c := range o.counts {
		q.counts[i] += c
	}
	q.n += o.n
}

// quantile returns the value at fraction p (0..1): the smallest recorded
// bucket whose cumulative count reaches ceil(p*n), reported as the
// bucket's midpoint clamped to [min, max].
func (q *quantiles) quantile(p float64, min, max uint64) uint64 {
	if q.n == 0 {
		return 0
	}
	rank := uint64(p*float64(q.n) + 0.999999999)
	if rank < 1 {
		rank = 1
	}
	var cum uint64
	for i, c := range q.counts {
		cum += c
		if cum >= rank {
			lo, hi := qBounds(i)
			v := lo + (hi-lo)/2
			if v < min {
				v = min
			}
			if v > max {
				v = max
			}
			return v
		}
	}
	return max
}

// Bucket is one log2 histogram bucket: durations in [LowNs, HighNs).
type Bucket struct {
	LowNs  uint64 `json:"low_ns"`
	HighNs uint64 `json:"high_ns"`
	Count  uint64 `json:"count"`
}

type log2hist [65]uint64

func (h *log2hist) add(v uint64) { h[bits.Len64(v)]++ }

// buckets lists the buckets from the first to the last non-empty one.
func (h *log2hist) buckets() []Bucket {
	first, last := -1, -1
	for i, c := range h {
		if c > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return []Bucket{}
	}
	var out []Bucket
	for i := first; i <= last; i++ {
		var lo, hi uint64
		if i > 0 {
			lo = 1 << uint(i-1)
		}
		if i < 64 {
			hi = 1 << uint(i)
		} else {
			hi = ^uint64(0)
		}
		out = append(out, Bucket{LowNs: lo, HighNs: hi, Count: h[i]})
	}
	return out
}
