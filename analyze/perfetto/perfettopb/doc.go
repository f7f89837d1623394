// Package perfettopb holds the Go types generated from the subset of
// Perfetto's trace .proto files under ../protos (the TracePacket fields of
// track events and track descriptors). Regenerate with ../gen.sh.
package perfettopb
