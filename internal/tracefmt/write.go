package tracefmt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Option is one entry of an options section. trace-cmd skips options it
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

// Content is what a trace.dat holds, for [Content.WriteTo]. The metadata
// blobs are tracefs files exactly as the kernel prints them; the CPU data
// are raw sub-buffers as per_cpu/cpuN/trace_pipe_raw hands them out.
// Everything is written in this machine's byte order, the one of the
// pages copied verbatim.
type Content struct {
	// Version is 6 (what gprobe record writes: every trace-cmd reads
	// it) or 7 (sectioned, optionally compressed).
	Version int
	// Compression of a v7 file's metadata sections and CPU data: "none"
	// (or ""), "zlib" or "zstd". v6 has no compression: "".
	Compression string
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
	// option is written (unless Options holds one) and the clock is named
	// with the data: in v6 the "[clock]" string after the CPU table, which
	// trace-cmd reads only when the option exists, in v7 the buffer's
	// option.
	Clock string
	// TraceClockFile is the text of trace_clock for the TRACECLOCK option;
	// "[Clock]" when empty.
	TraceClockFile []byte
	// Instance names the tracefs instance the CPU data comes from, "" for
	// the top buffer. v7 only: v6 stores its one buffer unnamed.
	Instance string

	Options []Option
	// CPUs holds the data of CPU 0, 1, ...; empty for a CPU without any.
	CPUs []CPUData
}

// chunkPages is how many pages one compressed chunk of v7 CPU data holds,
// as trace-cmd writes them.
const chunkPages = 10

type writer struct {
	w   io.Writer
	n   int64
	err error
}

func (w *writer) bytes(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.w.Write(b)
	w.n += int64(n)
	w.err = err
}

func (w *writer) u16(v uint16)     { w.bytes(hostOrder.AppendUint16(nil, v)) }
func (w *writer) u32(v uint32)     { w.bytes(hostOrder.AppendUint32(nil, v)) }
func (w *writer) u64(v uint64)     { w.bytes(hostOrder.AppendUint64(nil, v)) }
func (w *writer) cstring(s string) { w.bytes(CString(s)) }

// blob32 and blob64 write a size-prefixed byte string.
func (w *writer) blob32(b []byte) { w.u32(uint32(len(b))); w.bytes(b) }
func (w *writer) blob64(b []byte) { w.u64(uint64(len(b))); w.bytes(b) }

// option writes one entry of an options list.
func (w *writer) option(id uint16, data []byte) { w.u16(id); w.blob32(data) }

// pad writes zeros up to offset to.
func (w *writer) pad(to int64) {
	if n := to - w.n; n > 0 {
		w.bytes(make([]byte, n))
	}
}

func (f *Content) validate() error {
	switch {
	case f.Version != 6 && f.Version != 7:
		return fmt.Errorf("%w: version %d", ErrInvalid, f.Version)
	case f.Version == 6 && f.Compression != "":
		return fmt.Errorf("%w: v6 has no compression", ErrInvalid)
	case f.Version == 6 && f.Instance != "":
		return fmt.Errorf("%w: v6 does not name its buffer", ErrInvalid)
	case strings.ContainsRune(f.Instance+f.Clock, 0):
		return fmt.Errorf("%w: NUL in instance or clock name", ErrInvalid)
	}
	if _, _, err := codecs(f.Compression); err != nil {
		return fmt.Errorf("%w: compression %q", ErrInvalid, f.Compression)
	}
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

// WriteTo writes the file to w in one pass, without seeking: every size
// and offset is known before the first byte. For a compressed v7 file that
// means compressing the CPU data first, which is then held in memory
// (compressed) until written. It returns the number of bytes written.
func (f *Content) WriteTo(w io.Writer) (int64, error) {
	if err := f.validate(); err != nil {
		return 0, err
	}
	wr := &writer{w: w}
	if f.Version == 6 {
		f.writeV6(wr)
	} else {
		f.writeV7(wr)
	}
	return wr.n, wr.err
}

// initial writes the magic, the version and the machine's description.
func (f *Content) initial(wr *writer) {
	wr.bytes(Magic)
	wr.cstring(fmt.Sprint(f.Version))
	var endian byte // 0 little, 1 big
	if hostOrder.Uint16([]byte{0, 1}) == 1 {
		endian = 1
	}
	wr.bytes([]byte{endian, byte(f.LongSize)})
	wr.u32(uint32(f.PageSize))
}

// The metadata blobs, laid out the same in v6 and in v7's sections.

func (f *Content) headerInfo(wr *writer) {
	wr.cstring("header_page")
	wr.blob64(f.HeaderPage)
	wr.cstring("header_event")
	wr.blob64(f.HeaderEvent)
}

func (f *Content) ftraceEvents(wr *writer) {
	wr.u32(uint32(len(f.FtraceFormats)))
	for _, b := range f.FtraceFormats {
		wr.blob64(b)
	}
}

func (f *Content) eventFormats(wr *writer) {
	wr.u32(uint32(len(f.Systems)))
	for _, s := range f.Systems {
		wr.cstring(s.Name)
		wr.u32(uint32(len(s.Formats)))
		for _, b := range s.Formats {
			wr.blob64(b)
		}
	}
}

func (f *Content) kallsyms(wr *writer) { wr.blob32(f.Kallsyms) }
func (f *Content) printk(wr *writer)   { wr.blob32(f.PrintkFormats) }
func (f *Content) cmdlines(wr *writer) { wr.blob64(f.Cmdlines) }

// options lists the options to write: Options, after a TRACECLOCK option
// for Clock unless Options holds one.
func (f *Content) options() []Option {
	opts := f.Options
	if f.Clock != "" && !hasOption(opts, OptionTraceClock) {
		tc := f.TraceClockFile
		if len(tc) == 0 {
			tc = []byte("[" + f.Clock + "]")
		}
		opts = append([]Option{{OptionTraceClock, tc}}, opts...)
	}
	return opts
}

// copyCPU copies CPU i's data to wr.
func (f *Content) copyCPU(wr *writer, i int) {
	c := f.CPUs[i]
	if c.Size == 0 || wr.err != nil {
		return
	}
	n, err := io.CopyN(wr.w, c.R, c.Size)
	wr.n += n
	if err != nil {
		wr.err = shortCPU(err, i, n, c.Size)
	}
}

// shortCPU reports data that ended before its announced size as ErrInvalid.
func shortCPU(err error, cpu int, n, size int64) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: cpu%d data ended after %d of %d bytes", ErrInvalid, cpu, n, size)
	}
	return err
}

