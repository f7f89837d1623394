// Command recurse is gprobe's test program for Go stacks that grow and move
// under probes: WORKERS goroutines each call main.descend DEPTH+1 times,
// recursively, with a 2 KB frame per call, so every goroutine's stack
// starts at a few KB and is copied to larger ones many times while the
// calls are open. Each goroutine then calls main.work, which sleeps
// SLEEP microseconds.
//
// Usage: recurse [WORKERS [DEPTH [SLEEP]]]  (defaults 64 300 200)
//
// It prints, for each goroutine, "goroutine ID NAME" (ID as runtime.Stack
// shows it), then "calls N" (the calls of main.descend) and "work N".
package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// descend recurses depth more times. Its frame holds 2 KB, so that a deep
// recursion outgrows the goroutine's stack again and again.
//
//go:noinline
func descend(name string, depth int) int {
	var frame [256]int64
	for i := range frame {
		frame[i] = int64(depth + i)
	}
	if depth == 0 {
		return int(frame[7]) + len(name)
	}
	return descend(name, depth-1) + int(frame[depth%256]&1)
}

// work sleeps for d: a call whose latency is known.
//
//go:noinline
func work(name string, d time.Duration) int {
	time.Sleep(d)
	return len(name)
}

// goid is the running goroutine's id, as the runtime prints it.
func goid() uint64 {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	n, _ := strconv.ParseUint(string(b), 10, 64)
	return n
}

func arg(i, def int) int {
	if len(os.Args) > i {
		if n, err := strconv.Atoi(os.Args[i]); err == nil {
			return n
		}
		fmt.Fprintf(os.Stderr, "recurse: bad argument %q\n", os.Args[i])
		os.Exit(2)
	}
	return def
}

func main() {
	workers, depth, sleep := arg(1, 64), arg(2, 300), arg(3, 200)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			name := fmt.Sprintf("worker-%02d", w)
			id := goid()
			descend(name, depth)
			work(name, time.Duration(sleep)*time.Microsecond)
			mu.Lock()
			fmt.Printf("goroutine %d %s\n", id, name)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	fmt.Printf("calls %d\n", workers*(depth+1))
	fmt.Printf("work %d\n", workers)
}
