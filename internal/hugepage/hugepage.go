// Package hugepage spares memory that will be filled its page faults (on
// virtual machines a fault costs tens of microseconds): Slice allocates
// memory the kernel backs with transparent huge pages, a fault per 2 MiB
// instead of per 4 KiB and far fewer TLB misses; Populate and Ahead have
// base pages backed in one system call before they are filled.
package hugepage

import (
	"runtime"
	"unsafe"
)

// Size is the size of a transparent huge page on x86-64 and arm64 (4 KiB
// base pages).
const Size = 2 << 20

// Slice returns n zeroed Ts. Slices of a huge page or more are aligned to
// huge pages and the kernel is asked to back them with huge pages (when
// its setting is "always" or "madvise"). The slack before the aligned
// start is never touched, so it costs address space, not memory. Use it
// for memory that will be filled: the first touch of a huge page zeroes
// all of it.
func Slice[T any](n int) []T {
	size := unsafe.Sizeof(*new(T))
	if uintptr(n)*size < Size || Size%size != 0 {
		return make([]T, n)
	}
	s := make([]T, n+int(Size/size))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	skip := (Size - base%Size) % Size
	if skip%size != 0 {
		return s[:n:n]
	}
	s = s[skip/size : skip/size+uintptr(n) : skip/size+uintptr(n)]
	adviseHuge(unsafe.Pointer(unsafe.SliceData(s)), uintptr(n)*size/Size*Size)
	return s
}

// Populate has the kernel back the pages under s now, in one system call,
// instead of a page fault at the first touch of each. Use it on memory
// about to be filled: a fault costs about 15 us on a virtual machine
// (the guest exits to the hypervisor), populating about 1 us a page.
// Contents are never changed, pages already backed are left alone, and
// the pages at either end may hold other data, so s may be any part of
// any mapping or of Go's heap. Where the kernel cannot (before Linux
// 5.14, or off Linux) the pages are left to their faults.
func Populate[T any](s []T) {
	if len(s) == 0 {
		return
	}
	populate(uintptr(unsafe.Pointer(unsafe.SliceData(s))), uintptr(len(s))*unsafe.Sizeof(s[0]))
	runtime.KeepAlive(s)
}

// Ahead backs s ahead of a fill that has reached s[i], where the elements
// are filled in order from s[0] and *backed counts those already backed.
// When i reaches *backed, the next elements are backed in one call (see
// Populate): as many as are filled already, at least lo and at most hi,
// so that a small fill costs about what it uses and a large one a call
// per hi elements.
func Ahead[T any](s []T, i int, backed *int, lo, hi int) {
	if i != *backed || i >= len(s) {
		return
	}
	n := min(max(i, lo), hi, len(s)-i)
	Populate(s[i : i+n])
	*backed = i + n
}
