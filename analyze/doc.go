// Package analyze opens recordings (trace.dat v6/v7 from gprobe record or
// trace-cmd, and ftrace text) as one time-ordered event stream, and runs
// the latency and refcount-leak analyses over it in one pass. It never
// talks to tracefs and never imports resolve.
//
// Sub-packages, one job each: event (format descriptions, field decoding),
// ringbuf (ring-buffer pages), tracedat (the trace.dat container),
// ftracetext (the kernel's text output), trace (the event model), latency
// (entry/return pairing and statistics), refcount (objects by key),
// report (text and JSON), timeline (Chrome trace-event export), folded
// (self-time stacks for flame graphs).
package analyze
