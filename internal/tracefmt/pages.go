package tracefmt

import (
	"fmt"
	"io"

	"github.com/gprobe/gprobe/internal/hugepage"
)

// maxChunk bounds one compressed chunk's inflated size (trace-cmd writes
// ten pages per chunk).
const maxChunk = 16 << 20

// Pages iterates over the pages of one CPU of one buffer, so memory does
// not grow with the trace.
type Pages struct {
	// Keep, when not zero, lets Next reuse the memory of a page once Keep
	// newer pages were returned: the caller promises not to hold a page
	// longer. Reuse spares allocating (and faulting in) every page. With
	// Keep zero every page is fresh memory.
	Keep int

	f        *File
	b        *Buffer
	cpu      CPU
	off, end int64 // uncompressed: next page offset, end of data
	// compressed state: the chunks are read in order through zc
	chunks, chunk uint32
	zc            *cursor
	cur           []byte
	seq           int64 // pages returned so far
	ring          []slot
	next          int
	// Truncated is set when the data ended early or a chunk was damaged.
	Truncated bool
	Err       error
}

// slot is a reusable buffer and the sequence number of the last page
// handed out from it.
type slot struct {
	buf  []byte
	last int64
}

// buffer returns memory for n bytes that will hold pages up to sequence
// number last: a ring slot whose pages are all older than Keep, or fresh.
func (p *Pages) buffer(n int, last int64) []byte {
	if p.Keep <= 0 {
		return make([]byte, n)
	}
	if len(p.ring) > 0 {
		s := &p.ring[p.next]
		if p.seq-s.last > int64(p.Keep) && cap(s.buf) >= n {
			p.next = (p.next + 1) % len(p.ring)
			s.last = last
			return s.buf[:n]
		}
	}
	// The oldest buffer is still in use: the ring grows until it spans
	// Keep pages, then stays that size.
	b := make([]byte, n)
	hugepage.Populate(b) // filled by a read: one call instead of a fault per page
	p.ring = append(p.ring, slot{})
	copy(p.ring[p.next+1:], p.ring[p.next:])
	p.ring[p.next] = slot{buf: b, last: last}
	p.next = (p.next + 1) % len(p.ring)
	return b
}

// Pages returns the page iterator of CPU index i of buffer b.
func (f *File) Pages(b *Buffer, i int) *Pages {
	c := b.CPUs[i]
	p := &Pages{f: f, b: b, cpu: c, off: c.Offset, end: c.Offset + c.Size}
	if p.end > f.size {
		p.end = f.size
		p.Truncated = true
	}
	if b.Compressed && c.Size > 0 {
		// Chunks are read through r, into the cursor's reused buffer
		// (see Mapping.ReadAt).
		hc := &cursor{r: f.r, size: f.size, order: f.Order, off: c.Offset}
		p.chunks = hc.u32()
		p.zc = hc
		if hc.err != nil {
			p.Truncated = true
			p.chunks = 0
		}
	}
	return p
}

// PagesPerRead is how many pages of uncompressed data one read fetches: a
// system call per page would cost more than decoding it.
const PagesPerRead = 32

// Next returns the next page (PageSize bytes, or fewer for a short last
// page), or io.EOF. The slice is valid until the next call.
func (p *Pages) Next() ([]byte, error) {
	ps := p.b.PageSize
	for len(p.cur) == 0 && !p.b.Compressed {
		if p.off >= p.end {
			if p.cpu.Offset+p.cpu.Size > p.f.size {
				p.Truncated = true
			}
			return nil, io.EOF
		}
		n := min(int64(ps)*PagesPerRead, p.end-p.off)
		buf := p.buffer(int(n), p.seq+(n+int64(ps)-1)/int64(ps)-1)
		got, err := p.f.r.ReadAt(buf, p.off)
		if got < len(buf) {
			if err != nil && err != io.EOF {
				p.Err = err
				return nil, err
			}
			// The file is shorter than when it was opened: what was
			// read in whole pages stands, the stream ends there.
			p.Truncated = true
			buf = buf[:got/ps*ps]
			n, p.end = int64(len(buf)), p.off+int64(len(buf))
			if n == 0 {
				return nil, io.EOF
			}
		}
		p.off += n
		p.cur = buf
	}
	for len(p.cur) == 0 {
		if p.chunk >= p.chunks {
			return nil, io.EOF
		}
		hc := p.zc
		zs, us := hc.u32(), hc.u32()
		if hc.err == nil && (us > maxChunk || uint64(zs) > uint64(p.f.size-hc.off)) {
			hc.err = fmt.Errorf("chunk %d: %d/%d bytes", p.chunk, zs, us)
		}
		z := hc.borrow(uint64(zs))
		if hc.err != nil {
			p.Truncated = true
			return nil, io.EOF
		}
		last := p.seq + (int64(us)+int64(ps)-1)/int64(ps) - 1
		out, err := p.f.dec(z, int(us), p.buffer(int(us), last)[:0])
		if err != nil {
			p.Truncated = true
			return nil, io.EOF
		}
		p.chunk++
		p.cur = out
	}
	n := ps
	if n > len(p.cur) {
		n = len(p.cur)
	}
	pg := p.cur[:n]
	p.cur = p.cur[n:]
	p.seq++
	return pg, nil
}
