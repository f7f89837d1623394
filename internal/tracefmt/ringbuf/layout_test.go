package ringbuf

import (
	"errors"
	"os"
	"testing"

	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
)

func TestParseHeaderPage(t *testing.T) {
	b, err := os.ReadFile("testdata/header_page")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseHeaderPage(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if l != layout64 || l.PageSize() != 4096 {
		t.Errorf("layout %+v", l)
	}
	// A 32-bit kernel with 8 kB sub-buffers.
	l, err = ParseHeaderPage("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n" +
		"\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n" +
		"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n" +
		"\tfield: char data;\toffset:12;\tsize:8180;\tsigned:1;\n")
	if err != nil || l != (Layout{CommitOffset: 8, CommitSize: 4, DataOffset: 12, DataSize: 8180}) || l.PageSize() != 8192 {
		t.Errorf("layout %+v, %v", l, err)
	}
	for _, bad := range []string{"", "field: char data; offset:16; size:4080;", "field: local_t commit; offset:8; size:3;\nfield: char data; offset:16; size:4080;"} {
		if _, err := ParseHeaderPage(bad); !errors.Is(err, ErrBadHeaderPage) {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}

func TestHeaderPage(t *testing.T) {
	h, err := ParseHeaderPage("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:12;\tsize:4084;\tsigned:1;\n")
	if err != nil || h.CommitSize != 4 || h.DataOffset != 12 || h.DataSize != 4084 {
		t.Errorf("%+v %v", h, err)
	}
	if _, err := ParseHeaderPage("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"); !errors.Is(err, eventfmt.ErrFormat) {
		t.Errorf("no commit: %v", err)
	}
}

func FuzzParseHeaderPage(f *testing.F) {
	if b, err := os.ReadFile("testdata/header_page"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseHeaderPage(string(b))
		if err == nil && (l.DataOffset >= l.PageSize() || l.PageSize() > 1<<24) {
			t.Fatalf("accepted layout %+v", l)
		}
	})
}
