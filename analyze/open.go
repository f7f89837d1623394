package analyze

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
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
}

// Close releases the file.
func (r *Recording) Close() error { return r.file.Close() }

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
	src, err := Detect(fh, st.Size())
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Recording{Source: src, file: fh}, nil
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
