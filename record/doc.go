// Package record runs a tracing session: a private tracefs instance, the
// enabled probe events, the traced command, and per-CPU trace_pipe_raw
// readers that write a trace-cmd compatible trace.dat file.
//
// It arrives with issue 5; nothing is implemented yet.
package record
