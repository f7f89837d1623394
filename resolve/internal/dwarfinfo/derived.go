package dwarfinfo

import (
	"sync"
	"syscall"
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
// a build-id) or a copy whose trailer matches.
func (f *File) LoadDerived(name string) (data []byte, ok bool) {
	if f.cache == nil {
		return nil, false
	}
	fd, size, err := f.cache.Section(f.key, name)
	if err != nil {
		return nil, false
	}
	defer fd.Close()
	if size == 0 {
		return []byte{}, true
	}
	mm, err := syscall.Mmap(int(fd.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
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
	if _, err := w.File().Write(data); err != nil {
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
