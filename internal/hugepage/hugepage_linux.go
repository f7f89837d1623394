package hugepage

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHuge asks for transparent huge pages (honoured when the system's
// setting is "always" or "madvise"); a refusal only costs speed.
func adviseHuge(p unsafe.Pointer, n uintptr) {
	_ = unix.Madvise(unsafe.Slice((*byte)(p), n), unix.MADV_HUGEPAGE)
}

// pageSize is the base page size: madvise wants page-aligned ranges.
var pageSize = uintptr(unix.Getpagesize())

// populate backs the pages covering [p, p+n) (MADV_POPULATE_WRITE). The
// addresses stay integers: the page-aligned start may fall outside the
// Go object p points into.
func populate(p, n uintptr) {
	start := p &^ (pageSize - 1)
	end := (p + n + pageSize - 1) &^ (pageSize - 1)
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_POPULATE_WRITE)
}
