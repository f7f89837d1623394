package eventfmt

import (
	"encoding/binary"
	"errors"
	"testing"
)

const uprobeFormat = `name: obj_get
ID: 1801
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:unsigned long __probe_ip;	offset:8;	size:8;	signed:0;
	field:u64 obj;	offset:16;	size:8;	signed:0;
	field:s32 depth;	offset:24;	size:4;	signed:1;
	field:__data_loc char[] path;	offset:28;	size:4;	signed:1;
	field:char comm[16];	offset:32;	size:16;	signed:0;
	field:u16 ids[3];	offset:48;	size:6;	signed:0;
	field:__rel_loc char[] rel;	offset:54;	size:4;	signed:1;

print fmt: "(%lx) obj=0x%Lx depth=%d", REC->__probe_ip, REC->obj, REC->depth
`

func TestParseAndDecode(t *testing.T) {
	f, err := Parse("grp", uprobeFormat)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "obj_get" || f.ID != 1801 || f.System != "grp" || len(f.Fields) != 11 || f.Print == "" {
		t.Fatalf("%+v", f)
	}
	var names []string
	for _, a := range f.Args() {
		names = append(names, a.Name)
	}
	if got := len(names); got != 6 || names[0] != "obj" {
		t.Fatalf("args %v", names)
	}
	bo := binary.LittleEndian
	rec := make([]byte, 80)
	bo.PutUint16(rec[0:], 1801)
	bo.PutUint32(rec[4:], 4242)
	bo.PutUint64(rec[8:], 0x4011c6)
	bo.PutUint64(rec[16:], 0xdeadbeef)
	bo.PutUint32(rec[24:], uint32(0xfffffffe)) // -2
	copy(rec[64:], "hello\x00")
	bo.PutUint32(rec[28:], 6<<16|64) // __data_loc: len 6 at 64
	copy(rec[32:], "refprog\x00")
	bo.PutUint16(rec[48:], 7)
	bo.PutUint16(rec[50:], 8)
	bo.PutUint16(rec[52:], 9)
	copy(rec[72:], "rel\x00")
	bo.PutUint32(rec[54:], 4<<16|(72-58)) // __rel_loc: offset from the field's end (58)

	if v, ok := f.Field("common_pid").Uint(rec, bo); !ok || int64(v) != 4242 {
		t.Errorf("pid %d %v", v, ok)
	}
	if v, _ := f.Field("obj").Uint(rec, bo); v != 0xdeadbeef {
		t.Errorf("obj %#x", v)
	}
	if v, _ := f.Field("depth").Uint(rec, bo); int64(v) != -2 || f.Field("depth").Format(rec, bo) != "-2" {
		t.Errorf("depth %d %s", int64(v), f.Field("depth").Format(rec, bo))
	}
	if s, ok := f.Field("path").String(rec, bo); !ok || s != "hello" || !f.Field("path").IsString() {
		t.Errorf("path %q %v", s, ok)
	}
	if s, _ := f.Field("comm").String(rec, bo); s != "refprog" || f.Field("comm").ArrayLen != 16 {
		t.Errorf("comm %q", s)
	}
	if s, ok := f.Field("rel").String(rec, bo); !ok || s != "rel" {
		t.Errorf("rel %q %v", s, ok)
	}
	ids := f.Field("ids")
	if ids.ArrayLen != 3 || ids.Format(rec, bo) != "{0x7,0x8,0x9}" {
		t.Errorf("ids %+v %s", ids, ids.Format(rec, bo))
	}
	if _, ok := f.Field("obj").Uint(rec[:20], bo); ok {
		t.Error("short record decoded")
	}
	bo.PutUint32(rec[28:], 200<<16|64) // length beyond the record
	if _, ok := f.Field("path").String(rec, bo); ok {
		t.Error("__data_loc beyond the record decoded")
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		"",
		"name: x\n",
		"name: x\nID: y\n",
		"name: x\nID: 1\nformat:\n\tfield:int a;\toffset:x;\tsize:4;\tsigned:1;\n",
		"name: x\nID: 1\nformat:\n\tfield:int a;\tsize:4;\n",
		"name: x\nID: 1\nformat:\n\tfield:;\toffset:0;\tsize:4;\tsigned:1;\n",
	} {
		if _, err := Parse("s", bad); !errors.Is(err, ErrFormat) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestHostileArray: a field whose dimension exceeds its bytes (found by
// FuzzParse: "x[94444444]; size:0" had Format build 94 million elements)
// formats as "?", and a symbolic dimension as before.
func TestHostileArray(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"name:a\nID:1\nfield:int x[94444444];offset:0;size:0;\n", "?"},
		{"name:a\nID:1\nfield:u32 x[3];offset:0;size:8;\n", "?"},
		{"name:a\nID:1\nfield:u32 x[N];offset:0;size:8;\n", "{}"},
		{"name:a\nID:1\nfield:u32 x[2];offset:0;size:8;\n", "{0x4030201,0x8070605}"},
	} {
		f, err := Parse("s", c.text)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Fields[0].Format([]byte{1, 2, 3, 4, 5, 6, 7, 8}, binary.LittleEndian); got != c.want {
			t.Errorf("%q: %q, want %q", c.text, got, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(uprobeFormat)
	f.Add("name: a\nID: 1\nformat:\n\tfield:__data_loc char[] s;\toffset:8;\tsize:4;\tsigned:0;\n")
	f.Fuzz(func(t *testing.T, text string) {
		ef, err := Parse("s", text)
		if err != nil {
			return
		}
		rec := make([]byte, 64)
		for i := range ef.Fields {
			ef.Fields[i].Format(rec, binary.LittleEndian)
		}
	})
}
