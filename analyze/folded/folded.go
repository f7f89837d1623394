// Package folded turns matched calls into folded stacks, the input of
// flamegraph.pl, inferno and speedscope: one line per distinct stack,
// "comm;outer;inner NS", weighted by self time in nanoseconds (a call's
// duration less the durations of the calls nested in it on the same
// thread).
//
// Calls arrive as they return (innermost first). Each thread keeps the
// completed calls whose caller has not returned yet, each already folded
// into its relative stacks; a returning call adopts those that started
// after it did. Memory is bounded by the distinct stacks under the calls
// still open, not by the trace's length: when a thread has no call open
// (latency.Call.Open == 0) its stacks go to the totals. Go calls paired
// by goroutine (latency.Call.Goroutine) nest within their goroutine, not
// their thread.
package folded

import (
	"bufio"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/trace"
)

// maxPending bounds the completed calls a thread keeps waiting for a
// caller. A thread whose outer call never returns (its return probe lost
// or absent) would otherwise keep every call; past the bound the oldest
// are flushed as outermost calls.
const maxPending = 4096

// Builder aggregates calls. The zero value is not usable; call New.
type Builder struct {
	threads map[threadKey]*thread
	totals  map[string]uint64
}

// threadKey is a thread, or a goroutine of a process.
type threadKey struct {
	pid       int // the thread, or the goroutine's process
	goroutine uint64
}

type thread struct {
	comm    string
	pending []subtree // disjoint, in start order
}

// subtree is a completed call with everything nested in it: stacks
// relative to the call (starting with its function) and their self times.
type subtree struct {
	start, end uint64
	stacks     map[string]uint64
}

// New returns an empty Builder.
func New() *Builder {
	return &Builder{threads: map[threadKey]*thread{}, totals: map[string]uint64{}}
}

// Call adds one matched call; calls of a thread must come in return order,
// as latency.Analyzer reports them.
func (b *Builder) Call(c latency.Call) {
	k := threadKey{pid: c.PID}
	if c.Goroutine != 0 {
		k = threadKey{pid: c.TGID, goroutine: c.Goroutine}
	}
	t := b.threads[k]
	if t == nil {
		t = &thread{}
		b.threads[k] = t
	}
	t.comm = c.Comm
	// Nested calls returned before this one and started after it.
	i := len(t.pending)
	for i > 0 && t.pending[i-1].start >= c.Start {
		i--
	}
	var dur uint64
	if c.End > c.Start {
		dur = c.End - c.Start
	}
	st := subtree{start: c.Start, end: c.End, stacks: map[string]uint64{}}
	var nested uint64
	for _, ch := range t.pending[i:] {
		nested += ch.end - ch.start
		for p, v := range ch.stacks {
			st.stacks[c.Function+";"+p] += v
		}
	}
	clear(t.pending[i:])
	t.pending = t.pending[:i]
	self := uint64(0)
	if dur > nested {
		self = dur - nested
	}
	st.stacks[c.Function] += self
	t.pending = append(t.pending, st)
	switch {
	case c.Open == 0:
		b.flush(t, len(t.pending))
	case len(t.pending) > maxPending:
		b.flush(t, len(t.pending)/2)
	}
}

// flush moves a thread's n oldest pending calls to the totals.
func (b *Builder) flush(t *thread, n int) {
	root := t.comm
	if root == "" {
		root = "<...>"
	}
	root = strings.ReplaceAll(root, ";", "_")
	for _, st := range t.pending[:n] {
		for p, v := range st.stacks {
			b.totals[root+";"+p] += v
		}
	}
	rest := copy(t.pending, t.pending[n:])
	clear(t.pending[rest:])
	t.pending = t.pending[:rest]
}

// Write flushes every thread and writes the folded stacks, sorted, one
// "STACK NS" line each; stacks with no self time are left out.
func (b *Builder) Write(w io.Writer) error {
	for _, t := range b.threads {
		b.flush(t, len(t.pending))
	}
	keys := make([]string, 0, len(b.totals))
	for k, v := range b.totals {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	bw := bufio.NewWriter(w)
	for _, k := range keys {
		bw.WriteString(k)
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatUint(b.totals[k], 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Writer is a Builder that writes its stacks to a writer when closed (an
// analyze.Exporter).
type Writer struct {
	*Builder
	w io.Writer
}

// NewWriter returns an empty Builder that Close writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{New(), w} }

// Source returns src: stacks are made of calls only.
func (f *Writer) Source(_ string, src trace.Source) trace.Source { return src }

// Close writes the folded stacks (Builder.Write).
func (f *Writer) Close() error { return f.Write(f.w) }
