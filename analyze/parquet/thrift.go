package parquet

import "encoding/binary"

// Thrift compact protocol types, as Parquet's metadata (the footer and
// the page headers) is encoded.
const (
	tBoolTrue  = 1
	tBoolFalse = 2
	tByte      = 3
	tI32       = 5
	tI64       = 6
	tBinary    = 8
	tList      = 9
	tStruct    = 12
)

// thrift appends Thrift compact protocol structures to b. Fields must be
// written in increasing id order within a struct (the protocol encodes
// each id as a delta from the previous one); begin/end bracket a nested
// struct.
type thrift struct {
	b    []byte
	last []int16 // the last field id of each open struct, innermost last
}

// field writes a field header: the id as a delta from the struct's
// previous field when that fits in 4 bits.
func (t *thrift) field(id int16, typ byte) {
	top := len(t.last) - 1
	if d := id - t.last[top]; d > 0 && d <= 15 {
		t.b = append(t.b, byte(d)<<4|typ)
	} else {
		t.b = append(t.b, typ)
		t.b = binary.AppendVarint(t.b, int64(id))
	}
	t.last[top] = id
}

func (t *thrift) i32(id int16, v int32) {
	t.field(id, tI32)
	t.b = binary.AppendVarint(t.b, int64(v))
}

func (t *thrift) i64(id int16, v int64) {
	t.field(id, tI64)
	t.b = binary.AppendVarint(t.b, v)
}

func (t *thrift) i8(id int16, v int8) {
	t.field(id, tByte)
	t.b = append(t.b, byte(v))
}

func (t *thrift) boolean(id int16, v bool) {
	if v {
		t.field(id, tBoolTrue)
	} else {
		t.field(id, tBoolFalse)
	}
}

func (t *thrift) binary(id int16, v []byte) {
	t.field(id, tBinary)
	t.b = binary.AppendUvarint(t.b, uint64(len(v)))
	t.b = append(t.b, v...)
}

func (t *thrift) str(id int16, v string) {
	t.field(id, tBinary)
	t.b = binary.AppendUvarint(t.b, uint64(len(v)))
	t.b = append(t.b, v...)
}

// list writes a list field's header: n elements of type elem follow,
// written with listI32, listStr or elem/end.
func (t *thrift) list(id int16, elem byte, n int) {
	t.field(id, tList)
	if n < 15 {
		t.b = append(t.b, byte(n)<<4|elem)
	} else {
		t.b = append(t.b, 0xf0|elem)
		t.b = binary.AppendUvarint(t.b, uint64(n))
	}
}

func (t *thrift) listI32(v int32) { t.b = binary.AppendVarint(t.b, int64(v)) }

func (t *thrift) listStr(v string) {
	t.b = binary.AppendUvarint(t.b, uint64(len(v)))
	t.b = append(t.b, v...)
}

// begin opens a struct field; elem opens a struct element of a list.
func (t *thrift) begin(id int16) {
	t.field(id, tStruct)
	t.last = append(t.last, 0)
}

func (t *thrift) elem() { t.last = append(t.last, 0) }

// end closes the innermost struct.
func (t *thrift) end() {
	t.b = append(t.b, 0)
	t.last = t.last[:len(t.last)-1]
}

// start begins a top-level struct in a reset buffer.
func (t *thrift) start() {
	t.b = t.b[:0]
	t.last = append(t.last[:0], 0)
}
