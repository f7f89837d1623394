// Command values is gprobe's test program for Go values, names and exits:
// one function per kind of value a probe fetches, each called with values
// the program prints, so that a test compares what a probe recorded with
// what the program says it passed.
//
// Usage: values [N]  (each call is made N times, default 3)
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"

	"gprobetest/values/shapes"
)

// T is a struct reached through pointers.
type T struct {
	Name string
	N    int
	Tags []string
	Next *T
}

// Method is a method on a pointer receiver: main.(*T).Method.
//
//go:noinline
func (t *T) Method(x int) int { return t.N + x }

// Value is a method on a value receiver: main.T.Value.
//
//go:noinline
func (t T) Value() int { return t.N }

//go:noinline
func strs(s string, n int) int { return len(s) + n }

//go:noinline
func slices(c []int, i int) int { return c[i] }

//go:noinline
func ifaces(e error, a any) bool { return e == nil && a != nil }

//go:noinline
func ptrs(t *T) int { return t.N + len(t.Name) + t.Next.N }

//go:noinline
func maps(m map[string]int) int { return len(m) }

var errNeg = errors.New("negative")

//go:noinline
func results(n int) (int, error) {
	if n < 0 {
		return 0, errNeg
	}
	return n * 2, nil
}

//go:noinline
func named(n int) (count int, err error) {
	if n < 0 {
		err = errNeg
		return
	}
	count = n + 100
	return
}

var words = []string{"alpha", "beta", "gamma"}

//go:noinline
func strresult(n int) string { return words[n%len(words)] }

//go:noinline
func floats(x float64, n int) float64 { return x * float64(n) }

// manyargs has more integer arguments than registers: j and k are on the
// stack.
//
//go:noinline
func manyargs(a, b, c, d, e, f, g, h, i, j, k int) int {
	return a + b + c + d + e + f + g + h + i + j*100 + k*1000
}

// Frames of three sizes: the stack check compares SP directly, SP less the
// frame, or guards the subtraction against underflow first.
//
//go:noinline
func small(n int) int { return n + 1 }

//go:noinline
func medium(n int) int {
	var a [200]int
	for i := range a {
		a[i] = n + i
	}
	return a[n%200]
}

//go:noinline
func huge(n int) int {
	var a [9000]int
	for i := range a {
		a[i] = n + i
	}
	return a[n%9000]
}

//go:noinline
func leaf(n int) int { return n * 3 }

//go:noinline
func generic[V any](v V, n int) V {
	if n < 0 {
		var zero V
		return zero
	}
	return v
}

// Box is a generic type: its methods' shape instances take a dictionary
// after the receiver.
type Box[V any] struct {
	v V
	n int
}

//go:noinline
func (b *Box[V]) Get(n int) V {
	if n < 0 {
		var zero V
		return zero
	}
	return b.v
}

// apply calls a closure of a generic function through a variable, so
// that it is not inlined.
//
//go:noinline
func apply[V any](v V, n int) V {
	f := func(k int) V {
		if k < 0 {
			var zero V
			return zero
		}
		return v
	}
	g := &f
	return (*g)(n)
}

// mayPanic leaves by a panic when n is a multiple of 3.
//
//go:noinline
func mayPanic(n int) int {
	if n%3 == 0 {
		panic("multiple of three")
	}
	return n
}

// recovering calls mayPanic and recovers: -1 when it panicked.
//
//go:noinline
func recovering(n int) (r int) {
	defer func() {
		if recover() != nil {
			r = -1
		}
	}()
	return mayPanic(n)
}

// deep recurses n levels. With boom, the call at level 0 panics and the
// call at level 2 recovers and returns: the calls at levels 1 and 0 never
// return (no return instruction runs), those above do.
//
//go:noinline
func deep(n int, boom bool) (r int) {
	if n == 2 && boom {
		defer func() {
			if recover() != nil {
				r = -1
			}
		}()
	}
	if n == 0 {
		if boom {
			panic("bottom")
		}
		return 0
	}
	return deep(n-1, boom) + 1
}

// goexits ends its goroutine with runtime.Goexit when n is odd: it never
// returns then.
//
//go:noinline
func goexits(n int) int {
	if n%2 == 1 {
		runtime.Goexit()
	}
	return n
}

func main() {
	rounds := 3
	if len(os.Args) > 1 {
		n, err := strconv.Atoi(os.Args[1])
		if err != nil {
			fmt.Fprintf(os.Stderr, "values: bad count %q\n", os.Args[1])
			os.Exit(2)
		}
		rounds = n
	}
	tail := &T{Name: "tail", N: 7}
	t := &T{Name: "head", N: 3, Tags: []string{"x", "yy"}, Next: tail}
	m := map[string]int{"a": 1, "b": 2, "c": 3}
	c := []int{10, 20, 30, 40}
	sum := 0
	for i := 0; i < rounds; i++ {
		s := words[i%len(words)]
		fmt.Printf("strs s=%s len=%d n=%d\n", s, len(s), i)
		sum += strs(s, i)
		fmt.Printf("slices len=%d cap=%d c[2]=%d i=%d\n", len(c), cap(c), c[2], i%4)
		sum += slices(c, i%4)
		var e error
		if i%2 == 1 {
			e = errNeg
		}
		fmt.Printf("ifaces e=%v\n", e)
		ifaces(e, t)
		fmt.Printf("ptrs name=%s n=%d next.n=%d\n", t.Name, t.N, t.Next.N)
		sum += ptrs(t)
		fmt.Printf("maps len=%d\n", len(m))
		sum += maps(m)
		r0, r1 := results(i - 1)
		fmt.Printf("results n=%d r0=%d err=%v\n", i-1, r0, r1)
		n0, n1 := named(i - 1)
		fmt.Printf("named n=%d count=%d err=%v\n", i-1, n0, n1)
		fmt.Printf("strresult %s\n", strresult(i))
		sum += int(floats(1.5, i))
		sum += manyargs(1, 2, 3, 4, 5, 6, 7, 8, 9, i, 2*i)
		sum += small(i) + medium(i) + huge(i) + leaf(i) + t.Method(i) + t.Value()
		sum += generic(i, i) + len(generic("g", i))
		b := &Box[string]{v: "box", n: i}
		sum += len(b.Get(i)) + apply(i, i) + len(apply("a", i))
		box := &shapes.Box{W: 2, H: 3, Label: "box"}
		fmt.Printf("area %d\n", box.Area(i))
		fmt.Printf("recovering %d\n", recovering(i))
		fmt.Printf("deep %d %d\n", deep(4, true), deep(4, false))
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			goexits(i)
		}()
		wg.Wait()
		func() { sum += leaf(i) }()
	}
	fmt.Printf("sum %d\n", sum)
}
