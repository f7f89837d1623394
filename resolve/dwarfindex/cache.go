package dwarfindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gprobe/gprobe/internal/atomicfile"
	"github.com/gprobe/gprobe/internal/safedir"
)

// Cache is a cache directory. Each image has its own directory in it,
// BUILDID/SIZE/, holding "index-vN" (N the format version) and one file
// per inflated section, "debug_info-vN" for .debug_info (N the section
// copies' format version).
//
// A cache another user could change is refused (see internal/safedir):
// the directory, every one above it and the image's directories must be
// owned by the effective user (or root, above) and writable by no one
// else; files are opened without following links, and temporary files
// are locked while written, so that those of killed writers are told
// apart and removed.
type Cache struct {
	dir string

	once     sync.Once
	err      error
	reported atomic.Bool
}

// New returns the cache rooted at dir (created when first used).
func New(dir string) *Cache { return &Cache{dir: dir} }

// Dir returns the cache's root directory.
func (c *Cache) Dir() string { return c.dir }

// Check creates the cache directory if needed and reports, once for the
// Cache's life, whether it is safe to use: an error wrapping ErrUnsafe
// names the directory at fault. Every other method fails with it too.
func (c *Cache) Check() error {
	c.once.Do(func() {
		if err := safedir.MkdirAll(c.dir, 0o755); err != nil {
			if errors.Is(err, safedir.ErrUnsafe) {
				err = fmt.Errorf("%w: %v", ErrUnsafe, err)
			}
			c.err = err
		}
	})
	return c.err
}

// Refused returns Check's error, and report true the first time it
// returns one, so that a refusal is reported once however many images
// use the cache.
func (c *Cache) Refused() (report bool, err error) {
	if err := c.Check(); err != nil {
		return c.reported.CompareAndSwap(false, true), err
	}
	return false, nil
}

// imageDir is the directory of image k, checked when it exists.
func (c *Cache) imageDir(k Key) (string, error) {
	if !k.valid() {
		return "", fmt.Errorf("%w: no usable build-id", ErrNotFound)
	}
	if err := c.Check(); err != nil {
		return "", err
	}
	id := filepath.Join(c.dir, k.BuildID)
	d := filepath.Join(id, strconv.FormatInt(k.Size, 10))
	for _, p := range []string{id, d} {
		if err := safedir.CheckEntry(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			if errors.Is(err, safedir.ErrUnsafe) {
				err = fmt.Errorf("%w: %v", ErrUnsafe, err)
			}
			return "", err
		}
	}
	return d, nil
}

// makeImageDir is imageDir, created if needed, with the temporary files
// of killed writers removed from it.
func (c *Cache) makeImageDir(k Key) (string, error) {
	d, err := c.imageDir(k)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", err
	}
	if d, err = c.imageDir(k); err != nil {
		return "", err
	}
	safedir.RemoveStale(d, tmpPrefix)
	return d, nil
}

// tmpPrefix begins the names of files being written.
const tmpPrefix = ".tmp-"

// IndexPath is where the index of image k is kept.
func (c *Cache) IndexPath(k Key) string {
	d, _ := c.imageDir(k)
	return filepath.Join(d, indexFile)
}

