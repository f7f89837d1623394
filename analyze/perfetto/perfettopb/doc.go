// Package perfettopb holds the Go types generated from the subset of
// Perfetto's trace .proto files under ../protos (the TracePacket fields of
// track events and track descriptors). Regenerate with ../gen.sh.
//
// Only tests import it: they decode what package perfetto writes (with
// protowire, from the same files' field numbers) as Perfetto's own schema
// reads it. The program does not link it, so its descriptors are not
// built at every start.
package perfettopb
