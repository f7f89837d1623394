package dwarfinfo

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"

	"github.com/gprobe/gprobe/resolve/dwarfindex"
)

// Compressed debug sections are inflated once, front to back, by a
// goroutine started when a section is first asked for; readers wait only
// until the bytes they need are out, so a scan of .debug_info runs while
// the rest of it is still being inflated. The inflated bytes go to a file
// (the index cache's copy of the section, published when complete, or an
// unlinked temporary file) that is read with pread and mapped read-only:
// the only copy is in the page cache, not in this process, and the next
// run maps the cached copy instead of inflating again. The compressed
// stream is read with pread too, so its pages do not stay resident.
//
// A cached copy's bytes are checked against its checksums before they
// are first used, a chunk at a time (dwarfindex.SectionCopy.Verify), so a
// run pays for what it reads. A chunk that does not match makes the
// section be inflated again, into a new copy that replaces the damaged
// one: readers get the fresh bytes from then on, and what they were given
// before was checked already, so every answer is the answer of a run
// without the cache.

// compressedSection is a compressed debug section: SHF_COMPRESSED (an ELF
// compression header, zlib or zstd) or a GNU .zdebug_ section ("ZLIB",
// the inflated size as a big-endian uint64, a zlib stream).
type compressedSection struct {
	kind   elf.CompressionType
	off, n uint64 // the compressed stream in the file
	size   uint64 // inflated size
}

// maxInflated bounds a compressed section's claimed size: beyond it the
// header is taken as damaged rather than trusted with a file of that size.
const maxInflated = 1 << 36

// parseCompressed reads the header of compressed section s.
func (f *File) parseCompressed(s *elf.Section) (*compressedSection, error) {
	if s.Offset+s.FileSize > uint64(len(f.mm)) || s.Offset+s.FileSize < s.Offset {
		return nil, fmt.Errorf("%s: %w: section %s runs past the end of the file", f.Path, ErrBadDWARF, s.Name)
	}
	raw := f.mm[s.Offset : s.Offset+s.FileSize]
	c := &compressedSection{}
	var hdr int
	if s.Flags&elf.SHF_COMPRESSED == 0 {
		// .zdebug_*
		if len(raw) < 12 || string(raw[:4]) != "ZLIB" {
			return nil, fmt.Errorf("%s: %w: section %s has no ZLIB header", f.Path, ErrBadDWARF, s.Name)
		}
		c.kind, c.size, hdr = elf.COMPRESS_ZLIB, uint64(raw[4])<<56|uint64(raw[5])<<48|uint64(raw[6])<<40|uint64(raw[7])<<32|
			uint64(raw[8])<<24|uint64(raw[9])<<16|uint64(raw[10])<<8|uint64(raw[11]), 12
	} else if f.ELF.Class == elf.ELFCLASS64 {
		if len(raw) < 24 {
			return nil, fmt.Errorf("%s: %w: section %s has a truncated compression header", f.Path, ErrBadDWARF, s.Name)
		}
		c.kind, c.size, hdr = elf.CompressionType(f.Order.Uint32(raw)), f.Order.Uint64(raw[8:]), 24
	} else {
		if len(raw) < 12 {
			return nil, fmt.Errorf("%s: %w: section %s has a truncated compression header", f.Path, ErrBadDWARF, s.Name)
		}
		c.kind, c.size, hdr = elf.CompressionType(f.Order.Uint32(raw)), uint64(f.Order.Uint32(raw[4:])), 12
	}
	if c.kind != elf.COMPRESS_ZLIB && c.kind != elf.COMPRESS_ZSTD {
		return nil, fmt.Errorf("%s: %w: section %s is compressed with unknown method %d", f.Path, ErrBadDWARF, s.Name, c.kind)
	}
	if c.size > maxInflated {
		return nil, fmt.Errorf("%s: %w: section %s claims %d inflated bytes", f.Path, ErrBadDWARF, s.Name, c.size)
	}
	c.off, c.n = s.Offset+uint64(hdr), uint64(len(raw)-hdr)
	return c, nil
}

// scratchMin is the size below which a section inflated without a cache
// stays in memory: a scratch file costs more than it saves. (A variable
// for the tests.)
var scratchMin uint64 = 1 << 20

// inflation is one compressed section being (or done being) inflated.
type inflation struct {
	size uint64
	mm   []byte   // the inflated bytes; only [0, have) may be read
	fd   *os.File // where they are, for pread; nil when they are in memory
	mmap bool     // mm is a mapping of fd

	// copy is the cache's copy mm maps, whose chunks are verified before
	// they are used; restart inflates the section afresh when one does
	// not match, into fresh, which then serves every read.
	copy    *dwarfindex.SectionCopy
	restart func(cause error) *inflation
	fresh   *inflation

	mu   sync.Mutex
	cond sync.Cond
	have uint64
	err  error

	stop atomic.Bool               // abandon (Close before the end)
	keep bool                      // a cache copy: finish it even at Close
	w    *dwarfindex.SectionWriter // the cache copy being written
	done chan struct{}             // closed when the inflating goroutine returns
}