// Load reads the index of image k. Returns an error wrapping ErrNotFound
// when there is none, and ErrDamaged when the file cannot be used.
func (c *Cache) Load(k Key) (*Index, error) {
	d, err := c.imageDir(k)
	if err != nil {
		return nil, err
	}
	b, release, err := mapFile(filepath.Join(d, indexFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	if safedir.IsLink(err) {
		return nil, fmt.Errorf("%w: it is a symbolic link", ErrDamaged)
	}
	if err != nil {
		return nil, err
	}
	x, err := Decode(b)
	if err == nil && x.Key != k {
		err = fmt.Errorf("%w: it describes build-id %s, size %d", ErrDamaged, x.Key.BuildID, x.Key.Size)
	}
	if err != nil {
		release()
		return nil, err
	}
	x.release = release
	return x, nil
}

// mapFile maps a file read-only (files are replaced by rename, never
// rewritten in place, so the mapping stays valid).
func mapFile(path string) ([]byte, func(), error) {
	f, err := safedir.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if st.Size() == 0 {
		return nil, func() {}, nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { syscall.Munmap(b) }, nil
}

// Store writes x as image x.Key's index, atomically. Parts x lacks are
// kept from the index on disk, when that one is sound: concurrent runs
// that computed different parts lose nothing but what they computed at
// the very same time.
func (c *Cache) Store(x *Index) error {
	d, err := c.imageDir(x.Key)
	if err != nil {
		return err
	}
	merged := *x
	if old, err := c.Load(x.Key); err == nil {
		defer old.Close()
		if merged.Units == nil {
			merged.Units = old.Units
		}
		if merged.Funcs == nil {
			merged.Funcs = old.Funcs
		}
		if merged.Files == nil {
			merged.Files = old.Files
		}
		if merged.SymOrder == nil {
			merged.SymOrder = old.SymOrder
		}
		if merged.EHFrame == nil {
			merged.EHFrame = old.EHFrame
		}
		if merged.DebugFrame == nil {
			merged.DebugFrame = old.DebugFrame
		}
	}
	if d, err = c.makeImageDir(x.Key); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(d, indexFile), merged.Encode())
}

// A section copy is the section's bytes from offset 0 (so that it can be
// mapped as is), then the checksums of its contents, then a trailer:
//
//	sums   [n]uint32  CRC-32C of each chunkSize bytes of the section (the
//	                  last chunk may be shorter)
//	magic  [8]byte    "gpsec\x00\x00\x02" (the last byte is the version)
//	size   uint64     the section's size (the file is size + 4n + 32 bytes)
//	image  uint64     Key.Size of the image it was inflated from
//	chunk  uint32     chunkSize
//	crc    uint32     CRC-32C of the sums, the trailer's other fields and
//	                  the section's name
//
// The sums are computed as the copy is written; a reader checks the
// trailer when it opens a copy and each chunk's sum the first time it
// reads the chunk (SectionCopy.Verify), so that a run reading a few units
// of a large .debug_info checksums only those.
var secMagic = [8]byte{'g', 'p', 's', 'e', 'c', 0, 0, secVersion}

// secVersion is the section copies' format version, in their magic and
// their file names ("debug_info-v2"), so that other versions are never
// taken for damaged copies.
const secVersion = 2

const (
	trailerSize = 8 + 8 + 8 + 4 + 4
	chunkSize   = 256 << 10
)

func sectionFile(name string) (string, error) {
	base := name
	if len(base) > 0 && base[0] == '.' {
		base = base[1:]
	}
	if base == "" || strings.HasPrefix(base, "index") || base[0] == '.' || filepath.Base(base) != base {
		return "", fmt.Errorf("dwarfindex: bad section name %q", name)
	}
	return fmt.Sprintf("%s-v%d", base, secVersion), nil
}

// tail is the checksums and trailer of a copy of section name of image k.
func tail(k Key, name string, size uint64, sums []uint32) []byte {
	le := binary.LittleEndian
	t := make([]byte, 0, 4*len(sums)+trailerSize)
	for _, s := range sums {
		t = le.AppendUint32(t, s)
	}
	t = append(t, secMagic[:]...)
	t = le.AppendUint64(t, size)
	t = le.AppendUint64(t, uint64(k.Size))
	t = le.AppendUint32(t, chunkSize)
	sum := crc32.Update(crc32.Checksum(t, castagnoli), castagnoli, []byte(name))
	return le.AppendUint32(t, sum)
}

func chunks(size uint64) uint64 { return (size + chunkSize - 1) / chunkSize }

// A copy checked whole is sealed: a file beside it ("debug_str-v2.ok")
// records the boot, the copy's inode, size, modification and change
// times, and the CRC of its checksums. Within one boot the copy's bytes
// change only through the kernel, which then sets its change time (no
// call sets it back): a copy whose seal matches is not checked again.
// After a reboot, which may have lost bytes a crash left unwritten, each
// copy is checked once more. A copy never read whole (.debug_info, in
// most runs) is checked chunk by chunk in every run, as it is read.

// bootID names this boot ("" when unknown: nothing is sealed).
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})

const sealSuffix = ".ok"

// SectionCopy is an open section copy.
type SectionCopy struct {
	f    *os.File
	size uint64
	sums []uint32
	// state[i] is 0 while chunk i is unchecked, 1 once it matched, 2
	// once it did not.
	state []atomic.Uint32
	// unchecked counts the chunks still 0; at 0 the copy is sealed.
	unchecked atomic.Int64
	sealed    atomic.Bool
	seal      string // the seal's path
	stamp     string // what the seal holds when it matches ("": none)
}

// Sealed reports whether the copy was checked whole in this boot, in
// this run or an earlier one.
func (s *SectionCopy) Sealed() bool { return s.sealed.Load() }

// sealAge is how long ago a copy must have last changed to be sealed:
// the kernel stamps change times from a clock that ticks every few
// milliseconds, so a change within the tick of the previous one could
// leave the time as the seal has it. (A variable for the tests.)
var sealAge = time.Second

