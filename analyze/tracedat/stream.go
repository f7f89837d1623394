package tracedat

import (
	"fmt"
	"io"
)

// maxChunk bounds one compressed chunk's inflated size (trace-cmd writes
// ten pages per chunk).
const maxChunk = 16 << 20

// Pages iterates over the pages of one CPU of one buffer. It holds at most
// one decompressed chunk, so memory does not grow with the trace.
type Pages struct {
	f        *File
	b        *Buffer
	cpu      CPU
	off, end int64 // uncompressed: next page offset, end of data
	// compressed state
	chunks, chunk uint32
	zoff          int64
	cur           []byte
	// Truncated is set when the data ended early or a chunk was damaged.
	Truncated bool
	Err       error
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
		hc := &cursor{r: f.r, size: f.size, order: f.Order, off: c.Offset}
		p.chunks = hc.u32()
		p.zoff = hc.off
		if hc.err != nil {
			p.Truncated = true
			p.chunks = 0
		}
	}
	return p
}

// Next returns the next page (PageSize bytes, or fewer for a short last
// page), or io.EOF. The slice is valid until the next call.
func (p *Pages) Next() ([]byte, error) {
	ps := p.b.PageSize
	if !p.b.Compressed {
		if p.off >= p.end {
			if p.cpu.Offset+p.cpu.Size > p.f.size {
				p.Truncated = true
			}
			return nil, io.EOF
		}
		n := int64(ps)
		if p.off+n > p.end {
			n = p.end - p.off
		}
		buf := make([]byte, n)
		if _, err := p.f.r.ReadAt(buf, p.off); err != nil && err != io.EOF {
			p.Err = err
			return nil, err
		}
		p.off += n
		return buf, nil
	}
	for len(p.cur) == 0 {
		if p.chunk >= p.chunks {
			return nil, io.EOF
		}
		hc := &cursor{r: p.f.r, size: p.f.size, order: p.f.Order, off: p.zoff}
		zs, us := hc.u32(), hc.u32()
		if hc.err == nil && (us > maxChunk || uint64(zs) > uint64(p.f.size-hc.off)) {
			hc.err = fmt.Errorf("chunk %d: %d/%d bytes", p.chunk, zs, us)
		}
		z := hc.blob(uint64(zs))
		if hc.err != nil {
			p.Truncated = true
			return nil, io.EOF
		}
		out, err := p.f.dec(z, int(us))
		if err != nil {
			p.Truncated = true
			return nil, io.EOF
		}
		p.zoff = hc.off
		p.chunk++
		p.cur = out
	}
	n := ps
	if n > len(p.cur) {
		n = len(p.cur)
	}
	pg := p.cur[:n]
	p.cur = p.cur[n:]
	return pg, nil
}
