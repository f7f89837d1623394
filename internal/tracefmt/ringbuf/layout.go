package ringbuf

import (
	"fmt"
	"strings"

	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
)

// ErrBadHeaderPage reports an events/header_page that does not describe a
// usable sub-buffer. It wraps eventfmt.ErrFormat: header_page is written
// in the field syntax of the format files.
var ErrBadHeaderPage = fmt.Errorf("%w: unusable events/header_page", eventfmt.ErrFormat)

// Layout is the layout of a ring-buffer sub-buffer ("page"), as
// events/header_page describes it.
type Layout struct {
	CommitOffset, CommitSize int // the `commit` word: its size is the kernel's long
	DataOffset, DataSize     int // where events start, and the room for them
}

// DefaultLayout is a 64-bit kernel's with 4 kB sub-buffers, for files
// that omit header_page.
var DefaultLayout = Layout{CommitOffset: 8, CommitSize: 8, DataOffset: 16, DataSize: 4080}

// PageSize is the size of a whole sub-buffer, header and data: what one
// read of trace_pipe_raw returns and the unit trace.dat stores.
func (l Layout) PageSize() int { return l.DataOffset + l.DataSize }

// ParseHeaderPage reads events/header_page. Errors wrap ErrBadHeaderPage.
// A returned layout has a 4- or 8-byte commit word before the data and a
// page size of at most 16 MB.
func ParseHeaderPage(text string) (Layout, error) {
	var l Layout
	seenCommit, seenData := false, false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "field:") {
			continue
		}
		fl, err := eventfmt.ParseField(t)
		if err != nil {
			return l, fmt.Errorf("%w: %v", ErrBadHeaderPage, err)
		}
		switch fl.Name {
		case "commit":
			l.CommitOffset, l.CommitSize, seenCommit = fl.Offset, fl.Size, true
		case "data":
			l.DataOffset, l.DataSize, seenData = fl.Offset, fl.Size, true
		}
	}
	switch {
	case !seenCommit || !seenData:
		return l, fmt.Errorf("%w: no commit or data field", ErrBadHeaderPage)
	case l.CommitSize != 4 && l.CommitSize != 8:
		return l, fmt.Errorf("%w: commit size %d", ErrBadHeaderPage, l.CommitSize)
	case l.DataOffset < l.CommitOffset+l.CommitSize:
		return l, fmt.Errorf("%w: data offset %d", ErrBadHeaderPage, l.DataOffset)
	case l.DataSize <= 0 || l.PageSize() > 1<<24:
		return l, fmt.Errorf("%w: data size %d", ErrBadHeaderPage, l.DataSize)
	}
	return l, nil
}
