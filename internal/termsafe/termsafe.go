// Package termsafe makes what gprobe prints safe for a terminal. Much of
// it comes from files gprobe does not control: source lines and names
// from DWARF (a debuginfod server's), symbol tables, event format files,
// the comm of traced processes. A control character among them could
// retitle the terminal, clear it, move the cursor over earlier output or,
// on some terminals, send keystrokes back; termsafe shows each one
// escaped (\x1b, \u009b) instead, and lets through only the few
// sequences gprobe writes itself (erase the line, the colour of -L).
package termsafe

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
)

// Sequences gprobe writes on purpose: the progress lines' "back to the
// start of the line and erase it" and the colours of -L's listing.
var Sequences = []string{"\r\x1b[K", "\x1b[34m", "\x1b[m"}

// String returns s with its control characters escaped: C0 controls but
// newline and tab (a carriage return only when a newline follows), DEL,
// C1 controls (U+0080 to U+009F, and the bytes 0x80 to 0x9F that are not
// part of a UTF-8 sequence). Nothing else changes, invalid UTF-8 included.
func String(s string) string {
	if safe([]byte(s)) {
		return s
	}
	var b bytes.Buffer
	e := escaper{}
	e.escape(&b, []byte(s), true)
	return b.String()
}

// safe reports whether p has nothing to escape (the common case, checked
// fast).
func safe(p []byte) bool {
	for _, c := range p {
		if c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
			return false
		}
	}
	return true
}

// escaper escapes a stream; allow lists sequences passed through.
type escaper struct {
	allow []string
	carry []byte // an incomplete sequence at the end of the last write
}

// escape appends p's escaped text to out. Unless final, an incomplete
// UTF-8 sequence, an allowed sequence cut short or a carriage return at
// the end is kept for the next call.
func (e *escaper) escape(out *bytes.Buffer, p []byte, final bool) {
	data := p
	if len(e.carry) > 0 {
		data = append(e.carry, p...)
		e.carry = nil
	}
	for i := 0; i < len(data); {
		c := data[i]
		rest := data[i:]
		switch {
		case c == '\n' || c == '\t' || c >= 0x20 && c < 0x7f:
			out.WriteByte(c)
			i++
			continue
		case c == '\r' || c == 0x1b:
			if n := e.allowed(rest); n > 0 {
				out.Write(rest[:n])
				i += n
				continue
			}
			if !final && e.prefix(rest) {
				e.carry = append([]byte(nil), rest...)
				return
			}
			if c == '\r' && len(rest) > 1 && rest[1] == '\n' {
				out.WriteString("\r\n")
				i += 2
				continue
			}
		case c >= 0x80:
			r, size := utf8.DecodeRune(rest)
			if r == utf8.RuneError && size == 1 {
				if !final && !utf8.FullRune(rest) {
					e.carry = append([]byte(nil), rest...)
					return
				}
				if c >= 0xa0 {
					out.WriteByte(c) // not UTF-8, not a control: as it is
					i++
					continue
				}
			} else if r > 0x9f {
				out.Write(rest[:size])
				i += size
				continue
			} else {
				fmt.Fprintf(out, `\u%04x`, r)
				i += size
				continue
			}
		}
		fmt.Fprintf(out, `\x%02x`, c)
		i++
	}
}

// allowed is the length of the allowed sequence p starts with, or 0.
func (e *escaper) allowed(p []byte) int {
	for _, s := range e.allow {
		if bytes.HasPrefix(p, []byte(s)) {
			return len(s)
		}
	}
	return 0
}

// prefix reports whether p, at the end of a write, may be cut short: a
// lone carriage return (a newline may follow) or the start of an allowed
// sequence.
func (e *escaper) prefix(p []byte) bool {
	if len(p) == 1 && p[0] == '\r' {
		return true
	}
	for _, s := range e.allow {
		if len(p) < len(s) && strings.HasPrefix(s, string(p)) {
			return true
		}
	}
	return false
}

// Writer escapes what is written through it (see String), passing through
// the Sequences. It keeps an incomplete sequence at the end of a write
// for the next one; Flush writes it out. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	esc escaper
	buf bytes.Buffer
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, esc: escaper{allow: Sequences}}
}

// Write escapes p to the underlying writer. It reports len(p) written
// unless the underlying writer fails.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.esc.carry) == 0 && safe(p) {
		if _, err := w.w.Write(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	w.buf.Reset()
	w.esc.escape(&w.buf, p, false)
	if w.buf.Len() > 0 {
		if _, err := w.w.Write(w.buf.Bytes()); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes out what an earlier write left incomplete, escaped.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.esc.carry) == 0 {
		return nil
	}
	w.buf.Reset()
	w.esc.escape(&w.buf, nil, true)
	_, err := w.w.Write(w.buf.Bytes())
	return err
}

// Unwrap is the underlying writer (a terminal's *os.File).
func (w *Writer) Unwrap() io.Writer { return w.w }

// Raw is the writer under a Writer (w itself otherwise): what a command
// gprobe runs is given, so that it gets the terminal itself.
func Raw(w io.Writer) io.Writer {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		return u.Unwrap()
	}
	return w
}

// IsTerminal reports whether w (or the writer under a Writer) is a
// terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := Raw(w).(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Guard returns w wrapped in a Writer when it is a terminal (w itself
// otherwise: a file or a pipe gets the bytes as they are), and the
// function that flushes that Writer once nothing more is written.
func Guard(w io.Writer) (io.Writer, func()) {
	if !IsTerminal(w) {
		return w, func() {}
	}
	t := NewWriter(w)
	return t, func() { t.Flush() }
}
