// Package record runs a tracing session: a private tracefs instance
// (instances/gprobe-<pid>), the enabled probe events or tracepoints, the
// traced command followed with set_event_pid and event-fork, and one reader
// per CPU copying per_cpu/cpuN/trace_pipe_raw sub-buffers verbatim into a
// trace-cmd compatible trace.dat v6 file (written by internal/tracefmt;
// the readers count each page's records and loss marker with
// internal/tracefmt/ringbuf, the decoder analyze uses).
//
// Losses are never silent: ring-buffer overruns (per_cpu stats and the
// counts the kernel stores in the pages), dropped events and kprobe misses
// are counted in the metadata's Lost (tracefmt.Metadata), stored in the
// file (option tracefmt.OptionGprobe) and printed by [Result.Summary].
//
// [Run] removes the instance and disables its events on every exit path;
// while it runs, a ledger (record/leftover) names the instance, so that a
// gprobe killed without a chance to remove it (SIGKILL) is cleaned up
// after by `gprobe cleanup`. It never adds or deletes probe events.
package record
