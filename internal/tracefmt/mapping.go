package tracefmt

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"unsafe"
)

// ErrFileChanged: the mapped file shrank while it was being read.
var ErrFileChanged = errors.New("the file shrank while it was read")

// Mapping is a file mapped into memory for reading. A File opened over a
// Mapping reads its metadata (headers, event formats, command lines) in
// place, without copying it: what it keeps aliases the mapping, which
// stays valid until Close. On the machines gprobe runs on, touching
// fresh memory (a page fault per 4 KiB, tens of microseconds in a
// virtual machine) costs more than parsing what is in it, and mapped file
// pages come sixteen to a fault. The event pages are read with system
// calls into reused buffers (ReadAt).
//
// Reading a page of a file that was truncated after it was mapped raises
// SIGBUS: code touching the mapping runs with debug.SetPanicOnFault and
// turns the fault into ErrFileChanged with Recover.
type Mapping struct {
	data []byte
	file *os.File
}

// Map maps size bytes of f. A file that cannot be mapped (empty, or not a
// regular file) gives an error; read it through f instead.
func Map(f *os.File, size int64) (*Mapping, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("mapping %d bytes: %w", size, errors.ErrUnsupported)
	}
	data, err := mmap(f, int(size))
	if err != nil {
		return nil, err
	}
	return &Mapping{data: data, file: f}, nil
}

// ReadAt reads the file with a system call, not through the mapping:
// the bulk of a recording (its pages, or their compressed chunks) is
// read once into buffers that are reused, which costs less than mapping
// it in (a fault per sixteen pages, and giving them back for memory to
// stay bounded).
func (m *Mapping) ReadAt(p []byte, off int64) (int, error) {
	if m.file == nil {
		if off < 0 || off > int64(len(m.data)) {
			return 0, io.EOF
		}
		n := copy(p, m.data[off:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	return m.file.ReadAt(p, off)
}

// InMemory is a Mapping of data already in memory: a File opened over it
// reads data in place, as it reads a mapped file. Close does nothing.
func InMemory(data []byte) *Mapping { return &Mapping{data: data} }

// Close unmaps the file: nothing read through the mapping may be used
// after it.
func (m *Mapping) Close() error {
	if m.data == nil || m.file == nil {
		return nil
	}
	err := munmap(m.data)
	m.data = nil
	return err
}

// Recover, deferred in a goroutine that reads the mapping with
// debug.SetPanicOnFault(true), turns a fault inside the mapping (its file
// shrank) into ErrFileChanged in *err; other panics go on.
func (m *Mapping) Recover(err *error) {
	if r := recover(); r != nil {
		*err = fault(r, m.data)
	}
}

// Recover is Mapping.Recover for the mapping f was opened over (any
// panic goes on when there is none).
func (f *File) Recover(err *error) {
	if r := recover(); r != nil {
		*err = fault(r, f.data)
	}
}

// Fault returns the error of a recovered panic r that is a fault inside
// the mapping f was opened over, and panics again with r otherwise.
func (f *File) Fault(r any) error { return fault(r, f.data) }

func fault(r any, data []byte) error {
	if re, ok := r.(runtime.Error); ok && len(data) > 0 {
		if a, ok := re.(interface{ Addr() uintptr }); ok {
			start := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
			if addr := a.Addr(); addr >= start && addr-start < uintptr(len(data)) {
				return fmt.Errorf("%w (a fault at offset %d)", ErrFileChanged, addr-start)
			}
		}
	}
	panic(r)
}
