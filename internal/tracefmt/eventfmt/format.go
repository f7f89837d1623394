// Package eventfmt parses the kernel's event `format` descriptions and decodes
// the fields of a raw record with them.
//
// Offsets and sizes always come from the format text, never from a
// hard-coded layout: kernels have changed the common header over time.
package eventfmt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrFormat is wrapped by every error about a malformed format description.
var ErrFormat = errors.New("bad event format")

// Field is one `field:` line of a format description.
type Field struct {
	Name   string
	Type   string // C type without the name and array suffix, e.g. "unsigned long", "char"
	Offset int
	Size   int
	Signed bool
	// ArrayLen is the element count of a fixed array `char comm[16]`, 0 otherwise.
	ArrayLen int
	// DataLoc marks `__data_loc T[] name`: a u32 holding offset (low 16 bits)
	// and length (high 16 bits) of the payload. RelLoc (`__rel_loc`) is the
	// same but the offset counts from the end of the field.
	DataLoc, RelLoc bool
	Common          bool // a common_* header field
}

// IsString reports whether the field holds characters (char arrays and
// dynamic char strings).
func (f *Field) IsString() bool {
	return (f.DataLoc || f.RelLoc || f.ArrayLen > 0) && strings.HasSuffix(strings.TrimSpace(strings.TrimPrefix(f.Type, "const ")), "char")
}

// Format is one event's description.
type Format struct {
	System string
	Name   string
	ID     int
	Fields []Field // common fields first, in file order
	Print  string  // the print fmt line after "print fmt: "

	byName map[string]int
}

// Field returns the named field or nil.
func (f *Format) Field(name string) *Field {
	if i, ok := f.byName[name]; ok {
		return &f.Fields[i]
	}
	return nil
}

// FullName is "system:name".
func (f *Format) FullName() string { return f.System + ":" + f.Name }

// Args are the event-specific fields: not common_*, not the probe
// bookkeeping fields __probe_ip/__probe_func/__probe_ret_ip.
func (f *Format) Args() []*Field {
	var out []*Field
	for i := range f.Fields {
		fl := &f.Fields[i]
		if fl.Common || strings.HasPrefix(fl.Name, "__probe_") {
			continue
		}
		out = append(out, fl)
	}
	return out
}

// Parse reads one format description. system is used when the text does
// not say (the files under events/<system>/ never do).
func Parse(system, text string) (*Format, error) {
	f := &Format{System: system, ID: -1, byName: map[string]int{}}
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "name:"):
			f.Name = strings.TrimSpace(t[5:])
		case strings.HasPrefix(t, "ID:"):
			id, err := strconv.Atoi(strings.TrimSpace(t[3:]))
			if err != nil {
				return nil, fmt.Errorf("%w: ID %q", ErrFormat, short(t[3:]))
			}
			f.ID = id
		case strings.HasPrefix(t, "field:"):
			fl, err := ParseField(t)
			if err != nil {
				return nil, err
			}
			if _, dup := f.byName[fl.Name]; !dup {
				f.byName[fl.Name] = len(f.Fields)
			}
			f.Fields = append(f.Fields, fl)
		case strings.HasPrefix(t, "print fmt:"):
			f.Print = strings.TrimSpace(t[len("print fmt:"):])
		}
	}
	if f.Name == "" {
		return nil, fmt.Errorf("%w: no name", ErrFormat)
	}
	if f.ID < 0 {
		return nil, fmt.Errorf("%w: %s has no ID", ErrFormat, f.Name)
	}
	return f, nil
}

// ParseField parses one field line, "field:DECL;\toffset:N;\tsize:N;\tsigned:N;".
// Errors wrap ErrFormat.
func ParseField(line string) (Field, error) {
	var fl Field
	parts := strings.Split(line, ";")
	if len(parts) < 3 {
		return fl, fmt.Errorf("%w: %q", ErrFormat, short(line))
	}
	decl := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(parts[0]), "field:"))
	haveOff, haveSize := false, false
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(p), ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		// No event is larger than a ring-buffer sub-buffer; bounding the
		// numbers keeps offset+size from overflowing.
		if err != nil || n < 0 || n > 1<<24 {
			return fl, fmt.Errorf("%w: %s in %q", ErrFormat, short(k), short(line))
		}
		switch k {
		case "offset":
			fl.Offset, haveOff = n, true
		case "size":
			fl.Size, haveSize = n, true
		case "signed":
			fl.Signed = n != 0
		}
	}
	if !haveOff || !haveSize {
		return fl, fmt.Errorf("%w: %q lacks offset or size", ErrFormat, short(line))
	}
	switch {
	case strings.HasPrefix(decl, "__data_loc "):
		fl.DataLoc = true
		decl = strings.TrimSpace(decl[len("__data_loc "):])
	case strings.HasPrefix(decl, "__rel_loc "):
		fl.RelLoc = true
		decl = strings.TrimSpace(decl[len("__rel_loc "):])
	}
	// The name is the last identifier; an array suffix may follow it.
	if i := strings.IndexByte(decl, '['); i >= 0 && strings.HasSuffix(decl, "]") {
		dim := decl[i+1 : len(decl)-1]
		decl = strings.TrimSpace(decl[:i])
		if dim != "" {
			if n, err := strconv.Atoi(dim); err == nil {
				fl.ArrayLen = n
			} else {
				fl.ArrayLen = -1 // symbolic dimension: size says the bytes
			}
		}
	}
	// "__data_loc char[] name": the [] sits on the type, the name follows.
	decl = strings.Replace(decl, "[]", " ", 1)
	j := strings.LastIndexAny(decl, " *")
	if j < 0 {
		return fl, fmt.Errorf("%w: no field name in %q", ErrFormat, short(line))
	}
	fl.Name = strings.TrimSpace(decl[j+1:])
	fl.Type = strings.TrimSpace(decl[:j+1])
	if i := strings.IndexByte(fl.Name, '['); i >= 0 { // "char comm [16]" never seen, but cheap
		fl.Name = fl.Name[:i]
	}
	if fl.Name == "" {
		return fl, fmt.Errorf("%w: no field name in %q", ErrFormat, short(line))
	}
	fl.Common = strings.HasPrefix(fl.Name, "common_")
	return fl, nil
}

