package parquet

import (
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/analyze/trace"
)

// Type is a column's value type.
type Type uint8

const (
	// Int32 is a Parquet INT32 (cpu, pid, tid).
	Int32 Type = iota
	// Int64 is a Parquet INT64: ts and signed probe fields.
	Int64
	// Uint64 is a Parquet INT64 annotated INT(64, false): unsigned probe
	// fields (addresses, x64/u64 arguments).
	Uint64
	// String is a Parquet BYTE_ARRAY annotated STRING (UTF-8).
	String
)

func (t Type) String() string {
	switch t {
	case Int32:
		return "INT32"
	case Int64:
		return "INT64"
	case Uint64:
		return "UINT64"
	}
	return "STRING"
}

// Column is one column of the output.
type Column struct {
	Name string
	Type Type
	// Optional columns may hold nulls: probe fields (an event without the
	// field) and system (text recordings do not print it).
	Optional bool
	// Field is the probe field a field column holds ("" for the fixed
	// columns); Name differs from it when it collided with a fixed column.
	Field string
}

// The fixed columns, in order; probe fields follow.
const (
	colTS = iota
	colCPU
	colPID
	colTID
	colComm
	colSystem
	colEvent
	colHost
	colFile
	numFixed
)

var fixedColumns = [numFixed]Column{
	colTS:     {Name: "ts", Type: Int64},
	colCPU:    {Name: "cpu", Type: Int32},
	colPID:    {Name: "pid", Type: Int32},
	colTID:    {Name: "tid", Type: Int32},
	colComm:   {Name: "comm", Type: String},
	colSystem: {Name: "system", Type: String, Optional: true},
	colEvent:  {Name: "event", Type: String},
	colHost:   {Name: "host", Type: String},
	colFile:   {Name: "file", Type: String},
}

// kind is what the values of one probe field were seen to be; kinds of
// the same field name in several event types combine with join.
type kind uint8

const (
	kindNone     kind = iota
	kindSigned        // signed integers (binary sN, printed decimal)
	kindUnsigned      // unsigned integers (binary uN/xN, printed hex)
	kindText          // strings, arrays, anything else
)

func join(a, b kind) kind {
	switch {
	case a == kindNone:
		return b
	case b == kindNone, a == b:
		return a
	}
	// Signed and unsigned values under one name, or text: keep them all
	// exactly as ftrace prints them.
	return kindText
}

func (k kind) columnType() Type {
	switch k {
	case kindSigned:
		return Int64
	case kindUnsigned:
		return Uint64
	}
	return String
}

// fieldKind is the kind of one field of e: from the event format for
// binary events, from the printed value for text events.
func fieldKind(e *trace.Event, name string) kind {
	if e.Format != nil {
		fl := e.Format.Field(name)
		switch {
		case fl == nil:
			return kindNone
		case fl.IsString() || fl.ArrayLen != 0 || fl.DataLoc || fl.RelLoc:
			return kindText
		case fl.Signed:
			return kindSigned
		}
		return kindUnsigned
	}
	v, _ := e.Value(name)
	return textKind(v)
}

// textKind classifies a printed value: hex is how ftrace prints unsigned
// (xN) arguments, decimal how it prints signed ones.
func textKind(v string) kind {
	if strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X") {
		if _, err := strconv.ParseUint(v[2:], 16, 64); err == nil {
			return kindUnsigned
		}
		return kindText
	}
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return kindSigned
	}
	if _, err := strconv.ParseUint(v, 10, 64); err == nil {
		return kindUnsigned
	}
	return kindText
}

// schemaBuilder collects the probe fields of every event type met, in the
// order first met.
type schemaBuilder struct {
	order []string
	kinds map[string]kind
	// seen caches, per binary event type, that its fields are known:
	// their kinds come from the format and cannot change.
	seen trace.TypeCache[bool]
}

func newSchemaBuilder() *schemaBuilder { return &schemaBuilder{kinds: map[string]kind{}} }

// event adds e's fields.
func (s *schemaBuilder) event(e *trace.Event) {
	if e.Kind != trace.Data {
		return
	}
	if e.Format != nil {
		s.seen.Get(e, func(e *trace.Event) bool {
			s.fields(e)
			return true
		})
		return
	}
	// Text events: every value may change the field's kind.
	s.fields(e)
}

func (s *schemaBuilder) fields(e *trace.Event) {
	for _, name := range e.ArgNames() {
		k, ok := s.kinds[name]
		if !ok {
			s.order = append(s.order, name)
		}
		if k != kindText {
			s.kinds[name] = join(k, fieldKind(e, name))
		}
	}
}

// columns is the fixed columns then one per probe field. A field whose
// name is taken (case-insensitively, as DuckDB and Spark compare column
// names) is named arg_<field>.
func (s *schemaBuilder) columns() []Column {
	cols := append([]Column(nil), fixedColumns[:]...)
	taken := map[string]bool{}
	for _, c := range cols {
		taken[strings.ToLower(c.Name)] = true
	}
	for _, f := range s.order {
		name := f
		for taken[strings.ToLower(name)] {
			name = "arg_" + name
		}
		taken[strings.ToLower(name)] = true
		cols = append(cols, Column{Name: name, Type: s.kinds[f].columnType(), Optional: true, Field: f})
	}
	return cols
}
