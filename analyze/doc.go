// Package analyze opens recordings (trace.dat v6/v7 from gprobe record or
// trace-cmd, and ftrace text) as one time-ordered event stream, and holds
// the latency and refcount-leak analyses built on it. It never talks to
// tracefs and never imports resolve.
//
// Sub-packages, one job each: event (format descriptions and field
// decoding), ringbuf (ring-buffer pages), tracedat (the trace.dat
// container), ftracetext (text output), trace (the event model).
package analyze
