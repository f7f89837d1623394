package tracefmt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

const helloFormat = `name: hello
ID: 4242
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:unsigned long value;	offset:8;	size:8;	signed:0;

print fmt: "value=%lu", REC->value
`

const pageSize = 4096

// page builds one ring-buffer sub-buffer holding hello events with the
// given values, 1000 ns apart, and optionally a stored missed-events count.
func page(ts uint64, pid int32, values []uint64, missed uint64) []byte {
	o := binary.LittleEndian
	p := make([]byte, pageSize)
	o.PutUint64(p, ts)
	data := p[16:16]
	for _, v := range values {
		rec := make([]byte, 4+16)
		// type_len 4 (16 bytes of payload), time_delta 1000.
		o.PutUint32(rec, 4|1000<<5)
		o.PutUint16(rec[4:], 4242)
		o.PutUint32(rec[8:], uint32(pid))
		o.PutUint64(rec[12:], v)
		data = append(data, rec...)
	}
	commit := uint64(len(data))
	if missed > 0 {
		data = o.AppendUint64(data, missed)
		commit |= 1<<31 | 1<<30
	}
	o.PutUint64(p[8:], commit)
	return p
}

func testFile(t *testing.T, cpus [][]byte) *Content {
	t.Helper()
	hp, err := os.ReadFile("ringbuf/testdata/header_page")
	if err != nil {
		t.Fatal(err)
	}
	he, err := os.ReadFile("ringbuf/testdata/header_event")
	if err != nil {
		t.Fatal(err)
	}
	f := &Content{
		Version:  6,
		PageSize: pageSize, LongSize: 8,
		HeaderPage: hp, HeaderEvent: he,
		Systems:  []System{{Name: "gprobe_test", Formats: [][]byte{[]byte(helloFormat)}}},
		Cmdlines: []byte("1234 hello-prog\n"),
		Clock:    "mono",
		Options: []Option{
			CPUStat(0, []byte("entries: 0\noverrun: 0\n")),
			{OptionUname, CString("Linux test 6.1.0 x86_64")},
			{OptionGprobe, []byte(`{"probes":["p:g/e /bin/true:0x10"]}`)},
		},
	}
	for _, c := range cpus {
		f.CPUs = append(f.CPUs, CPUData{R: bytes.NewReader(c), Size: int64(len(c))})
	}
	return f
}

func requireTraceCmd(t *testing.T) string {
	t.Helper()
	return testenv.Tool(t, "trace-cmd")
}

func writeFile(t *testing.T, f *Content) string {
	t.Helper()
	var b bytes.Buffer
	n, err := f.WriteTo(&b)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(b.Len()) {
		t.Fatalf("WriteTo returned %d, wrote %d", n, b.Len())
	}
	path := filepath.Join(t.TempDir(), "trace.dat")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// variants are the files the writer makes: version and compression.
var variants = []struct {
	name    string
	version int
	comp    string
}{{"v6", 6, ""}, {"v7-none", 7, "none"}, {"v7-zlib", 7, "zlib"}, {"v7-zstd", 7, "zstd"}}

// traceCmdReads tells whether trace-cmd reads files compressed with comp:
// it may be built without zlib (`trace-cmd list -c`).
func traceCmdReads(t *testing.T, tc, comp string) bool {
	t.Helper()
	if comp == "" || comp == "none" {
		return true
	}
	out, err := exec.Command(tc, "list", "-c").CombinedOutput()
	if err != nil {
		t.Fatalf("trace-cmd list -c: %v\n%s", err, out)
	}
	return strings.Contains(string(out), comp)
}

// TestTraceCmdReport has the real trace-cmd read files built from
// hand-made pages, in every version and compression it can read: every
// event, its pid/comm, timestamps in the mono clock, the stored
// missed-events count and the CPU stats must come back.
func TestTraceCmdReport(t *testing.T) {
	tc := requireTraceCmd(t)
	cpu0 := append(page(5_000_000_000, 1234, []uint64{1, 2, 3}, 0), page(6_000_000_000, 1234, []uint64{4}, 7)...)
	cpu1 := page(5_500_000_000, 1234, []uint64{10, 11}, 0)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			if !traceCmdReads(t, tc, v.comp) {
				t.Skipf("trace-cmd here cannot read %s", v.comp)
			}
			f := testFile(t, [][]byte{cpu0, cpu1, nil})
			f.Version, f.Compression = v.version, v.comp
			traceCmdReport(t, tc, writeFile(t, f))
		})
	}
}

func traceCmdReport(t *testing.T, tc, path string) {
	t.Helper()
	out, err := exec.Command(tc, "report", "-t", "-i", path).CombinedOutput()
	if err != nil {
		t.Fatalf("trace-cmd report: %v\n%s", err, out)
	}
	got := string(out)
	if strings.Contains(got, "warning") || strings.Contains(got, "trace_clock bug") {
		t.Errorf("trace-cmd warned:\n%s", got)
	}
	re := regexp.MustCompile(`(?m)^\s*hello-prog-1234\s+\[(\d+)\]\s+([\d.]+): hello:\s+value=(\d+)$`)
	var seen []string
	for _, m := range re.FindAllStringSubmatch(got, -1) {
		seen = append(seen, m[1]+"@"+m[2]+"="+m[3])
	}
	want := []string{
		"000@5.000001000=1", "000@5.000002000=2", "000@5.000003000=3",
		"001@5.500001000=10", "001@5.500002000=11",
		"000@6.000001000=4",
	}
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("events:\n got %v\nwant %v\nreport:\n%s", seen, want, got)
	}
	if !strings.Contains(got, "CPU:0 [7 EVENTS DROPPED]") {
		t.Errorf("missed-events count not reported:\n%s", got)
	}
	if !strings.HasPrefix(got, "cpus=3\n") {
		t.Errorf("cpu count: %q", strings.SplitN(got, "\n", 2)[0])
	}

	stat, err := exec.Command(tc, "report", "-i", path, "--stat").CombinedOutput()
	if err != nil {
		t.Fatalf("trace-cmd report --stat: %v\n%s", err, stat)
	}
	if !strings.Contains(string(stat), "CPU: 0\nentries: 0\noverrun: 0") {
		t.Errorf("CPU stats not stored:\n%s", stat)
	}
}

