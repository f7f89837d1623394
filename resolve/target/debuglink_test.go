package target

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// encodeDebugLink is a .gnu_debuglink section as objcopy writes it.
func encodeDebugLink(name string, crc uint32, order binary.AppendByteOrder) []byte {
	b := append([]byte(name), 0)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return order.AppendUint32(b, crc)
}

func TestParseDebugLink(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		want debugLink
		ok   bool
	}{
		{encodeDebugLink("prog.debug", 0x12345678, binary.LittleEndian), debugLink{"prog.debug", 0x12345678}, true},
		{encodeDebugLink("abc", 0xdeadbeef, binary.BigEndian), debugLink{"abc", 0xdeadbeef}, true},
		{encodeDebugLink("../etc/shadow", 1, binary.LittleEndian), debugLink{}, false},
		{encodeDebugLink("..", 1, binary.LittleEndian), debugLink{}, false},
		{encodeDebugLink("", 1, binary.LittleEndian), debugLink{}, false},
		{[]byte("prog.debug\x00\x00"), debugLink{}, false}, // no room for the CRC
		{[]byte("no nul"), debugLink{}, false},
		{nil, debugLink{}, false},
	} {
		order := binary.ByteOrder(binary.LittleEndian)
		if c.want.crc == 0xdeadbeef {
			order = binary.BigEndian
		}
		got, ok := parseDebugLink(c.b, order)
		if got != c.want || ok != c.ok {
			t.Errorf("%q: %+v %v, want %+v %v", c.b, got, ok, c.want, c.ok)
		}
	}
}

// FuzzDebugLink: any .gnu_debuglink section (the image is not gprobe's)
// parses without a panic to a plain file name or nothing, and what parses
// is the name up to the first NUL and the CRC at the next multiple of 4
// (the padding between them, zeros from objcopy, is not read: gdb does
// not read it either).
func FuzzDebugLink(f *testing.F) {
	f.Add(encodeDebugLink("prog.debug", 0x12345678, binary.LittleEndian))
	f.Add(encodeDebugLink("libc.so.6.debug", 0, binary.LittleEndian))
	f.Add([]byte("a/b\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, ok := parseDebugLink(b, binary.LittleEndian)
		if !ok {
			return
		}
		if l.name == "" || strings.ContainsAny(l.name, "/\x00") || l.name == "." || l.name == ".." {
			t.Fatalf("%q: name %q", b, l.name)
		}
		at := (len(l.name) + 4) &^ 3
		if !bytes.HasPrefix(b, []byte(l.name+"\x00")) || binary.LittleEndian.Uint32(b[at:]) != l.crc {
			t.Fatalf("%q: parsed %+v", b, l)
		}
	})
}
