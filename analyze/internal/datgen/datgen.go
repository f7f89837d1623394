// Package datgen writes small trace.dat files (v6, and v7 uncompressed,
// zlib or zstd) for tests: the zlib variant trace-cmd on the test machine
// cannot write, and fuzz seeds. trace-cmd reads what it writes (tested).
package datgen

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/klauspost/compress/zstd"
)

// Input is what goes into the file.
type Input struct {
	HeaderPage, HeaderEvent string
	Systems                 map[string][]string // system -> format texts
	Cmdlines                string
	PageSize                int
	Instance, Clock         string
	CPUs                    [][]byte // per CPU: whole pages
}

type buf struct{ bytes.Buffer }

func (b *buf) u16(v uint16) { binary.Write(b, binary.LittleEndian, v) }
func (b *buf) u32(v uint32) { binary.Write(b, binary.LittleEndian, v) }
func (b *buf) u64(v uint64) { binary.Write(b, binary.LittleEndian, v) }
func (b *buf) cstr(s string) {
	b.WriteString(s)
	b.WriteByte(0)
}
func (b *buf) pad(align int) {
	for b.Len()%align != 0 {
		b.WriteByte(0)
	}
}

func (in *Input) headerInfo(b *buf) {
	b.cstr("header_page")
	b.u64(uint64(len(in.HeaderPage)))
	b.WriteString(in.HeaderPage)
	b.cstr("header_event")
	b.u64(uint64(len(in.HeaderEvent)))
	b.WriteString(in.HeaderEvent)
}

func (in *Input) eventFormats(b *buf) {
	var names []string
	for s := range in.Systems {
		names = append(names, s)
	}
	sort.Strings(names)
	b.u32(uint32(len(names)))
	for _, s := range names {
		b.cstr(s)
		b.u32(uint32(len(in.Systems[s])))
		for _, f := range in.Systems[s] {
			b.u64(uint64(len(f)))
			b.WriteString(f)
		}
	}
}

func start(b *buf, version string, pageSize int) {
	b.Write([]byte("\x17\x08\x44tracing"))
	b.cstr(version)
	b.WriteByte(0) // little endian
	b.WriteByte(8) // long size
	b.u32(uint32(pageSize))
}

// V6 writes a version 6 file with one flyrecord buffer.
func V6(in Input) []byte {
	var b buf
	start(&b, "6", in.PageSize)
	in.headerInfo(&b)
	b.u32(0) // ftrace formats
	in.eventFormats(&b)
	b.u32(0) // kallsyms
	b.u32(0) // printk
	b.u64(uint64(len(in.Cmdlines)))
	b.WriteString(in.Cmdlines)
	b.u32(uint32(len(in.CPUs)))
	b.WriteString("flyrecord\x00")
	table := b.Len()
	for range in.CPUs {
		b.u64(0)
		b.u64(0)
	}
	out := b.Bytes()
	var offs []int
	for _, d := range in.CPUs {
		for len(out)%in.PageSize != 0 {
			out = append(out, 0)
		}
		offs = append(offs, len(out))
		out = append(out, d...)
	}
	for i, d := range in.CPUs {
		binary.LittleEndian.PutUint64(out[table+16*i:], uint64(offs[i]))
		binary.LittleEndian.PutUint64(out[table+16*i+8:], uint64(len(d)))
	}
	return out
}

func compress(comp string, data []byte) []byte {
	switch comp {
	case "zlib":
		var z bytes.Buffer
		w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
		w.Write(data)
		w.Close()
		return z.Bytes()
	case "zstd":
		e, _ := zstd.NewWriter(nil)
		return e.EncodeAll(data, nil)
	}
	panic(fmt.Sprintf("datgen: compression %q", comp))
}

// section appends a section and returns its offset.
func section(b *buf, id uint16, comp string, body []byte) uint64 {
	off := uint64(b.Len())
	b.u16(id)
	if comp == "none" {
		b.u16(0)
		b.u32(0)
		b.u64(uint64(len(body)))
		b.Write(body)
		return off
	}
	z := compress(comp, body)
	b.u16(1)
	b.u32(0)
	b.u64(uint64(8 + len(z)))
	b.u32(uint32(len(z)))
	b.u32(uint32(len(body)))
	b.Write(z)
	return off
}

// V7 writes a version 7 file; comp is "none", "zlib" or "zstd".
func V7(in Input, comp string) []byte {
	var b buf
	start(&b, "7", in.PageSize)
	b.cstr(comp)
	if comp == "none" {
		b.cstr("")
	} else {
		b.cstr("1")
	}
	optPos := b.Len()
	b.u64(0) // patched: first options section
	var s buf
	in.headerInfo(&s)
	hdr := section(&b, 16, comp, append([]byte(nil), s.Bytes()...))
	s.Reset()
	s.u32(0)
	ftr := section(&b, 17, comp, append([]byte(nil), s.Bytes()...))
	s.Reset()
	in.eventFormats(&s)
	evf := section(&b, 18, comp, append([]byte(nil), s.Bytes()...))
	s.Reset()
	s.u64(uint64(len(in.Cmdlines)))
	s.WriteString(in.Cmdlines)
	cml := section(&b, 21, comp, append([]byte(nil), s.Bytes()...))
	// Buffer flyrecord section: header, page-aligned per-CPU data.
	fly := uint64(b.Len())
	b.u16(3)
	if comp == "none" {
		b.u16(0)
	} else {
		b.u16(1)
	}
	b.u32(0)
	sizePos := b.Len()
	b.u64(0)
	type cpuLoc struct{ off, size uint64 }
	var locs []cpuLoc
	for _, d := range in.CPUs {
		b.pad(in.PageSize)
		off := uint64(b.Len())
		if comp == "none" {
			b.Write(d)
		} else {
			const chunk = 10
			n := (len(d) + chunk*in.PageSize - 1) / (chunk * in.PageSize)
			b.u32(uint32(n))
			for i := 0; i < len(d); i += chunk * in.PageSize {
				end := min(i+chunk*in.PageSize, len(d))
				z := compress(comp, d[i:end])
				b.u32(uint32(len(z)))
				b.u32(uint32(end - i))
				b.Write(z)
			}
		}
		locs = append(locs, cpuLoc{off, uint64(b.Len()) - off})
	}
	binary.LittleEndian.PutUint64(b.Bytes()[sizePos:], uint64(b.Len())-uint64(sizePos+8))
	var o buf
	opt := func(id uint16, data []byte) {
		o.u16(id)
		o.u32(uint32(len(data)))
		o.Write(data)
	}
	u64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	opt(16, u64(hdr))
	opt(17, u64(ftr))
	opt(18, u64(evf))
	opt(21, u64(cml))
	var bo buf
	bo.u64(fly)
	bo.cstr(in.Instance)
	bo.cstr(in.Clock)
	bo.u32(uint32(in.PageSize))
	bo.u32(uint32(len(in.CPUs)))
	for i, l := range locs {
		bo.u32(uint32(i))
		bo.u64(l.off)
		bo.u64(l.size)
	}
	opt(3, bo.Bytes())
	opt(0, u64(0))
	opts := section(&b, 0, comp, o.Bytes())
	out := b.Bytes()
	binary.LittleEndian.PutUint64(out[optPos:], opts)
	return out
}
