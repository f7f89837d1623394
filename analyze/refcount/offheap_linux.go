package refcount

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gprobe/gprobe/internal/hugepage"
)

// chunkMemory holds the objects' chunks outside Go's heap: anonymous
// mappings the kernel backs page by page as they are first touched, so a
// chunk costs what its used slots cover (Go would zero a reused span,
// touching all of it, and count the whole chunk toward the next
// collection). Objects hold no pointers, so the collector need not see
// them. The mappings go when the store is unreachable.
type chunkMemory struct {
	maps *[][]byte
}

func newChunkMemory() *chunkMemory {
	m := &chunkMemory{maps: new([][]byte)}
	runtime.AddCleanup(m, func(maps *[][]byte) {
		for _, b := range *maps {
			unix.Munmap(b)
		}
	}, m.maps)
	return m
}

// objects returns n zeroed objects; huge asks for transparent huge pages
// (one fault per 2 MiB, for chunks that will fill).
func (m *chunkMemory) objects(n int, huge bool) []obj { return mapped[obj](m, n, huge) }

// mapped returns n zeroed Ts, which must hold no pointers, in a mapping
// of m.
func mapped[T any](m *chunkMemory, n int, huge bool) []T {
	size := n * int(unsafe.Sizeof(*new(T)))
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return hugepage.Slice[T](n) // on Go's heap after all
	}
	*m.maps = append(*m.maps, b)
	switch {
	case huge:
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	case size > 2*hugepage.Size:
		// Small uses stay in the first huge page's worth of base pages;
		// what a large one fills beyond comes a fault per 2 MiB.
		_ = unix.Madvise(b[hugepage.Size:], unix.MADV_HUGEPAGE)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// releases returns a quarantine ring's room for n entries.
func (m *chunkMemory) releases(n int) []released { return mapped[released](m, n, false) }

// entries returns an index table of n zeroed entries, backed now: a
// rehash touches every page of it.
func (m *chunkMemory) entries(n int) []entry {
	e := mapped[entry](m, n, n*int(unsafe.Sizeof(entry{})) >= hugepage.Size)
	hugepage.Populate(e)
	return e
}

// drop unmaps a table that entries returned, once it is no longer used.
func (m *chunkMemory) drop(e []entry) {
	p := unsafe.Pointer(unsafe.SliceData(e))
	for i, b := range *m.maps {
		if unsafe.Pointer(unsafe.SliceData(b)) == p {
			unix.Munmap(b)
			*m.maps = append((*m.maps)[:i], (*m.maps)[i+1:]...)
			return
		}
	}
}

// tables counts the mappings held (for tests).
func (m *chunkMemory) tables() int { return len(*m.maps) }
