// Command userevents-example defines two user events, request_begin and
// request_end, waits until a tracer enables them, and writes -n requests:
// request_begin (id) then request_end (id, status = 3*id, and a tag),
// -pause apart. It is the Go half of the userevents package's example;
// userevents/cexample/example.c is the C half, as
// Documentation/trace/user_events.rst describes it.
//
//	gprobe record -e 'user_events:*' -o trace.out -- userevents-example -n 100
//	gprobe analyze trace.out      # request: 100 calls, paired begin/end
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/gprobe/gprobe/userevents"
)

func main() {
	n := flag.Int("n", 10, "requests to write")
	wait := flag.Duration("wait", 10*time.Second, "how long to wait for a tracer to enable the events")
	pause := flag.Duration("pause", 100*time.Microsecond, "time between a request's begin and its end")
	flag.Parse()
	if err := run(*n, *wait, *pause); err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

func run(n int, wait, pause time.Duration) error {
	begin, err := userevents.Register("request_begin u32 id", 0)
	if err != nil {
		return err
	}
	defer begin.Close()
	end, err := userevents.Register("request_end u32 id; u32 status; char[16] tag", 0)
	if err != nil {
		return err
	}
	defer end.Close()
	deadline := time.Now().Add(wait)
	for !begin.Enabled() || !end.Enabled() {
		if time.Now().After(deadline) {
			return fmt.Errorf("no tracer enabled the events within %v", wait)
		}
		time.Sleep(time.Millisecond)
	}
	written := 0
	for i := range n {
		id := uint32(i)
		ok1, err := begin.Write(userevents.U32(id))
		if err != nil {
			return err
		}
		time.Sleep(pause)
		ok2, err := end.Write(userevents.U32(id), userevents.U32(3*id), userevents.Chars(fmt.Sprintf("req-%d", id), 16))
		if err != nil {
			return err
		}
		if ok1 && ok2 {
			written++
		}
	}
	fmt.Printf("wrote %d requests\n", written)
	return nil
}
