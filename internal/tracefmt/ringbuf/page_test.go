package ringbuf

import (
	"encoding/binary"
	"errors"
	"testing"
)

// pageBuilder writes events the way the kernel lays them out.
type order interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

type pageBuilder struct {
	bo   order
	data []byte
}

func (p *pageBuilder) word(typeLen, delta uint32) {
	var w uint32
	if p.bo.String() == binary.BigEndian.String() {
		w = typeLen<<27 | delta
	} else {
		w = delta<<5 | typeLen
	}
	p.data = p.bo.AppendUint32(p.data, w)
}

func (p *pageBuilder) event(delta uint32, payload []byte) {
	n := (len(payload) + 3) / 4
	if n <= 28 {
		p.word(uint32(n), delta)
	} else {
		p.word(0, delta)
		p.data = p.bo.AppendUint32(p.data, uint32(n*4+4))
	}
	pl := make([]byte, n*4)
	copy(pl, payload)
	p.data = append(p.data, pl...)
}

func (p *pageBuilder) extend(delta uint64) {
	p.word(30, uint32(delta&(1<<27-1)))
	p.data = p.bo.AppendUint32(p.data, uint32(delta>>27))
}

func (p *pageBuilder) abs(ts uint64) {
	p.word(31, uint32(ts&(1<<27-1)))
	p.data = p.bo.AppendUint32(p.data, uint32(ts>>27))
}

func (p *pageBuilder) discarded(n int) {
	p.word(29, 1)
	p.data = p.bo.AppendUint32(p.data, uint32(n))
	p.data = append(p.data, make([]byte, n-4)...)
}

func (p *pageBuilder) page(ts uint64, flags uint64, missed uint64, size int) []byte {
	pg := make([]byte, size)
	p.bo.PutUint64(pg, ts)
	commit := uint64(len(p.data)) | flags
	p.bo.PutUint64(pg[8:], commit)
	copy(pg[16:], p.data)
	if flags&missedStored != 0 {
		p.bo.PutUint64(pg[16+len(p.data):], missed)
	}
	return pg
}

var layout64 = Layout{CommitOffset: 8, CommitSize: 8, DataOffset: 16, DataSize: 4080}

// layout32 is a 32-bit kernel's: a 4-byte commit word.
var layout32 = Layout{CommitOffset: 8, CommitSize: 4, DataOffset: 12, DataSize: 4084}

func TestDecode(t *testing.T) {
	for _, bo := range []order{binary.LittleEndian, binary.BigEndian} {
		b := &pageBuilder{bo: bo}
		b.event(5, []byte("a"))
		b.extend(1 << 30)
		b.event(7, []byte("bb"))
		b.discarded(12)
		long := make([]byte, 200)
		long[0] = 'L'
		b.event(3, long)
		b.abs(0x0123456789abc)
		b.event(0, []byte("abs"))
		pg := b.page(1000, missedEvents|missedStored, 42, 4096)
		d := NewDecoder(layout64, bo)
		var got []Record
		p, err := d.Decode(pg, func(r Record) { got = append(got, r) })
		if err != nil {
			t.Fatal(err)
		}
		if p.TS != 1000 || p.Missed != 42 {
			t.Errorf("page %+v", p)
		}
		want := []uint64{1005, 1005 + 1<<30 + 7, 1005 + 1<<30 + 7 + 3, 0x0123456789abc}
		if len(got) != len(want) {
			t.Fatalf("%d records, want %d", len(got), len(want))
		}
		for i, r := range got {
			if r.TS != want[i] {
				t.Errorf("%v record %d ts %d, want %d", bo, i, r.TS, want[i])
			}
		}
		if got[0].Data[0] != 'a' || got[1].Data[0] != 'b' || got[2].Data[0] != 'L' || len(got[2].Data) != 200 || string(got[3].Data[:3]) != "abs" {
			t.Errorf("payloads %q %q %q %q", got[0].Data, got[1].Data, got[2].Data[:1], got[3].Data)
		}
	}
}

