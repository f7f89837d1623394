package record

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/tracefmt/ringbuf"
)

// pollMillis bounds how long a CPU reader sleeps in poll(2): the kernel
// wakes pollers only at buffer_percent, and a small buffer must still be
// emptied often.
const pollMillis = 50

// cpuReader moves whole sub-buffers from one CPU's trace_pipe_raw into a
// temporary file, unchanged, and counts what they hold.
type cpuReader struct {
	cpu    int
	layout ringbuf.Layout
	dec    ringbuf.Decoder // pages come in this machine's byte order
	fd     int             // trace_pipe_raw, O_NONBLOCK; raw so the Go poller stays out
	name   string
	tmp    *os.File
	out    *bufio.Writer

	pages, events, missed, missedUnknown atomic.Uint64
	err                                  error
}

func openCPUReader(inst *tracefs.Instance, cpu int, layout ringbuf.Layout, tmpDir string) (*cpuReader, error) {
	name := inst.Path(fmt.Sprintf("per_cpu/cpu%d/trace_pipe_raw", cpu))
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	tmp, err := os.CreateTemp(tmpDir, fmt.Sprintf(".gprobe-cpu%d-*", cpu))
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	// Unlinked at once: the data lives as long as the descriptor, and a
	// gprobe killed by SIGKILL leaves no file behind.
	os.Remove(tmp.Name())
	return &cpuReader{cpu: cpu, layout: layout, dec: ringbuf.NewDecoder(layout, binary.NativeEndian), fd: fd, name: name, tmp: tmp,
		out: bufio.NewWriterSize(tmp, 16*layout.PageSize())}, nil
}

// run copies pages until stop is closed, then drains what is left (the
// caller turns tracing off first, so the drain ends).
func (r *cpuReader) run(stop <-chan struct{}) {
	buf := make([]byte, r.layout.PageSize())
	fd := r.fd
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		stopping := false
		select {
		case <-stop:
			stopping = true
		default:
		}
		if err := r.readAvailable(fd, buf, !stopping); err != nil {
			r.err = err
			return
		}
		if stopping {
			r.err = r.out.Flush()
			return
		}
		if _, err := unix.Poll(pfd, pollMillis); err != nil && !errors.Is(err, unix.EINTR) {
			r.err = fmt.Errorf("poll %s: %w", r.name, err)
			return
		}
	}
}

// readAvailable reads pages until the kernel has none ready. While
// recording (live), it also stops after a page less than half full: that
// is the page the kernel is still writing, copied partially, and reading
// on would hand out one nearly empty page per few events, wasting most of
// each page while a busy writer keeps adding to it.
func (r *cpuReader) readAvailable(fd int, buf []byte, live bool) error {
	for {
		n, err := unix.Read(fd, buf)
		switch {
		case errors.Is(err, unix.EAGAIN) || n == 0:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return fmt.Errorf("read %s: %w", r.name, err)
		}
		// The kernel hands out one whole sub-buffer per read of that
		// size; keep the file made of whole pages in any case.
		clear(buf[n:])
		// A damaged page counts its sound records and is still kept
		// verbatim, for the reader to judge.
		pg, _ := r.dec.Decode(buf, nil)
		r.pages.Add(1)
		full := pg.Commit >= r.layout.DataSize/2
		r.events.Add(uint64(pg.Records))
		switch {
		case pg.Missed > 0:
			r.missed.Add(uint64(pg.Missed))
		case pg.Missed < 0:
			r.missedUnknown.Add(1)
		}
		if _, err := r.out.Write(buf); err != nil {
			return err
		}
		if live && !full {
			return nil
		}
	}
}

func (r *cpuReader) size() int64 { return int64(r.pages.Load()) * int64(r.layout.PageSize()) }

// close releases the trace_pipe_raw descriptor and the temporary file
// (its data must have been copied out before).
func (r *cpuReader) close() {
	unix.Close(r.fd)
	r.tmp.Close()
}
