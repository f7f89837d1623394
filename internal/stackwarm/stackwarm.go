// Package stackwarm grows the calling goroutine's stack once, early, to
// the size a command will need, so that it is not grown step by step
// later. Each growth copies the stack and walks every frame on it, reading
// each function's tables in the program's pclntab; deep in a command's
// call chain those walks fault in pages scattered over the read-only data
// (64 KiB around each), about a megabyte of resident set a short gprobe
// run would not otherwise touch. Grown from a shallow stack, the walks see
// a few frames of one function.
package stackwarm

// frame is the stack each recursion level of grow takes.
const frame = 1 << 10

// Grow makes the calling goroutine's stack hold at least bytes more than
// it uses now.
func Grow(bytes int) {
	if bytes > 0 {
		grow(bytes / frame)
	}
}

//go:noinline
func grow(n int) byte {
	var pad [frame - 64]byte
	pad[n%len(pad)] = byte(n)
	if n <= 1 {
		return pad[0]
	}
	return grow(n-1) + pad[n%7]
}
