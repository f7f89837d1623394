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
	"strconv"
	"strings"
	"syscall"

	"github.com/gprobe/gprobe/internal/atomicfile"
)

// Cache is a cache directory. Each image has its own directory in it,
// BUILDID/SIZE/, holding "index-vN" (N the format version) and one file per inflated section
// (".debug_info" is "debug_info").
type Cache struct {
	dir string
}

// New returns the cache rooted at dir (created when first written).
func New(dir string) *Cache { return &Cache{dir: dir} }

// Dir returns the cache's root directory.
func (c *Cache) Dir() string { return c.dir }

func (c *Cache) imageDir(k Key) (string, error) {
	if !k.valid() {
		return "", fmt.Errorf("%w: no usable build-id", ErrNotFound)
	}
	return filepath.Join(c.dir, k.BuildID, strconv.FormatInt(k.Size, 10)), nil
}

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
	f, err := os.Open(path)
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
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(d, indexFile), merged.Encode())
}

// A section copy is the section's bytes from offset 0 (so that it can be
// mapped as is), then a trailer:
//
//	magic  [8]byte "gpsec\x00\x00\x01"
//	size   uint64  the section's size (the file is size + trailer bytes)
//	image  uint64  Key.Size of the image it was inflated from
//	crc    uint32  CRC-32C of the trailer's other fields and the name
var secMagic = [8]byte{'g', 'p', 's', 'e', 'c', 0, 0, 1}

const trailerSize = 8 + 8 + 8 + 4

func sectionFile(name string) (string, error) {
	base := name
	if len(base) > 0 && base[0] == '.' {
		base = base[1:]
	}
	if base == "" || strings.HasPrefix(base, "index") || base[0] == '.' || filepath.Base(base) != base {
		return "", fmt.Errorf("dwarfindex: bad section name %q", name)
	}
	return base, nil
}

func trailer(k Key, name string, size uint64) []byte {
	le := binary.LittleEndian
	t := append([]byte{}, secMagic[:]...)
	t = le.AppendUint64(t, size)
	t = le.AppendUint64(t, uint64(k.Size))
	sum := crc32.Update(crc32.Checksum(t, castagnoli), castagnoli, []byte(name))
	return le.AppendUint32(t, sum)
}

// Section opens the inflated copy of section name of image k and returns
// it with the section's size; its bytes are the file's first size bytes.
// Returns an error wrapping ErrNotFound when there is none and ErrDamaged
// when its trailer does not match.
func (c *Cache) Section(k Key, name string) (*os.File, uint64, error) {
	d, err := c.imageDir(k)
	if err != nil {
		return nil, 0, err
	}
	base, err := sectionFile(name)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(filepath.Join(d, base))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil || st.Size() < trailerSize {
		f.Close()
		return nil, 0, fmt.Errorf("%w: section copy %s is truncated", ErrDamaged, f.Name())
	}
	t := make([]byte, trailerSize)
	size := uint64(st.Size() - trailerSize)
	if _, err := f.ReadAt(t, int64(size)); err != nil || !bytes.Equal(t, trailer(k, name, size)) {
		f.Close()
		return nil, 0, fmt.Errorf("%w: section copy %s does not match", ErrDamaged, f.Name())
	}
	return f, size, nil
}

// SectionWriter writes a section copy under a temporary name until Commit.
type SectionWriter struct {
	k    Key
	name string
	path string
	f    *os.File
}

// NewSection starts a copy of section name of image k.
func (c *Cache) NewSection(k Key, name string) (*SectionWriter, error) {
	d, err := c.imageDir(k)
	if err != nil {
		return nil, err
	}
	base, err := sectionFile(name)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(d, ".tmp-"+base+"-*")
	if err != nil {
		return nil, err
	}
	return &SectionWriter{k: k, name: name, path: filepath.Join(d, base), f: f}, nil
}

// File is the file the section's bytes go to, from offset 0. It stays
// open after Commit and Abort; the caller closes it.
func (w *SectionWriter) File() *os.File { return w.f }

// Commit appends the trailer for a section of size bytes and gives the
// copy its name.
func (w *SectionWriter) Commit(size uint64) error {
	if _, err := w.f.WriteAt(trailer(w.k, w.name, size), int64(size)); err != nil {
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
