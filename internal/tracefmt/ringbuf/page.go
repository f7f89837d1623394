// Package ringbuf decodes the kernel ring buffer's sub-buffers ("pages"),
// the unit that per_cpu/cpuN/trace_pipe_raw hands out and trace.dat stores.
package ringbuf

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
)

// ErrPage is wrapped by errors about a page whose header or events are not sound.
var ErrPage = errors.New("damaged ring-buffer page")

const (
	typePadding    = 29
	typeTimeExtend = 30
	typeTimeStamp  = 31

	commitMask    = (1 << 27) - 1
	missedEvents  = 1 << 31
	missedStored  = 1 << 30
	tsMSBMask     = uint64(0xf8) << 56
	maxSmallWords = 28
)

// Record is one data event. Data is the payload (what `format` offsets
// index) and aliases the page buffer.
type Record struct {
	TS   uint64
	Data []byte
}

// Page is the decoded header of one page.
type Page struct {
	TS uint64
	// Missed is the count of events lost before this page: 0 none, -1 lost
	// but the count was not stored.
	Missed int64
}

// Decoder decodes pages of one file (fixed long size and byte order).
type Decoder struct {
	Header eventfmt.PageHeader
	Order  binary.ByteOrder
}

// Decode walks one page, calling fn for each data record in order. It
// returns the page header; a page whose commit runs past the buffer or
// whose events overrun the commit is reported with ErrPage after the
// records decoded so far.
func (d *Decoder) Decode(page []byte, fn func(Record)) (Page, error) {
	var p Page
	h := d.Header
	if len(page) < h.DataOffset {
		return p, fmt.Errorf("%w: %d bytes, header needs %d", ErrPage, len(page), h.DataOffset)
	}
	p.TS = d.Order.Uint64(page)
	var commit uint64
	if h.CommitSize == 8 {
		commit = d.Order.Uint64(page[h.CommitOffset:])
	} else {
		commit = uint64(d.Order.Uint32(page[h.CommitOffset:]))
	}
	size := int(commit & commitMask)
	data := page[h.DataOffset:]
	var cut error
	if size > len(data) {
		// A page cut short (truncated file): decode what is there.
		cut = fmt.Errorf("%w: commit %d beyond the %d data bytes", ErrPage, size, len(data))
		size = len(data)
	}
	if commit&missedEvents != 0 {
		p.Missed = -1
		if commit&missedStored != 0 && cut == nil && size+h.CommitSize <= len(data) {
			if h.CommitSize == 8 {
				p.Missed = int64(d.Order.Uint64(data[size:]))
			} else {
				p.Missed = int64(d.Order.Uint32(data[size:]))
			}
		}
	}
	data = data[:size]
	ts := p.TS
	big := d.Order == binary.BigEndian
	for off := 0; off < len(data); {
		if off+4 > len(data) {
			return p, fmt.Errorf("%w: event header at %d cut by commit %d", ErrPage, off, size)
		}
		w := d.Order.Uint32(data[off:])
		var typeLen uint32
		var delta uint64
		if big {
			typeLen, delta = w>>27, uint64(w&((1<<27)-1))
		} else {
			typeLen, delta = w&0x1f, uint64(w>>5)
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
			n := int(d.Order.Uint32(data[off+4:]))
			if n <= 0 || off+4+n > len(data) {
				return p, fmt.Errorf("%w: padding length %d at %d", ErrPage, n, off)
			}
			off += 4 + n
			off = (off + 3) &^ 3
		case typeLen == typeTimeExtend:
			if off+8 > len(data) {
				return p, fmt.Errorf("%w: time extend at %d cut", ErrPage, off)
			}
			ts += uint64(d.Order.Uint32(data[off+4:]))<<27 + delta
			off += 8
		case typeLen == typeTimeStamp:
			if off+8 > len(data) {
				return p, fmt.Errorf("%w: time stamp at %d cut", ErrPage, off)
			}
			abs := uint64(d.Order.Uint32(data[off+4:]))<<27 + delta
			ts = abs | (p.TS & tsMSBMask)
			off += 8
		case typeLen == 0:
			if off+8 > len(data) {
				return p, fmt.Errorf("%w: event length at %d cut", ErrPage, off)
			}
			n := int(d.Order.Uint32(data[off+4:]))
			// The length word counts itself.
			if n < 4 || off+4+n > len(data) {
				return p, fmt.Errorf("%w: event length %d at %d", ErrPage, n, off)
			}
			ts += delta
			fn(Record{TS: ts, Data: data[off+8 : off+4+n]})
			off += 4 + n
			off = (off + 3) &^ 3
		default: // 1..28 words of payload
			n := int(typeLen) * 4
			if off+4+n > len(data) {
				return p, fmt.Errorf("%w: event of %d bytes at %d past commit %d", ErrPage, n, off, size)
			}
			ts += delta
			fn(Record{TS: ts, Data: data[off+4 : off+4+n]})
			off += 4 + n
		}
	}
	return p, cut
}