func TestMissedUnknownAndDamage(t *testing.T) {
	bo := binary.LittleEndian
	b := &pageBuilder{bo: bo}
	b.event(1, []byte("x"))
	b.event(1, []byte("y"))
	d := NewDecoder(layout64, bo)
	p, err := d.Decode(b.page(10, missedEvents, 0, 4096), func(Record) {})
	if err != nil || p.Missed != -1 {
		t.Errorf("missed %d %v, want -1", p.Missed, err)
	}
	// Cut inside the second event: the first is still delivered.
	full := b.page(10, 0, 0, 4096)
	n := 0
	_, err = d.Decode(full[:16+8+2], func(Record) { n++ })
	if !errors.Is(err, ErrPage) || n != 1 {
		t.Errorf("cut page: %d records, %v", n, err)
	}
	// A length word pointing past the commit.
	bad := &pageBuilder{bo: bo}
	bad.word(0, 1)
	bad.data = bo.AppendUint32(bad.data, 4000)
	if _, err := d.Decode(bad.page(1, 0, 0, 4096), func(Record) {}); !errors.Is(err, ErrPage) {
		t.Errorf("bad length: %v", err)
	}
	if _, err := d.Decode(make([]byte, 8), func(Record) {}); !errors.Is(err, ErrPage) {
		t.Errorf("short page: %v", err)
	}
}

// testPage lays out records (header words and payload) in a page of the
// machine's byte order, the way record drains them.
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

// count decodes a page of this machine without a callback, as record's
// readers do.
func count(l Layout, p []byte) Page {
	d := NewDecoder(l, binary.NativeEndian)
	pg, _ := d.Decode(p, nil)
	return pg
}

func TestCount(t *testing.T) {
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
	st := count(layout64, testPage(recs, 0, 0))
	if st != (Page{Records: 4, Commit: 380}) {
		t.Errorf("stats %+v, want 4 events", st)
	}
	st = count(layout64, testPage(recs[:1], 42, missedEvents|missedStored))
	if st != (Page{Records: 1, Missed: 42, Commit: 20}) {
		t.Errorf("stats %+v, want 1 event and 42 missed", st)
	}
	st = count(layout64, testPage(nil, 0, missedEvents))
	if st != (Page{Missed: -1}) {
		t.Errorf("stats %+v, want unknown loss", st)
	}
	// Padding with delta 0 ends the page.
	st = count(layout64, testPage([][]uint32{data(1), {typePadding}, data(1)}, 0, 0))
	if st.Records != 1 {
		t.Errorf("events after the end padding counted: %+v", st)
	}
}

// FuzzDecode: no page makes the decoder panic or hand out more than the
// page, and counting without a callback agrees with decoding.
func FuzzDecode(f *testing.F) {
	b := &pageBuilder{bo: binary.LittleEndian}
	b.event(5, []byte("a"))
	b.extend(99)
	b.event(0, make([]byte, 150))
	b.discarded(8)
	b.abs(77)
	f.Add(b.page(3, missedEvents|missedStored, 5, 512))
	f.Add(testPage([][]uint32{{4 | 1<<5, 0, 0, 0, 0}}, 3, missedEvents|missedStored)[:64])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, pg []byte) {
		for _, l := range []Layout{layout64, layout32} {
			for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
				d := NewDecoder(l, bo)
				n := 0
				p, err := d.Decode(pg, func(r Record) {
					n++
					if len(r.Data) > len(pg) {
						t.Fatal("record larger than the page")
					}
				})
				if p.Records != n || p.Records > len(pg)/4 {
					t.Fatalf("%d records counted, %d delivered, in %d bytes", p.Records, n, len(pg))
				}
				if q, qerr := d.Decode(pg, nil); q != p || (qerr == nil) != (err == nil) {
					t.Fatalf("counting gives %+v, %v; decoding %+v, %v", q, qerr, p, err)
				}
			}
		}
	})
}