// Uint decodes an integer field of size 1, 2, 4 or 8 from rec, sign
// extending signed fields into the uint64's bits. ok is false when the
// record is too short or the field is not a scalar.
func (fl *Field) Uint(rec []byte, bo binary.ByteOrder) (v uint64, ok bool) {
	end := fl.Offset + fl.Size
	if end > len(rec) || fl.DataLoc || fl.RelLoc || fl.ArrayLen != 0 {
		return 0, false
	}
	b := rec[fl.Offset:end]
	switch fl.Size {
	case 1:
		if fl.Signed {
			return uint64(int64(int8(b[0]))), true
		}
		return uint64(b[0]), true
	case 2:
		if fl.Signed {
			return uint64(int64(int16(bo.Uint16(b)))), true
		}
		return uint64(bo.Uint16(b)), true
	case 4:
		if fl.Signed {
			return uint64(int64(int32(bo.Uint32(b)))), true
		}
		return uint64(bo.Uint32(b)), true
	case 8:
		return bo.Uint64(b), true
	}
	return 0, false
}

// Bytes returns the raw payload of the field: the inline bytes for scalars
// and fixed arrays, the referenced bytes for __data_loc/__rel_loc.
func (fl *Field) Bytes(rec []byte, bo binary.ByteOrder) ([]byte, bool) {
	end := fl.Offset + fl.Size
	if end > len(rec) {
		return nil, false
	}
	if !fl.DataLoc && !fl.RelLoc {
		return rec[fl.Offset:end], true
	}
	if fl.Size < 4 {
		return nil, false
	}
	loc := bo.Uint32(rec[fl.Offset:])
	off, n := int(loc&0xffff), int(loc>>16)
	if fl.RelLoc {
		off += end
	}
	if off+n > len(rec) {
		return nil, false
	}
	return rec[off : off+n], true
}

// String decodes a character field up to its first NUL.
func (fl *Field) String(rec []byte, bo binary.ByteOrder) (string, bool) {
	b, ok := fl.Bytes(rec, bo)
	if !ok {
		return "", false
	}
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	return string(b), true
}

// Elem decodes element i of a fixed integer array field.
func (fl *Field) Elem(rec []byte, bo binary.ByteOrder, i int) (uint64, bool) {
	if fl.ArrayLen <= 0 || fl.Size%fl.ArrayLen != 0 || i < 0 || i >= fl.ArrayLen {
		return 0, false
	}
	es := fl.Size / fl.ArrayLen
	sub := Field{Offset: fl.Offset + i*es, Size: es, Signed: fl.Signed}
	return sub.Uint(rec, bo)
}

// Format renders a field value as text the way ftrace prints probe args:
// strings as is, signed decimal for signed fields, hex for the rest.
func (fl *Field) Format(rec []byte, bo binary.ByteOrder) string {
	if fl.IsString() {
		s, _ := fl.String(rec, bo)
		return s
	}
	if fl.ArrayLen > 1 || fl.ArrayLen < 0 {
		n := fl.ArrayLen
		if n < 0 {
			n = 0
		}
		if n > 0 && (n > fl.Size || fl.Size%n != 0) {
			// More elements than the field has bytes (a damaged or
			// hostile format: "x[94444444]; size:0"): none to show.
			return "?"
		}
		var parts []string
		for i := 0; i < n; i++ {
			v, _ := fl.Elem(rec, bo, i)
			parts = append(parts, "0x"+strconv.FormatUint(v, 16))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	v, ok := fl.Uint(rec, bo)
	if !ok {
		return "?"
	}
	if fl.Signed {
		return strconv.FormatInt(int64(v), 10)
	}
	return "0x" + strconv.FormatUint(v, 16)
}

// short is the start of a line quoted in an error (a hostile format file
// may hold a line of megabytes); the package imports nothing of gprobe's,
// so it does not use internal/brief.
func short(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
