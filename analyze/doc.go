// Package analyze reads trace.dat (v6/v7) and ftrace text recordings and
// produces latency and refcount-leak reports. It never talks to tracefs and
// never imports resolve.
//
// It arrives with issue 6; nothing is implemented yet.
package analyze
