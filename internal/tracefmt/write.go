package tracefmt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Option is one entry of the options section. trace-cmd skips options it
// does not know (with a warning), so Data is opaque to the writer.
type Option struct {
	ID   uint16
	Data []byte
}

// System is one event system (a directory of tracefs events/) and the
// format files of the events recorded from it.
type System struct {
	Name    string
	Formats [][]byte
}

// CPUData is the trace data of one CPU: Size bytes of whole ring-buffer
// sub-buffers read from R.
type CPUData struct {
	R    io.Reader
	Size int64
}

// Content is what a trace.dat v6 file holds, to be written.
type Content struct {
	// PageSize is the ring-buffer sub-buffer size, the unit in which
	// readers walk the CPU data (v6 has no separate field for it, so it
	// must be the sub-buffer size and not merely the host page size).
	PageSize int
	// LongSize is the size of a user-space long of the traced machine.
	LongSize int

	HeaderPage    []byte   // events/header_page
	HeaderEvent   []byte   // events/header_event
	FtraceFormats [][]byte // events/ftrace/*/format
	Systems       []System // events/<system>/<event>/format
	Kallsyms      []byte   // /proc/kallsyms (or a subset)
	PrintkFormats []byte   // printk_formats
	Cmdlines      []byte   // saved_cmdlines

	// Clock is the trace clock name ("mono"). When set, a TRACECLOCK
	// option (unless Options holds one) and the "[clock]" string after the
	// CPU table are written; trace-cmd reads the latter only when the
	// former exists, so both go together.
	Clock string
	// TraceClockFile is the text of trace_clock for the TRACECLOCK option;
	// "[Clock]" when empty.
	TraceClockFile []byte

	Options []Option
	CPUs    []CPUData
}

type writer struct {
	w   io.Writer
	n   int64
	err error
	o   binary.AppendByteOrder
}

func (w *writer) bytes(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.w.Write(b)
	w.n += int64(n)
	w.err = err
}

func (w *writer) u16(v uint16) { w.bytes(w.o.AppendUint16(nil, v)) }
func (w *writer) u32(v uint32) { w.bytes(w.o.AppendUint32(nil, v)) }
func (w *writer) u64(v uint64) { w.bytes(w.o.AppendUint64(nil, v)) }

// blob32 and blob64 write a size-prefixed byte string.
func (w *writer) blob32(b []byte) { w.u32(uint32(len(b))); w.bytes(b) }
func (w *writer) blob64(b []byte) { w.u64(uint64(len(b))); w.bytes(b) }

func (f *Content) validate() error {
	if f.PageSize <= 0 || f.PageSize&(f.PageSize-1) != 0 {
		return fmt.Errorf("%w: page size %d is not a power of two", ErrInvalid, f.PageSize)
	}
	if f.LongSize != 4 && f.LongSize != 8 {
		return fmt.Errorf("%w: long size %d", ErrInvalid, f.LongSize)
	}
	if len(f.HeaderPage) == 0 || len(f.HeaderEvent) == 0 {
		return fmt.Errorf("%w: header_page or header_event missing", ErrInvalid)
	}
	if len(f.CPUs) == 0 {
		return fmt.Errorf("%w: no CPU", ErrInvalid)
	}
	for i, c := range f.CPUs {
		if c.Size < 0 || c.Size%int64(f.PageSize) != 0 {
			return fmt.Errorf("%w: cpu%d data size %d is not a multiple of the page size %d", ErrInvalid, i, c.Size, f.PageSize)
		}
		if c.Size > 0 && c.R == nil {
			return fmt.Errorf("%w: cpu%d has no data reader", ErrInvalid, i)
		}
	}
	for _, o := range f.Options {
		if o.ID == OptionDone {
			return fmt.Errorf("%w: option id 0 is the end marker", ErrInvalid)
		}
		if int64(len(o.Data)) > 1<<32-1 {
			return fmt.Errorf("%w: option %d too large", ErrInvalid, o.ID)
		}
	}
	return nil
}

