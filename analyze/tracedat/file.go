// Package tracedat reads trace-cmd's trace.dat files, versions 6 and 7
// (sectioned, optionally zstd- or zlib-compressed): the metadata (event
// formats, saved command lines, options) and each buffer's per-CPU stream
// of ring-buffer pages. It does not decode the pages (see ringbuf).
package tracedat

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
	"github.com/gprobe/gprobe/internal/tracefmt/ringbuf"
)

var (
	// ErrNotTraceDat: the file does not start with trace-cmd's magic.
	ErrNotTraceDat = errors.New("not a trace.dat file")
	// ErrCorrupt is wrapped by errors about metadata that cannot be read.
	ErrCorrupt = errors.New("damaged trace.dat")
	// ErrUnsupported: a version or compression this reader does not know.
	ErrUnsupported = errors.New("unsupported trace.dat")
)

// Magic is the first ten bytes of every trace.dat.
var Magic = []byte("\x17\x08\x44tracing")

// Option and section IDs (trace-cmd-private.h).
const (
	optDone       = 0
	optDate       = 1
	optCPUStat    = 2
	optBuffer     = 3
	optTraceClock = 4
	optUname      = 5
	optCPUCount   = 8
	optVersion    = 9
	optProcMaps   = 10
	optHeaderInfo = 16
	optFtraceEvs  = 17
	optEventFmts  = 18
	optKallsyms   = 19
	optPrintk     = 20
	optCmdlines   = 21
	optBufferText = 22
	// optGprobe is gprobe record's JSON metadata (record/tracedat.OptionGprobe).
	optGprobe      = 0x6770
	secFlCompress  = 1
	maxMetaSection = 256 << 20 // refuse to inflate more than this for one metadata blob
)

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
	PageLayout  ringbuf.Layout
	// HeaderPageText is events/header_page as stored.
	HeaderPageText string
	Cmdlines       map[int]string
	Buffers        []Buffer
	CPUStats       []string
	// Probes are the probe definitions gprobe record stored (dynamic_events
	// lines); TGIDs maps thread to process from its saved_tgids.
	Probes []string
	TGIDs  map[int]int
	// Truncated is set when the file ends before the data its tables
	// announce; the streams then stop at the last complete page.
	Truncated bool

	r    io.ReaderAt
	size int64
	dec  decompressor

	fmtMu   sync.Mutex
	rawFmts map[int]rawFormat
	formats map[int]*eventfmt.Format
}

// rawFormat is a format description as stored; it is parsed (and copied
// into a string) only when an event of its type is met.
type rawFormat struct {
	system string
	text   []byte
}

// Format returns the description of event id, parsing it on first use.
func (f *File) Format(id int) (*eventfmt.Format, error) {
	f.fmtMu.Lock()
	defer f.fmtMu.Unlock()
	if ef, ok := f.formats[id]; ok {
		return ef, nil
	}
	raw, ok := f.rawFmts[id]
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
	raw, ok := f.rawFmts[id]
	return raw.system, string(raw.text), ok
}