var errStopped = errors.New("inflation stopped")

// wait blocks until the first end bytes are inflated, or inflating failed.
func (in *inflation) wait(end uint64) error {
	if end > in.size {
		return fmt.Errorf("%w: range past the end of an inflated section", ErrBadDWARF)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	for in.have < end && in.err == nil {
		in.cond.Wait()
	}
	if in.have >= end {
		return nil
	}
	return in.err
}

func (in *inflation) publish(have uint64, err error) {
	in.mu.Lock()
	in.have, in.err = have, err
	in.cond.Broadcast()
	in.mu.Unlock()
}

// ready returns the inflation holding [start, end) of the section, once
// those bytes are there and, read from the cache, verified: in itself, or
// the fresh inflation that replaced a damaged copy.
func (in *inflation) ready(start, end uint64) (*inflation, error) {
	if start > end || end > in.size {
		return nil, fmt.Errorf("%w: range past the end of an inflated section", ErrBadDWARF)
	}
	in.mu.Lock()
	fresh := in.fresh
	in.mu.Unlock()
	if fresh != nil {
		return fresh.ready(start, end)
	}
	if in.copy != nil {
		if err := in.copy.Verify(start, end); err != nil {
			return in.replace(err).ready(start, end)
		}
		return in, nil
	}
	return in, in.wait(end)
}

// replace starts, once, the inflation that replaces a damaged cache copy.
func (in *inflation) replace(cause error) *inflation {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.fresh == nil {
		in.fresh = in.restart(cause)
	}
	return in.fresh
}

// bytes returns [start, end) of the inflated section, without copying
// (valid until close).
func (in *inflation) bytes(start, end uint64) ([]byte, error) {
	src, err := in.ready(start, end)
	if err != nil {
		return nil, err
	}
	return src.mm[start:end:end], nil
}

// read copies [start, end) of the inflated section into dst (grown as
// needed), once it is there.
func (in *inflation) read(start, end uint64, dst []byte) ([]byte, error) {
	src, err := in.ready(start, end)
	if err != nil {
		return nil, err
	}
	n := int(end - start)
	if cap(dst) < n || dst == nil {
		dst = make([]byte, n, n+n/4)
	}
	dst = dst[:n]
	if src.fd == nil {
		copy(dst, src.mm[start:end])
		return dst, nil
	}
	_, err = src.fd.ReadAt(dst, int64(start))
	return dst, err
}

// inflation returns the inflation of compressed section name (c), starting
// it on first use. With a cache, the first use of .debug_info starts every
// other compressed section too: a question that reads DWARF reads most of
// them, the cache keeps them all for the next run, and they inflate in
// parallel with .debug_info, the largest, instead of after it.
func (f *File) inflation(name string, c *compressedSection) *inflation {
	f.infMu.Lock()
	defer f.infMu.Unlock()
	if in := f.inflations[name]; in != nil {
		return in
	}
	if f.inflations == nil {
		f.inflations = map[string]*inflation{}
	}
	in := f.startInflation(name, c)
	f.inflations[name] = in
	if name == ".debug_info" && f.cache != nil && f.rel == nil {
		for other, oc := range f.compressed {
			if f.inflations[other] == nil {
				f.inflations[other] = f.startInflation(other, oc)
			}
		}
	}
	return in
}

func (f *File) startInflation(name string, c *compressedSection) *inflation {
	return f.newInflation(name, c, true)
}

// newInflation starts inflating section name; fromCache: map the cache's
// copy when it has a sound one.
func (f *File) newInflation(name string, c *compressedSection, fromCache bool) *inflation {
	in := &inflation{size: c.size, done: make(chan struct{})}
	in.cond.L = &in.mu
	if c.size == 0 {
		close(in.done)
		return in
	}
	var w *dwarfindex.SectionWriter
	if f.cache != nil {
		if fromCache {
			sc, err := f.cache.Section(f.key, name)
			switch {
			case err == nil && sc.Size() == c.size:
				if mm, merr := syscall.Mmap(int(sc.File().Fd()), 0, int(c.size), syscall.PROT_READ, syscall.MAP_SHARED); merr == nil {
					_ = syscall.Madvise(mm, syscall.MADV_RANDOM)
					in.fd, in.mm, in.mmap, in.have, in.copy = sc.File(), mm, true, c.size, sc
					in.restart = func(cause error) *inflation {
						f.warn(fmt.Sprintf("gprobe: %v; inflating %s of %s again", cause, name, f.Path))
						f.cache.RemoveSection(f.key, name)
						return f.newInflation(name, c, false)
					}
					if name == ".debug_info" {
						close(in.done)
						return in
					}
					// The other sections are mostly read whole: their
					// checking starts now, beside the run's work.
					go func() {
						defer close(in.done)
						_ = sc.VerifyAll(in.stop.Load)
					}()
					return in
				}
				sc.Close()
			case err == nil:
				sc.Close()
				f.warn(fmt.Sprintf("gprobe: the cached copy of %s of %s has the wrong size; inflating it again", name, f.Path))
			case errors.Is(err, dwarfindex.ErrDamaged):
				f.warn(fmt.Sprintf("gprobe: %v; inflating %s of %s again", err, name, f.Path))
			}
		}
		if w, _ = f.cache.NewSection(f.key, name); w != nil {
			in.fd, in.keep, in.w = w.File(), true, w
		}
	}
	if in.fd == nil && c.size > scratchMin {
		// No cache: an unlinked scratch file keeps the bytes out of
		// this process's memory all the same.
		if fd, err := os.CreateTemp("", "gprobe-inflate-*"); err == nil {
			os.Remove(fd.Name())
			in.fd = fd
		}
	}
	if in.fd != nil {
		mm, err := func() ([]byte, error) {
			if err := in.fd.Truncate(int64(c.size)); err != nil {
				return nil, err
			}
			return syscall.Mmap(int(in.fd.Fd()), 0, int(c.size), syscall.PROT_READ, syscall.MAP_SHARED)
		}()
		if err == nil {
			_ = syscall.Madvise(mm, syscall.MADV_RANDOM)
			in.mm, in.mmap = mm, true
		} else {
			if w != nil {
				w.Abort()
			}
			in.fd.Close()
			in.fd, in.keep, in.w, w = nil, false, nil, nil
		}
	}
	if in.mm == nil {
		in.mm = make([]byte, c.size)
	}
	go func() {
		defer close(in.done)
		err := f.inflate(in, c)
		if err == nil && w != nil {
			if w.Commit(c.size) != nil {
				// Not kept: the next run inflates again.
			}
		} else if w != nil {
			w.Abort()
		}
		if err != nil {
			if !errors.Is(err, errStopped) {
				err = fmt.Errorf("%s: %w: inflating %s: %v", f.Path, ErrBadDWARF, name, err)
			}
			in.publish(in.have, err)
		}
	}()
	return in
}

// inflate runs the decompressor over c's stream into in, publishing
// progress a chunk at a time.
func (f *File) inflate(in *inflation, c *compressedSection) error {
	src := bufio.NewReaderSize(io.NewSectionReader(f.fd, int64(c.off), int64(c.n)), 256<<10)
	var r io.Reader
	switch c.kind {
	case elf.COMPRESS_ZLIB:
		zr, err := zlib.NewReader(src)
		if err != nil {
			return err
		}
		defer zr.Close()
		r = zr
	case elf.COMPRESS_ZSTD:
		zr, err := zstd.NewReader(src, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(c.size+1<<20))
		if err != nil {
			return err
		}
		defer zr.Close()
		r = zr
	}
	const chunk = 1 << 20
	var buf []byte
	if in.fd != nil {
		buf = make([]byte, min(chunk, c.size))
	}
	var have uint64
	for have < c.size {
		if in.stop.Load() && !in.keep {
			return errStopped
		}
		n := min(chunk, c.size-have)
		var dst []byte
		if in.fd == nil {
			dst = in.mm[have : have+n : have+n]
		} else {
			dst = buf[:n:n]
		}
		if _, err := io.ReadFull(r, dst); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("stream ends before %d bytes", c.size)
			}
			return err
		}
		switch {
		case in.w != nil:
			if _, err := in.w.Write(dst); err != nil {
				return err
			}
		case in.fd != nil:
			if _, err := in.fd.WriteAt(dst, int64(have)); err != nil {
				return err
			}
		}
		have += n
		in.publish(have, nil)
	}
	// The stream must end here (a zlib reader checks its checksum now).
	var one [1]byte
	if n, err := r.Read(one[:]); n != 0 || !errors.Is(err, io.EOF) {
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		return fmt.Errorf("stream is longer than %d bytes", c.size)
	}
	return nil
}

// close ends the inflation (letting a cache copy finish, so that it is
// kept) and releases its memory.
func (in *inflation) close() {
	if in.fresh != nil {
		in.fresh.close()
	}
	in.stop.Store(true)
	<-in.done
	if in.mmap {
		syscall.Munmap(in.mm)
	}
	in.mm = nil
	if in.fd != nil {
		in.fd.Close()
	}
}
