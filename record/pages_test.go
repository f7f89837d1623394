package record

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"
)

func TestParseHeaderPage(t *testing.T) {
	b, err := os.ReadFile("tracedat/testdata/header_page")
	if err != nil {
		t.Fatal(err)
	}
	l, err := parseHeaderPage(b)
	if err != nil {
		t.Fatal(err)
	}
	if l != (pageLayout{size: 4096, commitOff: 8, commitSize: 8, dataOff: 16}) {
		t.Errorf("layout %+v", l)
	}
	// A 32-bit kernel with 8 kB sub-buffers.
	l, err = parseHeaderPage([]byte("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n" +
		"\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n" +
		"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n" +
		"\tfield: char data;\toffset:12;\tsize:8180;\tsigned:1;\n"))
	if err != nil || l != (pageLayout{size: 8192, commitOff: 8, commitSize: 4, dataOff: 12}) {
		t.Errorf("layout %+v, %v", l, err)
	}
	for _, bad := range []string{"", "field: char data; offset:16; size:4080;", "field: local_t commit; offset:8; size:3;\nfield: char data; offset:16; size:4080;"} {
		if _, err := parseHeaderPage([]byte(bad)); !errors.Is(err, ErrBadHeaderPage) {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}

var layout64 = pageLayout{size: 4096, commitOff: 8, commitSize: 8, dataOff: 16}

// testPage lays out records (header words and payload sizes) in a page.
func testPage(recs [][]uint32, missed uint64, flags uint64) []byte {
	o := binary.NativeEndian
	p := make([]byte, 4096)
	i := 16
	for _, r := range recs {
		for _, w := range r {
			o.PutUint32(p[i:], w)
			i += 4
		}
	}
	commit := uint64(i - 16)
	if flags&missedStored != 0 {
		o.PutUint64(p[i:], missed)
	}
	o.PutUint64(p[8:], commit|flags)
	return p
}

func TestScanPage(t *testing.T) {
	data := func(words int) []uint32 { // type_len = words, delta 1
		r := make([]uint32, 1+words)
		r[0] = uint32(words) | 1<<5
		return r
	}
	long := []uint32{0 | 1<<5, 4 + 200, 0}
	long = append(long, make([]uint32, 200/4-1)...)
	extend := []uint32{typeTimeExtend | 5<<5, 1}
	discarded := []uint32{typePadding | 1<<5, 4 + 8, 0, 0}
	recs := [][]uint32{data(4), extend, data(2), long, discarded, data(28)}
	st := layout64.scanPage(testPage(recs, 0, 0))
	if st != (pageStats{events: 4, fill: 380}) {
		t.Errorf("stats %+v, want 4 events", st)
	}
	st = layout64.scanPage(testPage(recs[:1], 42, missedEvents|missedStored))
	if st != (pageStats{events: 1, missed: 42, fill: 20}) {
		t.Errorf("stats %+v, want 1 event and 42 missed", st)
	}
	st = layout64.scanPage(testPage(nil, 0, missedEvents))
	if st != (pageStats{missedUnknown: true}) {
		t.Errorf("stats %+v, want unknown loss", st)
	}
	// Padding with delta 0 ends the page.
	st = layout64.scanPage(testPage([][]uint32{data(1), {typePadding}, data(1)}, 0, 0))
	if st.events != 1 {
		t.Errorf("events after the end padding counted: %+v", st)
	}
}

func FuzzScanPage(f *testing.F) {
	f.Add(testPage([][]uint32{{4 | 1<<5, 0, 0, 0, 0}}, 3, missedEvents|missedStored)[:64])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, l := range []pageLayout{layout64, {size: 4096, commitOff: 8, commitSize: 4, dataOff: 12}} {
			st := l.scanPage(b)
			if st.events > uint64(len(b))/4 {
				t.Fatalf("%d events in %d bytes", st.events, len(b))
			}
		}
	})
}

func FuzzParseHeaderPage(f *testing.F) {
	if b, err := os.ReadFile("tracedat/testdata/header_page"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := parseHeaderPage(b)
		if err == nil && (l.dataOff >= l.size || l.size > 1<<24) {
			t.Fatalf("accepted layout %+v", l)
		}
	})
}

func TestProbeName(t *testing.T) {
	for line, want := range map[string]string{
		"p:uprobes/p_calls_0x1139 /tmp/calls:0x0000000000001139": "uprobes:p_calls_0x1139",
		"r16:kprobes/r_vfs_read_0 vfs_read":                      "kprobes:r_vfs_read_0",
		"f:fprobes/vfs_read__entry vfs_read":                     "fprobes:vfs_read__entry",
		"s:synthetic/wakeup_latency u64 lat":                     "",
		"e:eprobes/x sched/sched_switch":                         "",
		"p:noslash /bin/true:0x10":                               "",
		"":                                                       "",
	} {
		got, ok := probeName(line)
		if got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", line, got, ok, want)
		}
	}
}

func FuzzProbeName(f *testing.F) {
	f.Add("p:g/e /bin/true:0x10 a=%di")
	f.Fuzz(func(t *testing.T, line string) {
		if name, ok := probeName(line); ok && (len(name) < 3 || name[0] == ':') {
			t.Fatalf("%q: name %q", line, name)
		}
	})
}
