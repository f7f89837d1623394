// Package gcpace paces Go's garbage collector for a short-lived command:
// Go's default pacing while the live heap is small, collecting at 40%
// once it passes a threshold (Start).
package gcpace

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"
)

// switchAt is the live heap above which collections run at 40%.
var switchAt atomic.Uint64

// SwitchAt sets the live heap, in bytes, above which Start's pacing
// collects at 40% (32 MiB until set).
func SwitchAt(bytes uint64) { switchAt.Store(bytes) }

func init() { switchAt.Store(32 << 20) }

// Start keeps Go's default pacing while the live heap is small, and
// collects at 40% once it passes SwitchAt. A warm gprobe run answers from
// the index in tens of milliseconds, where early collections would be
// most of its cost; a cold run's heap is mostly short-lived unit decodes,
// and collecting earlier keeps its peak memory well below perf's. The
// check runs after each collection (a finalizer re-armed every cycle)
// until it switches. It reads the heap with ReadMemStats, once per cycle,
// rather than through runtime/metrics, whose initialisation would cost
// every start.
func Start() {
	type sentinel struct{ _ [16]byte }
	var arm func()
	arm = func() {
		runtime.SetFinalizer(new(sentinel), func(*sentinel) {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > switchAt.Load() {
				debug.SetGCPercent(40)
				return
			}
			arm()
		})
	}
	arm()
}
