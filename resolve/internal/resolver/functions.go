package resolver

import (
	"bufio"
	"io"

	"github.com/gprobe/gprobe/resolve/spec"
)

// WriteFunctions writes perf -F's list to w: EachFunction's names, a line
// each, through a buffer. It returns EachFunction's error; like perf, it
// does not report a failed write.
func (r *Resolver) WriteFunctions(w io.Writer, filter *spec.Filter) error {
	b := bufio.NewWriterSize(w, 64<<10)
	err := r.EachFunction(filter, func(name string) bool {
		b.WriteString(name)
		b.WriteByte('\n')
		return true
	})
	b.Flush()
	return err
}
