package hugepage

import (
	"errors"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident reports which pages of b are backed (mincore).
func resident(t *testing.T, b []byte) []bool {
	t.Helper()
	vec := make([]byte, (len(b)+pageSizeInt()-1)/pageSizeInt())
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	out := make([]bool, len(vec))
	for i, v := range vec {
		out[i] = v&1 != 0
	}
	return out
}

func pageSizeInt() int { return int(pageSize) }

// TestPopulate: the pages under the slice, and only those, become
// resident, and what they held is unchanged.
func TestPopulate(t *testing.T) {
	ps := pageSizeInt()
	b, err := unix.Mmap(-1, 0, 64*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	_ = unix.Madvise(b, unix.MADV_NOHUGEPAGE) // page by page, whatever the system's setting
	if err := unix.Madvise(b[:ps], unix.MADV_POPULATE_WRITE); errors.Is(err, unix.EINVAL) {
		t.Skip("kernel without MADV_POPULATE_WRITE (before 5.14)")
	}
	b[ps-1] = 0x5a // page 0 is resident now
	b[10*ps+7] = 0xa5
	// Pages 9 to 20: the slice starts and ends inside pages.
	Populate(b[9*ps+100 : 20*ps+1])
	got := resident(t, b)
	for i, r := range got {
		want := i == 0 || (i >= 9 && i <= 20)
		if r != want {
			t.Errorf("page %d resident %v, want %v", i, r, want)
		}
	}
	if b[ps-1] != 0x5a || b[10*ps+7] != 0xa5 || b[9*ps] != 0 || b[20*ps] != 0 {
		t.Errorf("contents changed: %#x %#x %#x %#x", b[ps-1], b[10*ps+7], b[9*ps], b[20*ps])
	}
	Populate([]uint64(nil)) // no pages, no call
}

// TestPopulateHeap: a part of a Go slice, its ends inside pages shared
// with other data, keeps every byte.
func TestPopulateHeap(t *testing.T) {
	s := make([]uint32, 100000)
	for i := range s {
		s[i] = uint32(i)
	}
	Populate(s[3:99999])
	for i := range s {
		if s[i] != uint32(i) {
			t.Fatalf("s[%d] = %d", i, s[i])
		}
	}
}

// TestAhead: a fill in order is backed ahead in growing windows, never
// more than what is filled plus the larger of lo and what is filled, and
// at most hi at a time; the pages it backs are resident before they are
// written.
func TestAhead(t *testing.T) {
	ps := pageSizeInt()
	type elem [64]byte
	per := ps / 64 // elements a page
	const n = 4096
	b, err := unix.Mmap(-1, 0, n*64, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	_ = unix.Madvise(b, unix.MADV_NOHUGEPAGE)
	if err := unix.Madvise(b[:ps], unix.MADV_POPULATE_WRITE); errors.Is(err, unix.EINVAL) {
		t.Skip("kernel without MADV_POPULATE_WRITE (before 5.14)")
	}
	unix.Madvise(b[:ps], unix.MADV_DONTNEED)
	s := unsafe.Slice((*elem)(unsafe.Pointer(&b[0])), n)
	lo, hi := per, 16*per
	backed, calls := 0, 0
	for i := range s {
		before := backed
		Ahead(s, i, &backed, lo, hi)
		if backed != before {
			calls++
			want := min(max(i, lo), hi)
			if backed-before != want {
				t.Fatalf("at %d backed %d more, want %d", i, backed-before, want)
			}
			res := resident(t, b)
			for p := i / per; p < backed/per; p++ {
				if !res[p] {
					t.Fatalf("at %d page %d not backed", i, p)
				}
			}
			for p := backed / per; p < len(res); p++ {
				if res[p] {
					t.Fatalf("at %d page %d backed beyond the window (backed %d)", i, p, backed)
				}
			}
		}
		s[i][0] = 1
	}
	// 1, 1, 2, 4, 8 pages, then 16 at a time: 64 pages in 8 calls.
	if calls != 8 {
		t.Errorf("%d calls, want 8", calls)
	}
}
