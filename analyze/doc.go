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
// report (text and JSON), objtrace (one object's events, the busiest
// objects), symbolize (callers named by kallsyms, ELF and DWARF), and the
// output formats of other tools, each an Exporter a pass feeds: timeline
// (Chrome trace-event JSON), perfetto (Perfetto's protobuf trace), folded
// (self-time stacks for flame graphs), parquet (one row per event).
package analyze
