package probe

// Fields gprobe gives the probes of a Go function, named here because the
// resolver writes them and analyze reads them (it cannot import the
// resolver).
const (
	// GoroutineField is $goid's field: the running goroutine's id, read
	// through the g register. Goroutines move between threads, so a
	// reader pairs a Go function's entries and returns by this field, not
	// by thread.
	GoroutineField = "goid"
	// GoStackPointerField and GoStackTopField are the stack pointer and
	// the top of the goroutine's stack (runtime.g's stack.hi), which the
	// entry probe of a Go function (placed after its stack check) and the
	// probes on its return instructions record: the stack pointer is then
	// the same, so top less pointer is the call's depth on its goroutine,
	// unchanged when the runtime moves the stack to grow it. A reader
	// pairs a return with the entry at the same depth, and knows that open
	// calls deeper than a return will never return (a panic or
	// runtime.Goexit unwound them).
	GoStackPointerField = "go_sp"
	GoStackTopField     = "go_hi"
	// LenSuffix names the field that carries a Go string's length beside
	// its text (NAME:string, NAME_len): the kernel reads a string up to a
	// NUL, which a Go string does not end with, so a reader cuts NAME's
	// text at NAME_len.
	LenSuffix = "_len"
)
