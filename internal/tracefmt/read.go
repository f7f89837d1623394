package tracefmt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gprobe/gprobe/internal/hugepage"
	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
	"github.com/gprobe/gprobe/internal/tracefmt/ringbuf"
)

// maxMetaSection bounds what one metadata section may inflate to.
const maxMetaSection = 256 << 20

// CPU locates one CPU's data inside the file.
type CPU struct {
	CPU          int
	Offset, Size int64
}

// Buffer is one ring buffer (the top instance or a named one).
type Buffer struct {
	Name       string
	Clock      string
	PageSize   int
	CPUs       []CPU
	Compressed bool
	// Latency buffers hold the ASCII `trace` text instead of pages (Text).
	Latency bool
	Text    []byte
}

// File is an opened trace.dat. Its methods may be called concurrently
// once Open returned.
type File struct {
	Version     int
	Order       binary.ByteOrder
	LongSize    int
	PageSize    int
	Compression string // "" or "none" when uncompressed
	// PageLayout is the sub-buffer layout header_page describes
	// (ringbuf.DefaultLayout when the file has none).
	PageLayout ringbuf.Layout
	// HeaderPageText is events/header_page as stored.
	HeaderPageText string
	// Cmdlines names the recording's tasks (saved_cmdlines).
	Cmdlines *PIDTable
	Buffers  []Buffer
	CPUStats []string
	// Uname is the recording machine's "sysname nodename release ..."
	// (trace-cmd adds the version before the machine; gprobe does not).
	Uname string
	// Gprobe is gprobe record's metadata; nil in other files or when
	// damaged.
	Gprobe *Metadata
	// Truncated is set when the file ends before the data its tables
	// announce; the streams then stop at the last complete page.
	Truncated bool

	r    io.ReaderAt
	data []byte // the file, when r is a Mapping
	size int64
	dec  decompressor
	// kallsyms locates the stored /proc/kallsyms: a v6 blob's text
	// (kallsymsLen bytes at kallsymsAt), or a v7 section (kallsymsLen < 0).
	kallsymsAt  int64
	kallsymsLen int64

	fmtMu   sync.Mutex
	rawFmts rawFormats
	formats map[int]*eventfmt.Format
}

// rawFormat is a format description as stored; it is parsed (and copied
// into a string) only when an event of its type is met.
type rawFormat struct {
	system string
	text   []byte
}

// rawFormats holds the stored formats by ID. IDs are small and dense (an
// event's type is 16 bits; a kernel numbers its ~2,000 events from 1),
// so they index a slice: a trace-cmd file stores every format of the
// kernel, and a map of them cost more to build than the rest of a small
// recording's metadata. Larger IDs, which no event can carry, go in a map.
type rawFormats struct {
	byID  []rawFormat // text nil: no format
	large map[int]rawFormat
	n     int
}

func (r *rawFormats) get(id int) (rawFormat, bool) {
	if id >= 0 && id < len(r.byID) {
		return r.byID[id], r.byID[id].text != nil
	}
	f, ok := r.large[id]
	return f, ok
}

func (r *rawFormats) set(id int, f rawFormat) {
	if f.text == nil {
		f.text = []byte{}
	}
	if _, ok := r.get(id); !ok {
		r.n++
	}
	switch {
	case id >= 0 && id < len(r.byID):
		r.byID[id] = f
	case id >= 0 && id <= 0xffff:
		if id >= cap(r.byID) {
			// Grown ahead (a kernel's IDs reach a few thousand) and
			// backed in one call: the copies and first touches of
			// growing by append cost more than the rest of the table.
			grown := make([]rawFormat, len(r.byID), min(max(2*cap(r.byID), id+1, 4096), 0x10000))
			hugepage.Populate(grown[:cap(grown)])
			copy(grown, r.byID)
			r.byID = grown
		}
		r.byID = r.byID[:id+1]
		r.byID[id] = f
	default:
		if r.large == nil {
			r.large = map[int]rawFormat{}
		}
		r.large[id] = f
	}
}

