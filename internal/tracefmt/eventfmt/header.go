package eventfmt

import (
	"fmt"
	"strings"
)

// PageHeader is the layout of a ring-buffer sub-buffer ("page") header, as
// events/header_page describes it.
type PageHeader struct {
	CommitOffset, CommitSize int // the `commit` word: its size is the kernel's long
	DataOffset, DataSize     int // where events start; DataSize is the sub-buffer payload size
}

// ParseHeaderPage reads events/header_page. An empty text yields the
// 64-bit default, since old files may omit it.
func ParseHeaderPage(text string) (PageHeader, error) {
	h := PageHeader{CommitOffset: 8, CommitSize: 8, DataOffset: 16, DataSize: 4080}
	if strings.TrimSpace(text) == "" {
		return h, nil
	}
	seenCommit, seenData := false, false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "field:") {
			continue
		}
		fl, err := parseField(t)
		if err != nil {
			return h, err
		}
		switch fl.Name {
		case "commit":
			h.CommitOffset, h.CommitSize, seenCommit = fl.Offset, fl.Size, true
		case "data":
			h.DataOffset, h.DataSize, seenData = fl.Offset, fl.Size, true
		}
	}
	if !seenCommit || !seenData {
		return h, fmt.Errorf("%w: header_page lacks commit or data", ErrFormat)
	}
	if h.CommitSize != 4 && h.CommitSize != 8 {
		return h, fmt.Errorf("%w: header_page commit size %d", ErrFormat, h.CommitSize)
	}
	if h.DataOffset < h.CommitOffset+h.CommitSize {
		return h, fmt.Errorf("%w: header_page data offset %d", ErrFormat, h.DataOffset)
	}
	return h, nil
}
