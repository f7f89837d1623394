package refcount

import "unsafe"

// hugePage is the size of a transparent huge page on x86-64 and arm64
// (4 KiB base pages).
const hugePage = 2 << 20

// hugeSlice returns n zeroed Ts. Slices of a huge page or more are
// aligned to huge pages and the kernel is asked to back them with huge
// pages: the objects of a large recording then cost a page fault per
// 2 MiB instead of per 4 KiB (on virtual machines a fault costs tens of
// microseconds) and far fewer TLB misses. The slack before the aligned
// start is never touched, so it costs address space, not memory.
func hugeSlice[T any](n int) []T {
	size := unsafe.Sizeof(*new(T))
	if uintptr(n)*size < hugePage || hugePage%size != 0 {
		return make([]T, n)
	}
	s := make([]T, n+int(hugePage/size))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	skip := (hugePage - base%hugePage) % hugePage
	if skip%size != 0 {
		return s[:n:n]
	}
	s = s[skip/size : skip/size+uintptr(n) : skip/size+uintptr(n)]
	adviseHuge(unsafe.Pointer(unsafe.SliceData(s)), uintptr(n)*size/hugePage*hugePage)
	return s
}