// TestTraceCmdDump checks the header fields trace-cmd dump decodes against
// the ones written.
func TestTraceCmdDump(t *testing.T) {
	tc := requireTraceCmd(t)
	f := testFile(t, [][]byte{page(1, 1, []uint64{1}, 0), nil})
	path := writeFile(t, f)
	out, err := exec.Command(tc, "dump", "-i", path, "--summary", "--head-page", "--head-event", "--options", "--flyrecord", "--cmd-lines").CombinedOutput()
	if err != nil {
		t.Fatalf("trace-cmd dump: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{
		"Tracing meta data in file",
		"6\t[Version]",
		"0\t[Little endian]",
		"8\t[Bytes in a long]",
		"4096\t[Page size, bytes]",
		"[Events format, 1 systems]",
		"field: local_t commit;",
		"data max type_len  == 28",
		"[Option UNAME, 24 bytes]",
		"Linux test 6.1.0 x86_64",
		"[Option TRACECLOCK, 6 bytes]",
		"2 [CPUs with tracing data]",
		"26480 35\t[Unknown option, size - skipping]",
		"[4 options]",
		"[Tracing clock]\n\t\t[mono]",
		"1234 hello-prog",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("dump lacks %q:\n%s", want, got)
		}
	}
	// The first CPU's data starts on a page boundary and has one page.
	m := regexp.MustCompile(`(\d+)\s+(\d+)\s+\[offset, size of cpu 0\]`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no flyrecord offsets in dump:\n%s", got)
	}
	if m[1] != "4096" || m[2] != "4096" {
		t.Errorf("cpu0 offset %s size %s, want 4096 4096", m[1], m[2])
	}
}

// TestTraceCmdDumpV7 checks what trace-cmd dump decodes of the v7
// layout: the compression header, the sections, both options sections
// and the buffer's page-aligned CPU data.
func TestTraceCmdDumpV7(t *testing.T) {
	tc := requireTraceCmd(t)
	for _, v := range variants[1:] {
		t.Run(v.name, func(t *testing.T) {
			if !traceCmdReads(t, tc, v.comp) {
				t.Skipf("trace-cmd here cannot read %s", v.comp)
			}
			f := testFile(t, [][]byte{page(1, 1, []uint64{1}, 0), nil, page(2, 1, []uint64{2}, 0)})
			f.Version, f.Compression, f.Instance = v.version, v.comp, "traced"
			out, err := exec.Command(tc, "dump", "-i", writeFile(t, f), "--summary", "--options", "--flyrecord", "--sections").CombinedOutput()
			if err != nil {
				t.Fatalf("trace-cmd dump: %v\n%s", err, out)
			}
			got := string(out)
			for _, want := range []string{
				"7\t[Version]",
				"0\t[Little endian]",
				"4096\t[Page size, bytes]",
				v.comp + "\t[Compression algorithm]",
				"[Option HEADERS, 8 bytes]",
				"[Option EVENT FORMATS, 8 bytes]",
				"[Option CMDLINES, 8 bytes]",
				"[Option TRACECLOCK, 6 bytes]",
				"[Option CPUCOUNT, 4 bytes]\n3",
				`"traced" [name]`,
				`"mono" [clock]`,
				"2 [CPUs]:",
				"   0 4096\t",
				"   2 8192\t",
			} {
				if !strings.Contains(got, want) {
					t.Errorf("dump lacks %q:\n%s", want, got)
				}
			}
		})
	}
}

func TestInvalid(t *testing.T) {
	base := func() *Content { return testFile(t, [][]byte{make([]byte, pageSize)}) }
	cases := map[string]func(f *Content){
		"page size":     func(f *Content) { f.PageSize = 3000 },
		"long size":     func(f *Content) { f.LongSize = 2 },
		"no header":     func(f *Content) { f.HeaderPage = nil },
		"no cpu":        func(f *Content) { f.CPUs = nil },
		"partial page":  func(f *Content) { f.CPUs[0].Size = 100 },
		"option zero":   func(f *Content) { f.Options = append(f.Options, Option{ID: OptionDone}) },
		"version":       func(f *Content) { f.Version = 5 },
		"v6 compressed": func(f *Content) { f.Compression = "zstd" },
		"v6 instance":   func(f *Content) { f.Instance = "x" },
		"compression":   func(f *Content) { f.Version, f.Compression = 7, "lz4" },
		"clock":         func(f *Content) { f.Clock = "mo\x00no" },
	}
	for name, mod := range cases {
		f := base()
		mod(f)
		if _, err := f.WriteTo(&bytes.Buffer{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", name, err)
		}
	}
	for _, v := range variants {
		f := base()
		f.Version, f.Compression = v.version, v.comp
		f.CPUs[0].R = bytes.NewReader(nil)
		if _, err := f.WriteTo(&bytes.Buffer{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: short cpu data: err %v, want ErrInvalid", v.name, err)
		}
	}
}