// ids lists the stored IDs in increasing order.
func (r *rawFormats) ids() []int {
	ids := make([]int, 0, r.n)
	for id, f := range r.byID {
		if f.text != nil {
			ids = append(ids, id)
		}
	}
	for id := range r.large {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// Format returns the description of event id, parsing it on first use.
func (f *File) Format(id int) (*eventfmt.Format, error) {
	f.fmtMu.Lock()
	defer f.fmtMu.Unlock()
	if ef, ok := f.formats[id]; ok {
		return ef, nil
	}
	raw, ok := f.rawFmts.get(id)
	if !ok {
		return nil, fmt.Errorf("%w: no format for event id %d", ErrCorrupt, id)
	}
	ef, err := eventfmt.Parse(raw.system, string(raw.text))
	if err != nil {
		return nil, err
	}
	f.formats[id] = ef
	return ef, nil
}

// FormatSource returns the stored text of event id's format and its system.
func (f *File) FormatSource(id int) (system, text string, ok bool) {
	f.fmtMu.Lock()
	defer f.fmtMu.Unlock()
	raw, ok := f.rawFmts.get(id)
	return raw.system, string(raw.text), ok
}

// FormatIDs lists the IDs of every stored format.
func (f *File) FormatIDs() []int {
	f.fmtMu.Lock()
	defer f.fmtMu.Unlock()
	return f.rawFmts.ids()
}

// Formats lists every event format in the file, parsed.
func (f *File) Formats() []*eventfmt.Format {
	f.fmtMu.Lock()
	ids := f.rawFmts.ids()
	f.fmtMu.Unlock()
	var out []*eventfmt.Format
	for _, id := range ids {
		if ef, err := f.Format(id); err == nil {
			out = append(out, ef)
		}
	}
	return out
}

// cursorAt reads the file from off: from the mapping without copying when
// there is one.
func (f *File) cursorAt(off int64) *cursor {
	return &cursor{r: f.r, data: f.data, size: f.size, order: f.Order, off: off}
}

// Open reads the metadata of a trace.dat of size bytes.
func Open(r io.ReaderAt, size int64) (*File, error) {
	f := &File{r: r, size: size, Cmdlines: &PIDTable{}, formats: map[int]*eventfmt.Format{}}
	if m, ok := r.(*Mapping); ok && int64(len(m.data)) == size {
		f.data = m.data
	}
	c := f.cursorAt(0)
	head := c.bytes(len(Magic))
	if c.err != nil || !bytes.Equal(head, Magic) {
		return nil, ErrNotTraceDat
	}
	vs := c.cstring(16)
	v, err := strconv.Atoi(vs)
	if c.err != nil || err != nil {
		return nil, fmt.Errorf("%w: version %q", ErrCorrupt, vs)
	}
	f.Version = v
	if v != 6 && v != 7 {
		return nil, fmt.Errorf("%w: version %d (this reader knows 6 and 7)", ErrUnsupported, v)
	}
	endian := c.bytes(1)
	if c.err != nil {
		return nil, fmt.Errorf("%w: header cut short", ErrCorrupt)
	}
	switch endian[0] {
	case 0:
		f.Order = binary.LittleEndian
	case 1:
		f.Order = binary.BigEndian
	default:
		return nil, fmt.Errorf("%w: endianness byte %d", ErrCorrupt, endian[0])
	}
	c.order = f.Order
	f.LongSize = int(c.bytes(1)[0])
	f.PageSize = int(c.u32())
	if c.err != nil {
		return nil, fmt.Errorf("%w: header cut short", ErrCorrupt)
	}
	if f.LongSize != 4 && f.LongSize != 8 {
		return nil, fmt.Errorf("%w: long size %d", ErrCorrupt, f.LongSize)
	}
	if f.PageSize < 64 || f.PageSize > 1<<24 {
		return nil, fmt.Errorf("%w: page size %d", ErrCorrupt, f.PageSize)
	}
	if v == 6 {
		err = f.readV6(c)
	} else {
		err = f.readV7(c)
	}
	if err != nil {
		return nil, err
	}
	for i := range f.Buffers {
		b := &f.Buffers[i]
		if b.PageSize == 0 {
			b.PageSize = f.PageSize
		}
		for j := range b.CPUs {
			cpu := &b.CPUs[j]
			if cpu.Offset < 0 || cpu.Size < 0 || cpu.Offset+cpu.Size < 0 {
				return nil, fmt.Errorf("%w: CPU %d data at %d+%d", ErrCorrupt, cpu.CPU, cpu.Offset, cpu.Size)
			}
			if cpu.Size > 0 && cpu.Offset+cpu.Size > size {
				// Cut short: Pages reads what is left.
				f.Truncated = true
			}
		}
	}
	return f, nil
}

// readHeaderInfo reads "header_page\0" u64 text "header_event\0" u64 text.
func (f *File) readHeaderInfo(c *cursor) error {
	if string(c.bytes(12)) != "header_page\x00" {
		return fmt.Errorf("%w: no header_page", ErrCorrupt)
	}
	hp := c.blob(c.u64())
	if c.err != nil {
		return fmt.Errorf("%w: header_page: %v", ErrCorrupt, c.err)
	}
	f.HeaderPageText = string(hp)
	// Old files may omit header_page.
	f.PageLayout = ringbuf.DefaultLayout
	if strings.TrimSpace(f.HeaderPageText) != "" {
		l, err := ringbuf.ParseHeaderPage(f.HeaderPageText)
		if err != nil {
			return err
		}
		f.PageLayout = l
	}
	if string(c.bytes(13)) != "header_event\x00" {
		return fmt.Errorf("%w: no header_event", ErrCorrupt)
	}
	c.skip(c.u64())
	if c.err != nil {
		return fmt.Errorf("%w: header_event: %v", ErrCorrupt, c.err)
	}
	return nil
}

func (f *File) readFtraceEvents(c *cursor) error {
	n := c.u32()
	for i := uint32(0); i < n && c.err == nil; i++ {
		f.addFormat("ftrace", c.blob(c.u64()))
	}
	if c.err != nil {
		return fmt.Errorf("%w: ftrace formats: %v", ErrCorrupt, c.err)
	}
	return nil
}

func (f *File) readEventFormats(c *cursor) error {
	systems := c.u32()
	for i := uint32(0); i < systems && c.err == nil; i++ {
		sys := c.cstring(1024)
		n := c.u32()
		for j := uint32(0); j < n && c.err == nil; j++ {
			f.addFormat(sys, c.blob(c.u64()))
		}
	}
	if c.err != nil {
		return fmt.Errorf("%w: event formats: %v", ErrCorrupt, c.err)
	}
	return nil
}

// addFormat indexes a format by its ID without parsing the rest.
func (f *File) addFormat(system string, text []byte) {
	i := bytes.Index(text, []byte("\nID:"))
	if i < 0 {
		return
	}
	rest := text[i+4:]
	if j := bytes.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	id, err := strconv.Atoi(string(bytes.TrimSpace(rest)))
	if err != nil {
		return
	}
	f.rawFmts.set(id, rawFormat{system, text})
}

func (f *File) parseCmdlines(text []byte) {
	if f.Cmdlines.text != "" {
		text = append([]byte(f.Cmdlines.text+"\n"), text...)
	}
	f.Cmdlines = NewPIDTable(string(text))
}

func (f *File) readV6(c *cursor) error {
	if err := f.readHeaderInfo(c); err != nil {
		return err
	}
	if err := f.readFtraceEvents(c); err != nil {
		return err
	}
	if err := f.readEventFormats(c); err != nil {
		return err
	}
	f.kallsymsLen = int64(c.u32())
	f.kallsymsAt = c.off
	c.skip(uint64(f.kallsymsLen))
	c.skip(uint64(c.u32())) // printk formats
	f.parseCmdlines(c.blob(c.u64()))
	cpus := int(c.u32())
	if c.err != nil {
		return fmt.Errorf("%w: metadata cut short: %v", ErrCorrupt, c.err)
	}
	if cpus > 1<<16 {
		return fmt.Errorf("%w: %d CPUs", ErrCorrupt, cpus)
	}
	top := Buffer{Name: "", CPUs: nil}
	useClock := false
	type v6buf struct {
		name   string
		offset int64
	}
	var extra []v6buf
	for {
		tag := string(c.bytes(10))
		if c.err != nil {
			return fmt.Errorf("%w: no flyrecord section: %v", ErrCorrupt, c.err)
		}
		switch {
		case strings.HasPrefix(tag, "options"):
			for {
				id := c.u16()
				if c.err != nil {
					return fmt.Errorf("%w: options: %v", ErrCorrupt, c.err)
				}
				if id == OptionDone {
					break
				}
				data := c.blob(uint64(c.u32()))
				if c.err != nil {
					return fmt.Errorf("%w: option %d: %v", ErrCorrupt, id, c.err)
				}
				switch id {
				case OptionTraceClock:
					useClock = true
				case OptionCPUStat:
					f.CPUStats = append(f.CPUStats, string(data))
				case OptionUname:
					f.Uname = cstr(data)
				case OptionGprobe:
					f.Gprobe = decodeMetadata(data)
				case OptionBuffer:
					if len(data) >= 9 {
						extra = append(extra, v6buf{cstr(data[8:]), int64(f.Order.Uint64(data))})
					}
				}
			}
			continue
		case strings.HasPrefix(tag, "latency"):
			top.Latency = true
			top.Text = c.blob(uint64(c.size - c.off))
			f.Buffers = append(f.Buffers, top)
			return nil
		case strings.HasPrefix(tag, "flyrecord"):
		default:
			return fmt.Errorf("%w: unknown section tag %q", ErrCorrupt, tag)
		}
		break
	}
	readFly := func(c *cursor, b *Buffer) error {
		for i := 0; i < cpus; i++ {
			off, sz := c.u64(), c.u64()
			b.CPUs = append(b.CPUs, CPU{CPU: i, Offset: int64(off), Size: int64(sz)})
		}
		if useClock {
			clk := c.blob(c.u64())
			b.Clock = strings.Trim(string(clk), "[]\x00\n ")
		}
		if c.err != nil {
			return fmt.Errorf("%w: flyrecord table: %v", ErrCorrupt, c.err)
		}
		return nil
	}
	if err := readFly(c, &top); err != nil {
		return err
	}
	f.Buffers = append(f.Buffers, top)
	for _, e := range extra {
		bc := f.cursorAt(e.offset)
		if !strings.HasPrefix(string(bc.bytes(10)), "flyrecord") {
			return fmt.Errorf("%w: buffer %q has no flyrecord", ErrCorrupt, e.name)
		}
		b := Buffer{Name: e.name}
		if err := readFly(bc, &b); err != nil {
			return err
		}
		f.Buffers = append(f.Buffers, b)
	}
	return nil
}

func (f *File) readV7(c *cursor) error {
	f.Compression = c.cstring(64)
	c.cstring(64) // compression version
	first := c.u64()
	if c.err != nil {
		return fmt.Errorf("%w: header cut short", ErrCorrupt)
	}
	var err error
	if _, f.dec, err = codecs(f.Compression); err != nil {
		return err
	}
	sections := map[uint16]uint64{}
	type bufOpt struct {
		id   uint16
		data []byte
	}
	var bufs []bufOpt
	seen := map[uint64]bool{}
	var metaEnd int64 // end of the last options section read
	broken := false
	for next := first; next != 0; {
		if seen[next] {
			return fmt.Errorf("%w: options sections loop", ErrCorrupt)
		}
		seen[next] = true
		body, id, end, err := f.sectionEnd(int64(next))
		if err != nil {
			if next != first {
				// trace-cmd writes each buffer's options after its data, so
				// a file cut inside the data loses them: recover below.
				broken = true
				break
			}
			return err
		}
		metaEnd = max(metaEnd, end)
		if id != OptionDone {
			return fmt.Errorf("%w: section at %d is %d, not options", ErrCorrupt, next, id)
		}
		next = 0
		oc := &cursor{data: body, size: int64(len(body)), order: f.Order}
		for oc.off < oc.size {
			oid := oc.u16()
			data := oc.blob(uint64(oc.u32()))
			if oc.err != nil {
				return fmt.Errorf("%w: options: %v", ErrCorrupt, oc.err)
			}
			switch oid {
			case OptionDone:
				if len(data) >= 8 {
					next = f.Order.Uint64(data)
				}
				oc.off = oc.size
			case OptionHeaderInfo, OptionFtraceEvents, OptionEventFormats, OptionCmdlines:
				if len(data) >= 8 {
					sections[oid] = f.Order.Uint64(data)
				}
			case OptionKallsyms:
				if len(data) >= 8 {
					f.kallsymsAt, f.kallsymsLen = int64(f.Order.Uint64(data)), -1
				}
			case OptionCPUStat:
				f.CPUStats = append(f.CPUStats, string(data))
			case OptionUname:
				f.Uname = cstr(data)
			case OptionGprobe:
				f.Gprobe = decodeMetadata(data)
			case OptionBuffer, OptionBufferText:
				bufs = append(bufs, bufOpt{oid, data})
			}
		}
	}
	for _, want := range []uint16{OptionHeaderInfo, OptionFtraceEvents, OptionEventFormats, OptionCmdlines} {
		off, ok := sections[want]
		if !ok {
			if want == OptionCmdlines || want == OptionFtraceEvents {
				continue
			}
			return fmt.Errorf("%w: no section %d", ErrCorrupt, want)
		}
		body, id, err := f.section(int64(off))
		if err != nil {
			return err
		}
		if id != want {
			return fmt.Errorf("%w: section at %d is %d, want %d", ErrCorrupt, off, id, want)
		}
		sc := &cursor{data: body, size: int64(len(body)), order: f.Order}
		switch want {
		case OptionHeaderInfo:
			err = f.readHeaderInfo(sc)
		case OptionFtraceEvents:
			err = f.readFtraceEvents(sc)
		case OptionEventFormats:
			err = f.readEventFormats(sc)
		case OptionCmdlines:
			f.parseCmdlines(sc.blob(sc.u64()))
		}
		if err != nil {
			return err
		}
	}
	if broken {
		f.Truncated = true
		f.recoverBuffers(metaEnd)
	}
	for _, bo := range bufs {
		bc := &cursor{data: bo.data, size: int64(len(bo.data)), order: f.Order}
		off := bc.u64()
		b := Buffer{Name: bc.cstring(4096), Clock: bc.cstring(256)}
		if bo.id == OptionBuffer {
			b.PageSize = int(bc.u32())
			n := bc.u32()
			if bc.err == nil && uint64(n)*20 > uint64(len(bo.data)) {
				return fmt.Errorf("%w: buffer %q claims %d CPUs", ErrCorrupt, b.Name, n)
			}
			for i := uint32(0); i < n && bc.err == nil; i++ {
				b.CPUs = append(b.CPUs, CPU{CPU: int(bc.u32()), Offset: int64(bc.u64()), Size: int64(bc.u64())})
			}
		} else {
			b.Latency = true
		}
		if bc.err != nil {
			return fmt.Errorf("%w: buffer option: %v", ErrCorrupt, bc.err)
		}
		if b.PageSize != 0 && (b.PageSize < 64 || b.PageSize > 1<<24) {
			return fmt.Errorf("%w: buffer %q page size %d", ErrCorrupt, b.Name, b.PageSize)
		}
		// The buffer's section header says whether its data is compressed.
		hc := f.cursorAt(int64(off))
		hc.u16()
		flags := hc.u16()
		if hc.err != nil {
			if len(b.CPUs) > 0 || b.Latency {
				f.Truncated = true
			}
			continue
		}
		b.Compressed = flags&sectionCompressed != 0
		if b.Compressed && f.dec == nil {
			return fmt.Errorf("%w: buffer %q is compressed in a file without compression", ErrCorrupt, b.Name)
		}
		if b.Latency {
			body, _, err := f.section(int64(off))
			if err != nil {
				return err
			}
			b.Text = body
		}
		f.Buffers = append(f.Buffers, b)
	}
	return nil
}

// Kallsyms returns the /proc/kallsyms text stored in the file, read on
// each call (it is megabytes, and only symbolizing needs it); nil when
// the file has none.
func (f *File) Kallsyms() ([]byte, error) {
	switch {
	case f.kallsymsLen == 0:
		return nil, nil
	case f.kallsymsLen > 0:
		if f.kallsymsAt+f.kallsymsLen > f.size {
			return nil, fmt.Errorf("%w: kallsyms: %w", ErrCorrupt, errShort)
		}
		b := make([]byte, f.kallsymsLen)
		_, err := f.r.ReadAt(b, f.kallsymsAt)
		return b, err
	}
	body, id, err := f.section(f.kallsymsAt)
	if err != nil {
		return nil, err
	}
	if id != OptionKallsyms {
		return nil, fmt.Errorf("%w: section at %d is %d, want %d", ErrCorrupt, f.kallsymsAt, id, OptionKallsyms)
	}
	c := &cursor{data: body, size: int64(len(body)), order: f.Order}
	text := c.blob(uint64(c.u32()))
	if c.err != nil {
		return nil, fmt.Errorf("%w: kallsyms: %v", ErrCorrupt, c.err)
	}
	return text, nil
}

// section reads the section at off and returns its (decompressed) body.
func (f *File) section(off int64) ([]byte, uint16, error) {
	b, id, _, err := f.sectionEnd(off)
	return b, id, err
}

// sectionEnd is section, also returning where the section ends.
func (f *File) sectionEnd(off int64) ([]byte, uint16, int64, error) {
	b, id, c, err := f.readSection(off)
	return b, id, c, err
}

func (f *File) readSection(off int64) ([]byte, uint16, int64, error) {
	c := f.cursorAt(off)
	body, id, err := f.sectionBody(c)
	return body, id, c.off, err
}

func (f *File) sectionBody(c *cursor) ([]byte, uint16, error) {
	id := c.u16()
	flags := c.u16()
	c.u32() // description string id
	size := c.u64()
	if c.err != nil {
		return nil, 0, fmt.Errorf("%w: section header at %d: %w", ErrCorrupt, c.off, c.err)
	}
	if size > uint64(f.size) {
		return nil, 0, fmt.Errorf("%w: section %d of %d bytes in a %d-byte file: %w", ErrCorrupt, id, size, f.size, errShort)
	}
	if flags&sectionCompressed == 0 {
		body := c.blob(size)
		if c.err != nil {
			return nil, 0, fmt.Errorf("%w: section %d: %w", ErrCorrupt, id, c.err)
		}
		return body, id, nil
	}
	if f.dec == nil {
		return nil, 0, fmt.Errorf("%w: compressed section %d in a file without compression", ErrCorrupt, id)
	}
	zs, us := c.u32(), c.u32()
	z := c.blob(uint64(zs))
	if c.err != nil {
		return nil, 0, fmt.Errorf("%w: section %d: %w", ErrCorrupt, id, c.err)
	}
	if us > maxMetaSection {
		return nil, 0, fmt.Errorf("%w: section %d claims %d bytes", ErrCorrupt, id, us)
	}
	if body, ok := inflatedSections.get(f.Compression, z, int(us)); ok {
		return body, id, nil
	}
	var dst []byte
	if n := min(int(us), 64*len(z)+1<<16); n >= hugepage.Size/2 {
		// A large section (trace-cmd's event formats: 2 MB of text for
		// a hundred systems) fills its memory: in huge pages that is a
		// fault per 2 MiB, a few milliseconds less on a virtual machine.
		dst = hugepage.Slice[byte](max(n, hugepage.Size))[:0]
	}
	body, err := f.dec(z, int(us), dst)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: section %d: %v", ErrCorrupt, id, err)
	}
	inflatedSections.put(f.Compression, z, body)
	return body, id, nil
}

// inflatedSections keeps the last large metadata sections inflated, found
// again by their compressed bytes: the recordings of a fleet made on one
// kernel carry the same 2 MB of event formats, and inflating them into
// fresh memory was most of the time of opening a small recording. A
// section's inflated bytes are only read, never written, so the files
// that have the same section share them.
var inflatedSections sectionMemo

// sharedSection is the smallest inflated size kept.
const sharedSection = 256 << 10

type sectionMemo struct {
	mu   sync.Mutex
	kept [2]inflatedSection
	next int
}

type inflatedSection struct {
	codec   string
	z, body []byte // z is a copy: the file's own bytes may be unmapped
}

func (m *sectionMemo) get(codec string, z []byte, size int) ([]byte, bool) {
	if size < sharedSection {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range m.kept {
		if k.codec == codec && len(k.body) == size && bytes.Equal(k.z, z) {
			return k.body, true
		}
	}
	return nil, false
}

func (m *sectionMemo) put(codec string, z, body []byte) {
	if len(body) < sharedSection {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	zc := make([]byte, len(z))
	hugepage.Populate(zc) // about to be filled: one call, not a fault per page
	copy(zc, z)
	m.kept[m.next] = inflatedSection{codec, zc, body}
	m.next = (m.next + 1) % len(m.kept)
}

func cstr(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}

// recoverBuffers finds the buffer data of a file cut before the options
// that locate it: after the last metadata section come flyrecord sections
// (id 3), each followed by an options section. CPU data is page aligned;
// compressed CPUs are chunk lists, uncompressed CPUs are told apart by a
// page timestamp going backwards.
func (f *File) recoverBuffers(p int64) {
	for p > 0 && p < f.size {
		c := f.cursorAt(p)
		id, flags := c.u16(), c.u16()
		c.u32()
		size := c.u64()
		if c.err != nil {
			return
		}
		body := c.off
		switch id {
		case OptionDone:
			p = body + int64(size)
			continue
		case OptionBuffer:
		default:
			return
		}
		b := Buffer{Name: "(recovered)", PageSize: f.PageSize, Compressed: flags&sectionCompressed != 0}
		if b.Compressed && f.dec == nil {
			return
		}
		ps := int64(f.PageSize)
		pos := (body + ps - 1) / ps * ps
		end := body + int64(size)
		if size == 0 {
			p = end
			continue
		}
		if b.Compressed {
			for cpu := 0; pos < min(end, f.size); cpu++ {
				cc := f.cursorAt(pos)
				n := cc.u32()
				for i := uint32(0); i < n && cc.err == nil; i++ {
					zs := cc.u32()
					cc.u32() // inflated size
					cc.skip(uint64(zs))
				}
				b.CPUs = append(b.CPUs, CPU{CPU: cpu, Offset: pos, Size: cc.off - pos})
				if cc.err != nil || n == 0 {
					break
				}
				pos = (cc.off + ps - 1) / ps * ps
			}
		} else {
			start, prev, cpu := pos, uint64(0), 0
			for ; pos+ps <= min(end, f.size); pos += ps {
				hb := make([]byte, 8)
				f.r.ReadAt(hb, pos)
				ts := f.Order.Uint64(hb)
				if ts < prev {
					b.CPUs = append(b.CPUs, CPU{CPU: cpu, Offset: start, Size: pos - start})
					start, cpu = pos, cpu+1
				}
				prev = ts
			}
			b.CPUs = append(b.CPUs, CPU{CPU: cpu, Offset: start, Size: pos - start})
		}
		f.Buffers = append(f.Buffers, b)
		p = end
	}
}
