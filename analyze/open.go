package analyze

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"unicode/utf8"

	"github.com/gprobe/gprobe/analyze/ftracetext"
	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/internal/tracefmt"
)

// ErrUnknownFormat: the input is neither a trace.dat nor ftrace text.
var ErrUnknownFormat = errors.New("not a trace.dat or ftrace text recording")

// Recording is an opened input file.
type Recording struct {
	trace.Source
	file *os.File
	m    *tracefmt.Mapping
}

// Close releases the file: nothing its events carried may be used after.
func (r *Recording) Close() error {
	if r.m != nil {
		r.m.Close()
	}
	return r.file.Close()
}

// Open detects the format of path and returns its event source.
func Open(path string) (*Recording, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	rec := &Recording{file: fh}
	var r io.ReaderAt = fh
	if st.Mode().IsRegular() {
		// Read in place: see tracefmt.Mapping. A file that cannot be
		// mapped is read with system calls instead.
		if m, err := tracefmt.Map(fh, st.Size()); err == nil {
			rec.m, r = m, m
		}
	}
	src, err := detectGuarded(r, rec.m, st.Size())
	if err != nil {
		rec.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rec.Source = src
	return rec, nil
}

// detectGuarded is Detect, with a fault on a mapping whose file shrank
// reported as an error.
func detectGuarded(r io.ReaderAt, m *tracefmt.Mapping, size int64) (src trace.Source, err error) {
	if m != nil {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer m.Recover(&err)
	}
	return Detect(r, size)
}

// Detect picks the reader by content: trace-cmd's magic, else text that
// is valid UTF-8 without NUL bytes in its first block.
func Detect(r io.ReaderAt, size int64) (trace.Source, error) {
	head := make([]byte, 4096)
	n, err := r.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return nil, err
	}
	head = head[:n]
	if n == 0 {
		return nil, fmt.Errorf("%w: empty file", ErrUnknownFormat)
	}
	if bytes.HasPrefix(head, tracefmt.Magic) {
		f, err := tracefmt.Open(r, size)
		if err != nil {
			return nil, err
		}
		return newDatSource(f), nil
	}
	if bytes.HasPrefix(tracefmt.Magic, head) {
		return nil, fmt.Errorf("%w: trace.dat cut inside its magic", tracefmt.ErrCorrupt)
	}
	probe := head
	if n == 4096 {
		// The block may end inside a UTF-8 sequence.
		for i := 0; i < 3 && len(probe) > 0 && !utf8.Valid(probe); i++ {
			probe = probe[:len(probe)-1]
		}
	}
	if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(probe) {
		return nil, ErrUnknownFormat
	}
	return &textSource{ftracetext.NewReader(io.NewSectionReader(r, 0, size))}, nil
}

// textSource turns "no event line" into ErrUnknownFormat.
type textSource struct{ *ftracetext.Reader }

func (t *textSource) Run(fn func(*trace.Event) error) error {
	err := t.Reader.Run(fn)
	if errors.Is(err, ftracetext.ErrNotText) {
		return fmt.Errorf("%w: %v", ErrUnknownFormat, err)
	}
	return err
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