// FormatIDs lists the IDs of every stored format.
func (f *File) FormatIDs() []int {
	f.fmtMu.Lock()
	defer f.fmtMu.Unlock()
	ids := make([]int, 0, len(f.rawFmts))
	for id := range f.rawFmts {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// Formats lists every event format in the file, parsed.
func (f *File) Formats() []*eventfmt.Format {
	f.fmtMu.Lock()
	ids := make([]int, 0, len(f.rawFmts))
	for id := range f.rawFmts {
		ids = append(ids, id)
	}
	f.fmtMu.Unlock()
	var out []*eventfmt.Format
	for _, id := range ids {
		if ef, err := f.Format(id); err == nil {
			out = append(out, ef)
		}
	}
	return out
}

// Open reads the metadata of a trace.dat of size bytes.
func Open(r io.ReaderAt, size int64) (*File, error) {
	f := &File{r: r, size: size, Cmdlines: map[int]string{}, rawFmts: map[int]rawFormat{}, formats: map[int]*eventfmt.Format{}}
	c := &cursor{r: r, size: size}
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
	f.rawFmts[id] = rawFormat{system, text}
}

func (f *File) parseCmdlines(text []byte) {
	for _, line := range strings.Split(string(text), "\n") {
		p, comm, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		if pid, err := strconv.Atoi(p); err == nil {
			f.Cmdlines[pid] = comm
		}
	}
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
	c.skip(uint64(c.u32())) // kallsyms
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
				if id == optDone {
					break
				}
				data := c.blob(uint64(c.u32()))
				if c.err != nil {
					return fmt.Errorf("%w: option %d: %v", ErrCorrupt, id, c.err)
				}
				switch id {
				case optTraceClock:
					useClock = true
				case optCPUStat:
					f.CPUStats = append(f.CPUStats, string(data))
				case optGprobe:
					f.readGprobe(data)
				case optBuffer:
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
		bc := &cursor{r: c.r, size: c.size, order: c.order, off: e.offset}
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
	switch f.Compression {
	case "", "none":
	case "zstd":
		f.dec = zstdDecompressor()
	case "zlib":
		f.dec = zlibDecompress
	default:
		return fmt.Errorf("%w: compression %q", ErrUnsupported, f.Compression)
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
		if id != optDone {
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
			case optDone:
				if len(data) >= 8 {
					next = f.Order.Uint64(data)
				}
				oc.off = oc.size
			case optHeaderInfo, optFtraceEvs, optEventFmts, optCmdlines:
				if len(data) >= 8 {
					sections[oid] = f.Order.Uint64(data)
				}
			case optCPUStat:
				f.CPUStats = append(f.CPUStats, string(data))
			case optGprobe:
				f.readGprobe(data)
			case optBuffer, optBufferText:
				bufs = append(bufs, bufOpt{oid, data})
			}
		}
	}
	for _, want := range []uint16{optHeaderInfo, optFtraceEvs, optEventFmts, optCmdlines} {
		off, ok := sections[want]
		if !ok {
			if want == optCmdlines || want == optFtraceEvs {
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
		case optHeaderInfo:
			err = f.readHeaderInfo(sc)
		case optFtraceEvs:
			err = f.readFtraceEvents(sc)
		case optEventFmts:
			err = f.readEventFormats(sc)
		case optCmdlines:
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
		if bo.id == optBuffer {
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
		hc := &cursor{r: f.r, size: f.size, order: f.Order, off: int64(off)}
		hc.u16()
		flags := hc.u16()
		if hc.err != nil {
			if len(b.CPUs) > 0 || b.Latency {
				f.Truncated = true
			}
			continue
		}
		b.Compressed = flags&secFlCompress != 0
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
	c := &cursor{r: f.r, size: f.size, order: f.Order, off: off}
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
	if flags&secFlCompress == 0 {
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
	body, err := f.dec(z, int(us), nil)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: section %d: %v", ErrCorrupt, id, err)
	}
	return body, id, nil
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
		c := &cursor{r: f.r, size: f.size, order: f.Order, off: p}
		id, flags := c.u16(), c.u16()
		c.u32()
		size := c.u64()
		if c.err != nil {
			return
		}
		body := c.off
		switch id {
		case optDone:
			p = body + int64(size)
			continue
		case optBuffer:
		default:
			return
		}
		b := Buffer{Name: "(recovered)", PageSize: f.PageSize, Compressed: flags&secFlCompress != 0}
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
				cc := &cursor{r: f.r, size: f.size, order: f.Order, off: pos}
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

// readGprobe takes what analysis can use from gprobe record's metadata:
// the probe definitions (to pair entry and return probes) and the
// thread-to-process map. A damaged blob is ignored: it is optional.
func (f *File) readGprobe(data []byte) {
	var m struct {
		Probes     []string `json:"probes"`
		SavedTgids string   `json:"saved_tgids"`
	}
	if json.Unmarshal(data, &m) != nil {
		return
	}
	f.Probes = m.Probes
	for _, line := range strings.Split(m.SavedTgids, "\n") {
		p, g, ok := strings.Cut(strings.TrimSpace(line), " ")
		pid, err1 := strconv.Atoi(p)
		tgid, err2 := strconv.Atoi(strings.TrimSpace(g))
		if ok && err1 == nil && err2 == nil && tgid > 0 {
			if f.TGIDs == nil {
				f.TGIDs = map[int]int{}
			}
			f.TGIDs[pid] = tgid
		}
	}
}
