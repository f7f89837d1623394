package stackwarm

import (
	"testing"
	"unsafe"
)

// moved reports whether the stack of a new goroutine moved while it made
// a call chain using need bytes, after Grow(warm).
func moved(warm, need int) bool {
	done := make(chan bool)
	go func() {
		Grow(warm)
		var here byte
		before := uintptr(unsafe.Pointer(&here))
		grow(need / frame)
		done <- uintptr(unsafe.Pointer(&here)) != before
	}()
	return <-done
}

// TestGrow: a goroutine's stack moves (is copied) when a deep call chain
// outgrows it, and not once Grow has made room for the chain.
func TestGrow(t *testing.T) {
	if !moved(0, 48<<10) {
		t.Fatal("a 48 KiB call chain did not move a new goroutine's stack: the test cannot tell Grow's effect")
	}
	if moved(64<<10, 48<<10) {
		t.Error("after Grow(64 KiB), a 48 KiB call chain moved the stack")
	}
}
