package refcount

import (
	"encoding/binary"
	"strconv"
	"syscall"
	"testing"

	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
)

// BenchmarkLeakHunt follows refprog's pattern at scale: 1M objects that
// leak (get, get, put) then 1M that balance (get, get, put, put), at
// sequential heap addresses; ns/op is per event.
func BenchmarkLeakHunt(b *testing.B)     { benchLeakHunt(b, 1<<20) }
func BenchmarkLeakHuntQ64K(b *testing.B) { benchLeakHunt(b, 1<<16) }
func benchLeakHunt(b *testing.B, quarantine int) {
	spec, _ := ParseSpec("get=get,put=put")
	const leaked, balanced = 1 << 20, 1 << 20
	b.ReportAllocs()
	n := 0
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		a := New(spec, Options{Quarantine: quarantine})
		ts := uint64(0)
		feed := func(e *fastEvent, addr uint64) {
			ts += 100
			e.set(ts, addr)
			a.Event(&e.Event)
			n++
		}
		g, p := newFast("get", 1), newFast("put", 2)
		for o := uint64(0); o < leaked; o++ {
			addr := 0x10000000 + o*32
			feed(g, addr)
			feed(g, addr)
			feed(p, addr)
		}
		for o := uint64(0); o < balanced; o++ {
			addr := 0x10000000 + (leaked+o)*32
			feed(g, addr)
			feed(g, addr)
			feed(p, addr)
			feed(p, addr)
		}
		if r := a.Report(); r.Outstanding != leaked {
			b.Fatal(r.Outstanding)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/event")
}

// fastEvent is a binary uprobe event (obj=%di:x64 site=+0(%sp):x64) whose
// timestamp and key change in place.
type fastEvent struct{ trace.Event }

func newFast(name string, id int) *fastEvent {
	f, err := eventfmt.Parse("g", "name: "+name+"\nID: "+strconv.Itoa(id)+"\nformat:\n"+
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"+
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"+
		"\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"+
		"\tfield:x64 obj;\toffset:16;\tsize:8;\tsigned:0;\n"+
		"\tfield:x64 site;\toffset:24;\tsize:8;\tsigned:0;\n\nprint fmt: \"\"\n")
	if err != nil {
		panic(err)
	}
	e := &fastEvent{trace.Event{System: "g", Name: name, PID: 7, TGID: 7, Comm: "c", Format: f, Data: make([]byte, 32), Order: binary.LittleEndian}}
	binary.LittleEndian.PutUint64(e.Data[8:], 0x401000)
	binary.LittleEndian.PutUint64(e.Data[24:], 0x401234)
	return e
}

func (e *fastEvent) set(ts, addr uint64) {
	e.TS = ts
	binary.LittleEndian.PutUint64(e.Data[16:], addr)
}

// cpuTime is the process's user and system time in ns: on a shared
// machine, wall time says more about the neighbours.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
