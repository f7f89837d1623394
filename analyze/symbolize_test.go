package analyze_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/objtrace"
	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/internal/tracefmt"
)

const kprobeFormat = `name: get
ID: 1900
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:unsigned long __probe_ip;	offset:8;	size:8;	signed:0;
	field:u64 obj;	offset:16;	size:8;	signed:0;
	field:u64 ra;	offset:24;	size:8;	signed:0;

print fmt: "(%lx) obj=0x%Lx ra=0x%Lx", REC->__probe_ip, REC->obj, REC->ra
`

// kernelRecording writes a trace.dat of kprobe events kp:get (obj, and ra
// fetched by the definition as $stack0: the caller) with the kallsyms
// text that names the callers; each event is {obj, ra}.
func kernelRecording(t *testing.T, events [][2]uint64) string {
	t.Helper()
	hp, err1 := os.ReadFile("../internal/tracefmt/ringbuf/testdata/header_page")
	he, err2 := os.ReadFile("../internal/tracefmt/ringbuf/testdata/header_event")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	const pageSize = 4096
	o := binary.LittleEndian
	page := make([]byte, pageSize)
	o.PutUint64(page, 1000)
	data := page[16:16]
	for _, ev := range events {
		rec := make([]byte, 4+32)
		o.PutUint32(rec, 8|1000<<5) // type_len 8: 32 bytes of payload; 1us later
		o.PutUint16(rec[4:], 1900)
		o.PutUint32(rec[8:], 7)
		o.PutUint64(rec[12:], 0xffffffff81000200)
		o.PutUint64(rec[20:], ev[0])
		o.PutUint64(rec[28:], ev[1])
		data = append(data, rec...)
	}
	o.PutUint64(page[8:], uint64(len(data)))
	meta := tracefmt.Metadata{Tool: "gprobe record", Probes: []string{"p:kp/get foo_get obj=%di:x64 ra=$stack0:x64"}}
	opt, err := meta.Option()
	if err != nil {
		t.Fatal(err)
	}
	c := &tracefmt.Content{Version: 7, Compression: "zstd", PageSize: pageSize, LongSize: 8, HeaderPage: hp, HeaderEvent: he,
		Systems:  []tracefmt.System{{Name: "kp", Formats: [][]byte{[]byte(kprobeFormat)}}},
		Kallsyms: []byte("ffffffff81000000 T foo_open\nffffffff81000100 T foo_dup\nffffffff81000200 T foo_get\n"),
		Cmdlines: []byte("7 worker\n"), Options: []tracefmt.Option{opt},
		CPUs: []tracefmt.CPUData{{R: bytes.NewReader(page), Size: pageSize}}}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kernel.dat")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The recording's kallsyms name the kernel callers that took leaked
// references, and the callers in an object's trace.
func TestKernelCallersSymbolized(t *testing.T) {
	path := kernelRecording(t, [][2]uint64{
		{0xffff888000001000, 0xffffffff81000013},
		{0xffff888000002000, 0xffffffff81000013},
		{0xffff888000003000, 0xffffffff81000120},
		{0xffff888000001000, 0xffffffff81000120},
	})
	rec, err := analyze.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	spec, _ := refcount.ParseSpec("get=get,put=put")
	rep, err := analyze.Run(rec, analyze.Config{Refcount: &spec})
	if err != nil {
		t.Fatal(err)
	}
	sites := rep.Refcount.Sites
	if len(sites) != 2 || sites[0].Objects != 2 || sites[0].Where() != "foo_open+0x13" || sites[0].Site != "get ra=0xffffffff81000013" ||
		sites[1].Where() != "foo_dup+0x20" {
		t.Errorf("sites %+v", sites)
	}
	var hits []objtrace.Hit
	tr := objtrace.NewTracer(objtrace.Addr{Addr: 0xffff888000001000})
	if err := analyze.TraceObject([]string{path}, tr, func(h objtrace.Hit) error { hits = append(hits, h); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Fields[1].Caller != "foo_open+0x13" || hits[1].Fields[1].Caller != "foo_dup+0x20" || hits[0].Comm != "worker" {
		t.Errorf("hits %+v", hits)
	}
}