// WriteTo writes the file to w. It returns the number of bytes written.
func (f *Content) WriteTo(w io.Writer) (int64, error) {
	if err := f.validate(); err != nil {
		return 0, err
	}
	wr := &writer{w: w, o: hostOrder}

	// Initial format.
	wr.bytes(Magic)
	wr.bytes([]byte("6\x00"))
	if hostOrder == binary.BigEndian {
		wr.bytes([]byte{1})
	} else {
		wr.bytes([]byte{0})
	}
	wr.bytes([]byte{byte(f.LongSize)})
	wr.u32(uint32(f.PageSize))

	// Header info.
	wr.bytes([]byte("header_page\x00"))
	wr.blob64(f.HeaderPage)
	wr.bytes([]byte("header_event\x00"))
	wr.blob64(f.HeaderEvent)

	// Ftrace and event formats.
	wr.u32(uint32(len(f.FtraceFormats)))
	for _, b := range f.FtraceFormats {
		wr.blob64(b)
	}
	wr.u32(uint32(len(f.Systems)))
	for _, s := range f.Systems {
		wr.bytes(append([]byte(s.Name), 0))
		wr.u32(uint32(len(s.Formats)))
		for _, b := range s.Formats {
			wr.blob64(b)
		}
	}

	wr.blob32(f.Kallsyms)
	wr.blob32(f.PrintkFormats)
	wr.blob64(f.Cmdlines)
	wr.u32(uint32(len(f.CPUs)))

	// Options.
	opts := f.Options
	if f.Clock != "" && !hasOption(opts, OptionTraceClock) {
		tc := f.TraceClockFile
		if len(tc) == 0 {
			tc = []byte("[" + f.Clock + "]")
		}
		opts = append([]Option{{OptionTraceClock, tc}}, opts...)
	}
	if len(opts) > 0 {
		wr.bytes([]byte("options  \x00"))
		for _, o := range opts {
			wr.u16(o.ID)
			wr.blob32(o.Data)
		}
		wr.u16(OptionDone)
	}

	// Flyrecord: the CPU table, the clock string, then page-aligned data.
	wr.bytes([]byte("flyrecord\x00"))
	var clock []byte
	if f.Clock != "" {
		clock = []byte("[" + f.Clock + "]")
	}
	pos := wr.n + int64(len(f.CPUs))*16
	if clock != nil {
		pos += 8 + int64(len(clock))
	}
	offsets := make([]int64, len(f.CPUs))
	for i, c := range f.CPUs {
		pos = align(pos, int64(f.PageSize))
		offsets[i] = pos
		wr.u64(uint64(pos))
		wr.u64(uint64(c.Size))
		pos += c.Size
	}
	if clock != nil {
		wr.blob64(clock)
	}
	for i, c := range f.CPUs {
		if pad := offsets[i] - wr.n; pad > 0 && wr.err == nil {
			wr.bytes(make([]byte, pad))
		}
		if c.Size == 0 || wr.err != nil {
			continue
		}
		n, err := io.CopyN(w, c.R, c.Size)
		wr.n += n
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: cpu%d data ended after %d of %d bytes", ErrInvalid, i, n, c.Size)
			}
			wr.err = err
		}
	}
	return wr.n, wr.err
}

func hasOption(opts []Option, id uint16) bool {
	for _, o := range opts {
		if o.ID == id {
			return true
		}
	}
	return false
}

func align(n, a int64) int64 { return (n + a - 1) &^ (a - 1) }

// CPUStat formats a CPUSTAT option as trace-cmd writes it: "CPU: N\n"
// followed by the text of per_cpu/cpuN/stats.
func CPUStat(cpu int, stats []byte) Option {
	var b bytes.Buffer
	fmt.Fprintf(&b, "CPU: %d\n", cpu)
	b.Write(stats)
	b.WriteByte(0)
	return Option{OptionCPUStat, b.Bytes()}
}

// CString returns s NUL-terminated, the form of trace-cmd's string options.
func CString(s string) []byte { return append([]byte(s), 0) }
