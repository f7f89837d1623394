// Package analyze opens recordings (trace.dat v6/v7 from gprobe record or
// trace-cmd, and ftrace text) as one time-ordered event stream, and runs
// the latency and refcount-leak analyses over it in one pass; several
// recordings are analysed one after the other into a Total. It never
// talks to tracefs and never imports resolve.
//
// The trace.dat container, its ring-buffer pages and the event formats are
// internal/tracefmt's, shared with record. Sub-packages, one job each:
// ftracetext (the kernel's text output), trace (the event model), latency
// (entry/return pairing and statistics), refcount (objects by key),
// report (text and JSON), timeline (Chrome trace-event export), folded
// (self-time stacks for flame graphs).
package analyze