// stampOf is the seal of open copy f with checksums sums ("" when the
// boot is unknown, or f changed too recently to be sealed).
func stampOf(f *os.File, sums []byte) string {
	st, err := f.Stat()
	if err != nil || bootID() == "" {
		return ""
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || time.Since(time.Unix(sys.Ctim.Unix())) < sealAge {
		return ""
	}
	return fmt.Sprintf("gprobe section seal 1 %s %d %d %d.%09d %d.%09d %08x\n", bootID(), sys.Ino, st.Size(),
		sys.Mtim.Sec, sys.Mtim.Nsec, sys.Ctim.Sec, sys.Ctim.Nsec, crc32.Checksum(sums, castagnoli))
}

// sealIfDone seals the copy once every chunk is checked.
func (s *SectionCopy) sealIfDone() {
	if s.unchecked.Load() != 0 || s.stamp == "" || !s.sealed.CompareAndSwap(false, true) {
		return
	}
	_ = atomicfile.Write(s.seal, []byte(s.stamp))
}

// File is the copy's file; the section's bytes are its first Size()
// bytes.
func (s *SectionCopy) File() *os.File { return s.f }

// Size is the section's size.
func (s *SectionCopy) Size() uint64 { return s.size }

// Close closes the file.
func (s *SectionCopy) Close() error { return s.f.Close() }

var chunkBuf = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// Verify checks the sums of the chunks [start, end) touches, each once
// for the copy's life: it returns an error wrapping ErrDamaged, naming
// the offset, when one does not match. It reads the chunks with pread, so
// that checking does not make them resident in this process.
func (s *SectionCopy) Verify(start, end uint64) error {
	if end > s.size || start > end {
		return fmt.Errorf("%w: range [%#x, %#x) past the end of section copy %s", ErrDamaged, start, end, s.f.Name())
	}
	if start == end || s.sealed.Load() {
		return nil
	}
	first, last := start/chunkSize, (end-1)/chunkSize
	if workers := min(uint64(runtime.GOMAXPROCS(0)), (last-first+1)/parallelChunks); workers > 1 {
		// A large range (a whole section) is checked on every CPU.
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := first + w; i <= last && errs[w] == nil; i += workers {
					errs[w] = s.verify(i)
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	for i := first; i <= last; i++ {
		if err := s.verify(i); err != nil {
			return err
		}
	}
	return nil
}

// parallelChunks is the number of chunks per worker above which Verify
// checks in parallel.
const parallelChunks = 8

// verify checks chunk i, once.
func (s *SectionCopy) verify(i uint64) error {
	switch s.state[i].Load() {
	case 1:
		return nil
	case 2:
		return s.damaged(i)
	}
	off := i * chunkSize
	n := min(chunkSize, s.size-off)
	bp := chunkBuf.Get().(*[]byte)
	b := (*bp)[:n]
	_, err := s.f.ReadAt(b, int64(off))
	ok := err == nil && crc32.Checksum(b, castagnoli) == s.sums[i]
	chunkBuf.Put(bp)
	if err != nil {
		return fmt.Errorf("section copy %s: %w", s.f.Name(), err)
	}
	if !ok {
		s.state[i].Store(2)
		return s.damaged(i)
	}
	if s.state[i].CompareAndSwap(0, 1) && s.unchecked.Add(-1) == 0 {
		s.sealIfDone()
	}
	return nil
}

// VerifyAll checks every chunk not checked yet, in order, until stop
// returns true; it returns the first mismatch (or nil).
func (s *SectionCopy) VerifyAll(stop func() bool) error {
	if s.sealed.Load() {
		return nil
	}
	for i := range uint64(len(s.sums)) {
		if stop() {
			return nil
		}
		if err := s.verify(i); err != nil {
			return err
		}
	}
	return nil
}

func (s *SectionCopy) damaged(i uint64) error {
	return fmt.Errorf("%w: section copy %s does not match its checksum at offset %#x", ErrDamaged, s.f.Name(), i*chunkSize)
}

// Section opens the inflated copy of section name of image k. Returns an
// error wrapping ErrNotFound when there is none and ErrDamaged when its
// trailer or checksums do not match; its contents are checked as they are
// read (SectionCopy.Verify).
func (c *Cache) Section(k Key, name string) (*SectionCopy, error) {
	d, err := c.imageDir(k)
	if err != nil {
		return nil, err
	}
	base, err := sectionFile(name)
	if err != nil {
		return nil, err
	}
	f, err := safedir.Open(filepath.Join(d, base))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	if safedir.IsLink(err) {
		return nil, fmt.Errorf("%w: section copy %s is a symbolic link", ErrDamaged, filepath.Join(d, base))
	}
	if err != nil {
		return nil, err
	}
	fail := func(format string, args ...any) (*SectionCopy, error) {
		f.Close()
		return nil, fmt.Errorf("%w: section copy %s "+format, append([]any{ErrDamaged, f.Name()}, args...)...)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < trailerSize {
		return fail("is truncated")
	}
	t := make([]byte, trailerSize)
	if _, err := f.ReadAt(t, st.Size()-trailerSize); err != nil {
		return fail("is unreadable: %v", err)
	}
	le := binary.LittleEndian
	size := le.Uint64(t[8:])
	n := chunks(size)
	if !bytes.Equal(t[:8], secMagic[:]) || size > uint64(st.Size()) || uint64(st.Size())-size != 4*n+trailerSize {
		return fail("does not match")
	}
	sums := make([]byte, 4*n)
	if _, err := f.ReadAt(sums, int64(size)); err != nil {
		return fail("is unreadable: %v", err)
	}
	sc := &SectionCopy{f: f, size: size, sums: make([]uint32, n), state: make([]atomic.Uint32, n),
		seal: filepath.Join(d, base+sealSuffix), stamp: stampOf(f, sums)}
	sc.unchecked.Store(int64(n))
	for i := range sc.sums {
		sc.sums[i] = le.Uint32(sums[4*i:])
	}
	if !bytes.Equal(append(sums, t...), tail(k, name, size, sc.sums)) {
		return fail("does not match")
	}
	if sc.stamp != "" {
		if sf, err := safedir.Open(sc.seal); err == nil {
			b := make([]byte, len(sc.stamp)+1)
			n, _ := sf.ReadAt(b, 0)
			sf.Close()
			sc.sealed.Store(string(b[:n]) == sc.stamp)
		}
	}
	return sc, nil
}

// SectionWriter writes a section copy under a temporary name until
// Commit, checksumming what it is given.
type SectionWriter struct {
	k    Key
	name string
	path string
	f    *os.File
	off  uint64
	sums []uint32
	cur  uint32
}

// NewSection starts a copy of section name of image k.
func (c *Cache) NewSection(k Key, name string) (*SectionWriter, error) {
	d, err := c.makeImageDir(k)
	if err != nil {
		return nil, err
	}
	base, err := sectionFile(name)
	if err != nil {
		return nil, err
	}
	// The copy of gprobe versions before the checksums.
	os.Remove(filepath.Join(d, strings.TrimSuffix(base, fmt.Sprintf("-v%d", secVersion))))
	f, err := safedir.CreateTemp(d, tmpPrefix+base+"-")
	if err != nil {
		return nil, err
	}
	return &SectionWriter{k: k, name: name, path: filepath.Join(d, base), f: f}, nil
}

// File is the file the section's bytes go to, from offset 0 (to map
// them); they are written with Write. It stays open after Commit and
// Abort; the caller closes it.
func (w *SectionWriter) File() *os.File { return w.f }

// Write appends p to the section's bytes.
func (w *SectionWriter) Write(p []byte) (int, error) {
	n, err := w.f.WriteAt(p, int64(w.off))
	for q := p[:n]; len(q) > 0; {
		take := min(uint64(len(q)), chunkSize-w.off%chunkSize)
		w.cur = crc32.Update(w.cur, castagnoli, q[:take])
		w.off += take
		q = q[take:]
		if w.off%chunkSize == 0 {
			w.sums = append(w.sums, w.cur)
			w.cur = 0
		}
	}
	return n, err
}

// Commit appends the checksums and the trailer for a section of size
// bytes (all written) and gives the copy its name.
func (w *SectionWriter) Commit(size uint64) error {
	if w.off != size {
		w.Abort()
		return fmt.Errorf("dwarfindex: section copy of %s: %d bytes written, want %d", w.name, w.off, size)
	}
	sums := w.sums
	if size%chunkSize != 0 {
		sums = append(sums, w.cur)
	}
	if _, err := w.f.WriteAt(tail(w.k, w.name, size, sums), int64(size)); err != nil {
		w.Abort()
		return err
	}
	if err := os.Rename(w.f.Name(), w.path); err != nil {
		w.Abort()
		return err
	}
	return nil
}

// Abort removes the unfinished copy.
func (w *SectionWriter) Abort() { os.Remove(w.f.Name()) }

// RemoveSection removes the copy of section name of image k (found
// damaged while read).
func (c *Cache) RemoveSection(k Key, name string) {
	d, err := c.imageDir(k)
	if err != nil {
		return
	}
	if base, err := sectionFile(name); err == nil {
		os.Remove(filepath.Join(d, base))
		os.Remove(filepath.Join(d, base+sealSuffix))
	}
}
