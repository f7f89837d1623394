package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strconv"
)

// Ring-buffer sub-buffer header bits (kernel ring_buffer.c).
const (
	missedEvents = 1 << 31 // events were lost before this page
	missedStored = 1 << 30 // their count is stored after the data
	commitMask   = 1<<27 - 1
)

// Event header type_len values (include/linux/ring_buffer.h).
const (
	typeDataMax    = 28
	typePadding    = 29
	typeTimeExtend = 30
	typeTimeStamp  = 31
)

// bigEndian tells the bitfield layout of event headers on this machine.
var bigEndian = binary.NativeEndian.Uint16([]byte{0, 1}) == 1

// ErrBadHeaderPage reports an events/header_page this package cannot use.
var ErrBadHeaderPage = errors.New("unusable events/header_page")

// pageLayout is what events/header_page tells about sub-buffers.
type pageLayout struct {
	size       int // whole sub-buffer: header and data
	commitOff  int
	commitSize int // kernel long size
	dataOff    int
}

var headerField = regexp.MustCompile(`field:\s*[^;]*?(\w+);\s*offset:(\d+);\s*size:(\d+);`)

func parseHeaderPage(b []byte) (pageLayout, error) {
	var l pageLayout
	found := 0
	for _, m := range headerField.FindAllSubmatch(b, -1) {
		off, _ := strconv.Atoi(string(m[2]))
		size, _ := strconv.Atoi(string(m[3]))
		switch string(m[1]) {
		case "commit":
			l.commitOff, l.commitSize = off, size
			found |= 1
		case "data":
			l.dataOff, l.size = off, off+size
			found |= 2
		}
	}
	if found != 3 || (l.commitSize != 4 && l.commitSize != 8) || l.size <= l.dataOff || l.size > 1<<24 {
		return l, fmt.Errorf("%w: %q", ErrBadHeaderPage, b)
	}
	return l, nil
}

// pageStats is what one sub-buffer holds.
type pageStats struct {
	events        uint64 // data records
	missed        uint64 // lost-events count stored in the page
	missedUnknown bool   // events were lost, count not stored
	fill          int    // bytes of data (the commit index)
}

// scanPage counts the data records of one sub-buffer and reads its
// lost-events marker. Malformed pages are counted up to the first bad
// record: the page is still kept verbatim for the reader to judge.
func (l pageLayout) scanPage(p []byte) pageStats {
	var s pageStats
	if len(p) < l.dataOff {
		return s
	}
	o := binary.NativeEndian
	var commit uint64
	if l.commitSize == 8 {
		commit = o.Uint64(p[l.commitOff:])
	} else {
		commit = uint64(o.Uint32(p[l.commitOff:]))
	}
	n := int(commit & commitMask)
	data := p[l.dataOff:]
	if n > len(data) {
		n = len(data)
	}
	s.fill = n
	if commit&missedEvents != 0 {
		if commit&missedStored != 0 && n+l.commitSize <= len(data) {
			if l.commitSize == 8 {
				s.missed = o.Uint64(data[n:])
			} else {
				s.missed = uint64(o.Uint32(data[n:]))
			}
		} else {
			s.missedUnknown = true
		}
	}
	for i := 0; i+4 <= n; {
		w := o.Uint32(data[i:])
		// The header is a C bitfield: type_len holds the low bits on
		// little-endian machines, the high bits on big-endian ones.
		typeLen, delta := w&0x1f, w>>5
		if bigEndian {
			typeLen, delta = w>>27, w&(1<<27-1)
		}
		var size int
		switch {
		case typeLen == 0:
			if i+8 > n {
				return s
			}
			size = 4 + int(o.Uint32(data[i+4:]))
			s.events++
		case typeLen <= typeDataMax:
			size = 4 + int(typeLen)*4
			s.events++
		case typeLen == typePadding:
			if delta == 0 { // the rest of the page is unused
				return s
			}
			if i+8 > n {
				return s
			}
			size = 4 + int(o.Uint32(data[i+4:]))
		default: // time extend, absolute time stamp
			size = 8
		}
		if size < 4 {
			return s
		}
		i += (size + 3) &^ 3
	}
	return s
}