func (f *Content) writeV6(wr *writer) {
	f.initial(wr)
	f.headerInfo(wr)
	f.ftraceEvents(wr)
	f.eventFormats(wr)
	f.kallsyms(wr)
	f.printk(wr)
	f.cmdlines(wr)
	wr.u32(uint32(len(f.CPUs)))

	if opts := f.options(); len(opts) > 0 {
		wr.bytes([]byte("options  \x00"))
		for _, o := range opts {
			wr.option(o.ID, o.Data)
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
	for i := range f.CPUs {
		wr.pad(offsets[i])
		f.copyCPU(wr, i)
	}
}

// sectionHeaderSize is the size of a v7 section header: id, flags,
// description string id, body size.
const sectionHeaderSize = 2 + 2 + 4 + 8

// sectionHeader writes a v7 section header. gprobe writes no strings
// section, so every description is string 0.
func (wr *writer) sectionHeader(id uint16, compressed bool, size int64) {
	var flags uint16
	if compressed {
		flags = sectionCompressed
	}
	wr.u16(id)
	wr.u16(flags)
	wr.u32(0)
	wr.u64(uint64(size))
}

// v7CPU is where one CPU's data goes in a v7 file.
type v7CPU struct {
	cpu          int
	offset, size int64
	chunks       []byte // the compressed chunk list; nil when uncompressed
}

// writeV7 lays the file out as trace-cmd does: metadata sections, the
// first options section, the buffer's flyrecord section with the
// page-aligned CPU data, and the options section that locates that data.
func (f *Content) writeV7(wr *writer) {
	comp, _, _ := codecs(f.Compression) // validated
	name, version := "none", ""
	if comp != nil {
		name, version = f.Compression, compressionVersion
	}

	// Metadata sections, their bodies built (and compressed) up front.
	type section struct {
		id   uint16
		body []byte
	}
	var sections []section
	for _, s := range []struct {
		id   uint16
		fill func(*writer)
	}{
		{OptionHeaderInfo, f.headerInfo},
		{OptionFtraceEvents, f.ftraceEvents},
		{OptionEventFormats, f.eventFormats},
		{OptionKallsyms, f.kallsyms},
		{OptionPrintk, f.printk},
		{OptionCmdlines, f.cmdlines},
	} {
		var raw bytes.Buffer
		s.fill(&writer{w: &raw})
		body, err := sectionBody(comp, raw.Bytes())
		if err != nil {
			wr.err = err
			return
		}
		sections = append(sections, section{s.id, body})
	}

	pos := int64(len(Magic) + len("7\x00") + 2 + 4 + len(name) + 1 + len(version) + 1 + 8)
	offsets := make([]int64, len(sections))
	for i, s := range sections {
		offsets[i] = pos
		pos += sectionHeaderSize + int64(len(s.body))
	}

	// The first options section: its last option points past the data to
	// the second one, so it is built with that offset left at zero.
	var opts bytes.Buffer
	ow := &writer{w: &opts}
	for i, s := range sections {
		ow.option(s.id, hostOrder.AppendUint64(nil, uint64(offsets[i])))
	}
	for _, o := range f.options() {
		ow.option(o.ID, o.Data)
	}
	ow.option(OptionCPUCount, hostOrder.AppendUint32(nil, uint32(len(f.CPUs))))
	ow.option(OptionDone, make([]byte, 8))
	firstOpts := pos
	pos += sectionHeaderSize + int64(opts.Len())

	// The flyrecord section: CPUs with data, each page aligned.
	fly := pos
	dataStart := fly + sectionHeaderSize
	pos = dataStart
	var cpus []v7CPU
	for i, c := range f.CPUs {
		if c.Size == 0 {
			continue
		}
		pos = align(pos, int64(f.PageSize))
		d := v7CPU{cpu: i, offset: pos, size: c.Size}
		if comp != nil {
			var err error
			if d.chunks, err = f.compressCPU(comp, i); err != nil {
				wr.err = err
				return
			}
			d.size = int64(len(d.chunks))
		}
		cpus = append(cpus, d)
		pos += d.size
	}
	hostOrder.PutUint64(opts.Bytes()[opts.Len()-8:], uint64(pos))

	f.initial(wr)
	wr.cstring(name)
	wr.cstring(version)
	wr.u64(uint64(firstOpts))
	for _, s := range sections {
		wr.sectionHeader(s.id, comp != nil, int64(len(s.body)))
		wr.bytes(s.body)
	}
	wr.sectionHeader(OptionDone, false, int64(opts.Len()))
	wr.bytes(opts.Bytes())
	wr.sectionHeader(OptionBuffer, comp != nil, pos-dataStart)
	for _, d := range cpus {
		wr.pad(d.offset)
		if d.chunks != nil {
			wr.bytes(d.chunks)
		} else {
			f.copyCPU(wr, d.cpu)
		}
	}

	// The second options section: the buffer.
	var buf bytes.Buffer
	bw := &writer{w: &buf}
	bw.u64(uint64(fly))
	bw.cstring(f.Instance)
	bw.cstring(f.Clock)
	bw.u32(uint32(f.PageSize))
	bw.u32(uint32(len(cpus)))
	for _, d := range cpus {
		bw.u32(uint32(d.cpu))
		bw.u64(uint64(d.offset))
		bw.u64(uint64(d.size))
	}
	opts.Reset()
	ow = &writer{w: &opts}
	ow.option(OptionBuffer, buf.Bytes())
	ow.option(OptionDone, make([]byte, 8))
	wr.sectionHeader(OptionDone, false, int64(opts.Len()))
	wr.bytes(opts.Bytes())
}

// sectionBody returns a v7 section body as stored: raw, or compressed
// after its compression header (compressed size, size).
func sectionBody(comp compressor, raw []byte) ([]byte, error) {
	if comp == nil {
		return raw, nil
	}
	b, err := comp(raw, make([]byte, 8, 8+len(raw)/2))
	if err != nil {
		return nil, err
	}
	hostOrder.PutUint32(b, uint32(len(b)-8))
	hostOrder.PutUint32(b[4:], uint32(len(raw)))
	return b, nil
}

// compressCPU reads CPU i's data and returns it as v7's chunk list: the
// chunk count, then per chunk its compressed size, its size and the
// compressed bytes.
func (f *Content) compressCPU(comp compressor, i int) ([]byte, error) {
	c := f.CPUs[i]
	// The reader refuses chunks that inflate past maxChunk.
	chunk := int64(f.PageSize) * max(1, min(chunkPages, maxChunk/int64(f.PageSize)))
	out := hostOrder.AppendUint32(nil, uint32((c.Size+chunk-1)/chunk))
	raw := make([]byte, chunk)
	for done := int64(0); done < c.Size; {
		n := min(chunk, c.Size-done)
		if k, err := io.ReadFull(c.R, raw[:n]); err != nil {
			return nil, shortCPU(err, i, done+int64(k), c.Size)
		}
		head := len(out)
		out = append(out, make([]byte, 8)...)
		var err error
		if out, err = comp(raw[:n], out); err != nil {
			return nil, err
		}
		hostOrder.PutUint32(out[head:], uint32(len(out)-head-8))
		hostOrder.PutUint32(out[head+4:], uint32(n))
		done += n
	}
	return out, nil
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
