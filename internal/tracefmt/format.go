// Package tracefmt is trace-cmd's trace.dat file, defined once for gprobe:
// [Open] reads versions 6 and 7 (sectioned, optionally zlib- or
// zstd-compressed; several buffers; files cut short) and [Content.WriteTo]
// writes version 6, or version 7 uncompressed, zlib or zstd
// (trace-cmd's Documentation/trace-cmd/trace-cmd.dat.v6.5.txt and
// trace-cmd.dat.v7.5.txt). It also holds gprobe record's own metadata,
// [Metadata], stored in option [OptionGprobe].
//
// The container carries metadata (event formats, saved command lines,
// options) and per-CPU streams of ring-buffer pages; the pages themselves
// are package ringbuf's, the event formats package eventfmt's.
package tracefmt

import (
	"encoding/binary"
	"errors"
)

var (
	// ErrNotTraceDat: the file does not start with trace-cmd's magic.
	ErrNotTraceDat = errors.New("not a trace.dat file")
	// ErrCorrupt is wrapped by errors about metadata that cannot be read.
	ErrCorrupt = errors.New("damaged trace.dat")
	// ErrUnsupported: a version or compression this reader does not know.
	ErrUnsupported = errors.New("unsupported trace.dat")
	// ErrInvalid reports a Content that cannot be written.
	ErrInvalid = errors.New("invalid trace.dat content")
)

// Magic is the first ten bytes of every trace.dat; the version follows as
// a NUL-terminated decimal string.
var Magic = []byte("\x17\x08\x44tracing")

// Option identifiers (trace-cmd-private.h, enum tracecmd_option_id). In
// v7 a section has the id of the option that locates it, and the options
// sections themselves have id OptionDone.
const (
	OptionDone         uint16 = 0 // ends an options list; in v7 it holds the next options section's offset
	OptionCPUStat      uint16 = 2
	OptionBuffer       uint16 = 3 // a buffer of pages (v7: its flyrecord section)
	OptionTraceClock   uint16 = 4
	OptionUname        uint16 = 5
	OptionCPUCount     uint16 = 8
	OptionVersion      uint16 = 9
	OptionProcMaps     uint16 = 10
	OptionHeaderInfo   uint16 = 16
	OptionFtraceEvents uint16 = 17
	OptionEventFormats uint16 = 18
	OptionKallsyms     uint16 = 19
	OptionPrintk       uint16 = 20
	OptionCmdlines     uint16 = 21
	OptionBufferText   uint16 = 22 // a latency buffer: the ASCII `trace` text

	// OptionGprobe holds gprobe record's [Metadata] as JSON. The id is
	// far above trace-cmd's own (25 in trace-cmd 3.4) so that it cannot
	// collide; trace-cmd report skips it silently and trace-cmd dump
	// lists it as "Unknown option".
	OptionGprobe uint16 = 0x6770 // "gp"
)

// sectionCompressed is the v7 section header flag of a compressed body.
const sectionCompressed = 1

// hostOrder is the byte order of this machine, the one of the ring-buffer
// pages it records and so of the files it writes.
var hostOrder = func() interface {
	binary.ByteOrder
	binary.AppendByteOrder
} {
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 {
		return binary.LittleEndian
	}
	return binary.BigEndian
}()
