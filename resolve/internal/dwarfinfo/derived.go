package dwarfinfo

import (
	"errors"
	"fmt"
	"sync"
	"syscall"

	"github.com/gprobe/gprobe/resolve/dwarfindex"
)

// Derived data is what gprobe computes from an image and keeps for the
// next run in the image's cache directory, beside its index (the sorted
// demangled names of its symbols, for -F): a file per name, written
// atomically, read back mapped. The bytes are the caller's format; the
// cache only ties them to the image (build-id and size) and the name.

// derived holds the mappings LoadDerived made, unmapped by Close.
type derived struct {
	mu   sync.Mutex
	maps [][]byte
}

// LoadDerived returns the bytes kept under name for the image, mapped
// until Close; ok is false without a cache (Options.Cache, an image with
// a build-id) or a copy whose trailer and checksums match (the copy is
// checked whole before it is returned, as a section copy is as it is read;
// a damaged one is removed, so that the next StoreDerived writes it anew).
func (f *File) LoadDerived(name string) (data []byte, ok bool) {
	if f.cache == nil {
		return nil, false
	}
	sc, err := f.cache.Section(f.key, name)
	if err != nil {
		if errors.Is(err, dwarfindex.ErrDamaged) {
			f.warn(fmt.Sprintf("gprobe: %v; computing %s of %s again", err, name, f.Path))
			f.cache.RemoveSection(f.key, name)
		}
		return nil, false
	}
	defer sc.Close()
	if err := sc.VerifyAll(func() bool { return false }); err != nil {
		f.warn(fmt.Sprintf("gprobe: %v; computing %s of %s again", err, name, f.Path))
		f.cache.RemoveSection(f.key, name)
		return nil, false
	}
	size := sc.Size()
	if size == 0 {
		return []byte{}, true
	}
	mm, err := syscall.Mmap(int(sc.File().Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, false
	}
	f.derived.mu.Lock()
	f.derived.maps = append(f.derived.maps, mm)
	f.derived.mu.Unlock()
	return mm, true
}

// StoreDerived keeps data under name for the image (nothing without a
// cache). A failed write only means the next run computes it again.
func (f *File) StoreDerived(name string, data []byte) {
	if f.cache == nil {
		return
	}
	w, err := f.cache.NewSection(f.key, name)
	if err != nil {
		return
	}
	defer w.File().Close()
	if _, err := w.Write(data); err != nil {
		w.Abort()
		return
	}
	_ = w.Commit(uint64(len(data)))
}

// unmapDerived unmaps what LoadDerived mapped.
func (f *File) unmapDerived() {
	f.derived.mu.Lock()
	defer f.derived.mu.Unlock()
	for _, mm := range f.derived.maps {
		_ = syscall.Munmap(mm)
	}
	f.derived.maps = nil
}
