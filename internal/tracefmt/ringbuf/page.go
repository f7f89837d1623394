// Package ringbuf is the kernel ring buffer's sub-buffer ("page"), the
// unit per_cpu/cpuN/trace_pipe_raw hands out and trace.dat stores: its
// layout as events/header_page describes it ([Layout]) and the decoding of
// its header, loss marker and event records ([Decoder]). gprobe record
// counts what it drains and gprobe analyze decodes what it reads with the
// same decoder.
package ringbuf

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrPage is wrapped by errors about a page whose header or events are not sound.
var ErrPage = errors.New("damaged ring-buffer page")

// Bits of the commit word (kernel ring_buffer.c) and event header
// type_len values (include/linux/ring_buffer.h).
const (
	typePadding    = 29
	typeTimeExtend = 30
	typeTimeStamp  = 31

	commitMask   = (1 << 27) - 1
	missedEvents = 1 << 31 // events were lost before this page
	missedStored = 1 << 30 // their count is stored after the data
	tsMSBMask    = uint64(0xf8) << 56
)

// Record is one data event. Data is the payload (what `format` offsets
// index) and aliases the page buffer.
type Record struct {
	TS   uint64
	Data []byte
}

// Page is what decoding one page found.
type Page struct {
	TS uint64 // the page's base timestamp
	// Missed is the count of events lost before this page: 0 none, -1 lost
	// but the count was not stored.
	Missed int64
	// Commit is the number of data bytes the kernel committed, cut to
	// what the page holds.
	Commit int
	// Records is the number of data records decoded.
	Records int
}

// Decoder decodes the pages of one recording: one layout, one byte order.
type Decoder struct {
	layout Layout
	// big selects the byte order. A flag rather than a binary.ByteOrder:
	// the calls then inline, and record scans every page it drains.
	big bool
}

// NewDecoder returns a decoder of pages laid out as l, in byte order order.
func NewDecoder(l Layout, order binary.ByteOrder) Decoder {
	return Decoder{layout: l, big: order.Uint16([]byte{0, 1}) == 1}
}

func (d *Decoder) u32(b []byte) uint32 {
	if d.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (d *Decoder) u64(b []byte) uint64 {
	if d.big {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

// long reads a word of the kernel's long size (4 or 8 bytes).
func (d *Decoder) long(b []byte) uint64 {
	if d.layout.CommitSize == 8 {
		return d.u64(b)
	}
	return uint64(d.u32(b))
}

// Decode walks one page, calling fn (when not nil) for each data record
// in order, and returns what the page holds. A page whose commit runs past
// the buffer or whose events overrun the commit is reported with ErrPage
// after the records decoded so far, which Page counts.
func (d *Decoder) Decode(page []byte, fn func(Record)) (Page, error) {
	var p Page
	l := &d.layout
	if len(page) < l.DataOffset {
		return p, fmt.Errorf("%w: %d bytes, header needs %d", ErrPage, len(page), l.DataOffset)
	}
	p.TS = d.u64(page)
	commit := d.long(page[l.CommitOffset:])
	size := int(commit & commitMask)
	data := page[l.DataOffset:]
	var cut error
	if size > len(data) {
		// A page cut short (truncated file): decode what is there.
		cut = fmt.Errorf("%w: commit %d beyond the %d data bytes", ErrPage, size, len(data))
		size = len(data)
	}
	p.Commit = size
	if commit&missedEvents != 0 {
		p.Missed = -1
		if commit&missedStored != 0 && cut == nil && size+l.CommitSize <= len(data) {
			p.Missed = int64(d.long(data[size:]))
		}
	}
	data = data[:size]
	ts := p.TS
	for off := 0; off < len(data); {
		if off+4 > len(data) {
			return p, fmt.Errorf("%w: event header at %d cut by commit %d", ErrPage, off, size)
		}
		// The header is a C bitfield: type_len holds the low bits on
		// little-endian machines, the high bits on big-endian ones.
		w := d.u32(data[off:])
		typeLen, delta := w&0x1f, uint64(w>>5)
		if d.big {
			typeLen, delta = w>>27, uint64(w&(1<<27-1))
		}
		switch {
		case typeLen == typePadding:
			if delta == 0 {
				return p, cut // rest of the page is unused
			}
			// A discarded event: array[0] is its length.
			if off+8 > len(data) {
				return p, fmt.Errorf("%w: padding at %d cut", ErrPage, off)
			}
			n := int(d.u32(data[off+4:]))
			if n <= 0 || off+4+n > len(data) {
				return p, fmt.Errorf("%w: padding length %d at %d", ErrPage, n, off)
			}
			off += 4 + n
			off = (off + 3) &^ 3
		case typeLen == typeTimeExtend:
			if off+8 > len(data) {
				return p, fmt.Errorf("%w: time extend at %d cut", ErrPage, off)
			}
			ts += uint64(d.u32(data[off+4:]))<<27 + delta
			off += 8
		case typeLen == typeTimeStamp:
			if off+8 > len(data) {
				return p, fmt.Errorf("%w: time stamp at %d cut", ErrPage, off)
			}
			abs := uint64(d.u32(data[off+4:]))<<27 + delta
			ts = abs | (p.TS & tsMSBMask)
			off += 8
		case typeLen == 0:
			if off+8 > len(data) {
				return p, fmt.Errorf("%w: event length at %d cut", ErrPage, off)
			}
			n := int(d.u32(data[off+4:]))
			// The length word counts itself.
			if n < 4 || off+4+n > len(data) {
				return p, fmt.Errorf("%w: event length %d at %d", ErrPage, n, off)
			}
			ts += delta
			p.Records++
			if fn != nil {
				fn(Record{TS: ts, Data: data[off+8 : off+4+n]})
			}
			off += 4 + n
			off = (off + 3) &^ 3
		default: // 1..28 words of payload
			n := int(typeLen) * 4
			if off+4+n > len(data) {
				return p, fmt.Errorf("%w: event of %d bytes at %d past commit %d", ErrPage, n, off, size)
			}
			ts += delta
			p.Records++
			if fn != nil {
				fn(Record{TS: ts, Data: data[off+4 : off+4+n]})
			}
			off += 4 + n
		}
	}
	return p, cut
}
