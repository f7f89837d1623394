package gcpace

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// gcPercent reads GOGC.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestSwitches: below the threshold Go's pacing stays; past it, a
// collection switches it to 40%.
func TestSwitches(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	SwitchAt(1 << 40)
	Start()
	for i := 0; i < 3; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond) // the finalizer runs on its own goroutine
	}
	if p := gcPercent(); p != 100 {
		t.Fatalf("below the threshold: GOGC %d", p)
	}
	keep := make([]byte, 8<<20)
	SwitchAt(1 << 20)
	for i := 0; i < 1000 && gcPercent() != 40; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if p := gcPercent(); p != 40 {
		t.Errorf("past the threshold: GOGC %d, want 40", p)
	}
	runtime.KeepAlive(keep)
}
