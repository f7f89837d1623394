// Package timeline writes matched calls as Chrome trace-event JSON (the
// format chrome://tracing and Perfetto open): one complete ("X") slice per
// call, streamed so memory does not grow with the trace.
package timeline

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"

	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/trace"
)

// Writer streams slices. Call Close to finish the document.
type Writer struct {
	w       *bufio.Writer
	n       int
	threads map[int]threadName
	err     error
}

type threadName struct {
	pid  int
	comm string
}

// New starts a document on w.
func New(w io.Writer) *Writer {
	t := &Writer{w: bufio.NewWriterSize(w, 1<<16), threads: map[int]threadName{}}
	_, t.err = t.w.WriteString("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")
	return t
}

// us renders nanoseconds as microseconds with full precision.
func us(ns uint64) string {
	return strconv.FormatUint(ns/1000, 10) + "." + pad3(ns%1000)
}

func pad3(v uint64) string {
	s := strconv.FormatUint(v, 10)
	for len(s) < 3 {
		s = "0" + s
	}
	return s
}

// Source returns src: the timeline is made of calls only (Writer is an
// analyze.Exporter).
func (t *Writer) Source(_ string, src trace.Source) trace.Source { return src }

// Call writes one slice.
func (t *Writer) Call(c latency.Call) {
	if t.err != nil {
		return
	}
	pid := c.TGID
	if pid == 0 {
		pid = c.PID
	}
	if _, ok := t.threads[c.PID]; !ok {
		t.threads[c.PID] = threadName{pid, c.Comm}
	}
	name, _ := json.Marshal(c.Function)
	if t.n > 0 {
		t.w.WriteString(",\n")
	}
	t.n++
	t.w.WriteString(`{"name":`)
	t.w.Write(name)
	t.w.WriteString(`,"cat":"gprobe","ph":"X","ts":`)
	t.w.WriteString(us(c.Start))
	t.w.WriteString(`,"dur":`)
	t.w.WriteString(us(c.End - c.Start))
	t.w.WriteString(`,"pid":`)
	t.w.WriteString(strconv.Itoa(pid))
	t.w.WriteString(`,"tid":`)
	t.w.WriteString(strconv.Itoa(c.PID))
	_, t.err = t.w.WriteString(`,"args":{"depth":` + strconv.Itoa(c.Depth) + `}}`)
}

// Close writes thread names and ends the document.
func (t *Writer) Close() error {
	if t.err != nil {
		return t.err
	}
	for tid, th := range t.threads {
		name, _ := json.Marshal(th.comm)
		if t.n > 0 {
			t.w.WriteString(",\n")
		}
		t.n++
		t.w.WriteString(`{"name":"thread_name","ph":"M","pid":` + strconv.Itoa(th.pid) + `,"tid":` + strconv.Itoa(tid) + `,"args":{"name":`)
		t.w.Write(name)
		t.w.WriteString("}}")
	}
	t.w.WriteString("\n]}\n")
	return t.w.Flush()
}

// Count is the number of slices and metadata records written.
func (t *Writer) Count() int { return t.n }
