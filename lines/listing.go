package lines

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
)

// OpenEnd is the end of an open line range (perf's INT_MAX).
const OpenEnd = math.MaxInt32

// Listing is the result of a -L search: which lines of which source file
// have probe-able addresses.
type Listing struct {
	Function string // "" for SRC mode
	Path     string // source path as DWARF names it
	CompDir  string
	Start    int // absolute first line
	End      int // absolute last line, OpenEnd if open
	Offset   int // function declaration line (0 in SRC mode)
	Lines    []int
}

// CollectLines is perf's find_line_range_by_line: it adds to l every line
// in [start, end] of file fname that has an address in root (or the whole
// unit when root is nil) whose reverse mapping agrees. It reports whether
// any line was added.
func (u *Unit) CollectLines(root *Scope, fname string, start, end int, l *Listing) (bool, error) {
	before := len(l.Lines)
	err := u.WalkLines(root, func(file string, line int, addr uint64) error {
		if !TailCmp(file, fname) || line < start || line > end {
			return nil
		}
		if rf, rl, ok := u.LineInfo(addr); ok && (line != rl || file != rf) {
			return nil
		}
		if l.Path == "" {
			l.Path = file
		}
		l.Lines = append(l.Lines, line)
		return nil
	})
	if err != nil {
		return false, err
	}
	sort.Ints(l.Lines)
	l.Lines = dedupInts(l.Lines)
	return len(l.Lines) > before, nil
}

func dedupInts(s []int) []int {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// ErrSourceNotFound means the source file of a listing could not be found.
var ErrSourceNotFound = errors.New("Failed to find source file path.")

// SourcePath is perf's find_source_path: with a prefix (-s), try
// prefix/raw, dropping leading components of raw until a readable file is
// found; without one, use comp_dir for a relative raw path, or raw itself.
func SourcePath(raw, compDir, prefix string) (string, error) {
	if prefix == "" {
		if !strings.HasPrefix(raw, "/") && compDir != "" {
			p := compDir + "/" + raw
			if readable(p) {
				return p, nil
			}
			return "", ErrSourceNotFound
		}
		if readable(raw) {
			return raw, nil
		}
		return "", ErrSourceNotFound
	}
	rest := raw
	for {
		p := prefix + "/" + rest
		if readable(p) {
			return p, nil
		}
		i := strings.IndexByte(rest[min(1, len(rest)):], '/')
		if i < 0 {
			return "", ErrSourceNotFound
		}
		rest = rest[i+min(1, len(rest)):]
	}
}

func readable(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// ErrShortSource is returned when the source file ends before a line the
// listing needs ("Source file is shorter than expected.").
var ErrShortSource = errors.New("Source file is shorter than expected.")

// Render writes perf's -L output for l, reading the source at path:
// a header, then each line from Start to the last probe-able line (numbered
// "%7d  " relative to Offset when probe-able, 9 spaces otherwise), plus two
// more lines when the range was open. color wraps un-numbered lines in
// blue, as perf does on a terminal.
func Render(w io.Writer, l *Listing, path string, color bool) error {
	if l.Function != "" {
		fmt.Fprintf(w, "<%s@%s:%d>\n", l.Function, path, l.Start-l.Offset)
	} else {
		fmt.Fprintf(w, "<%s:%d>\n", path, l.Start)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("Failed to open %s: %w", path, err)
	}
	defer f.Close()
	src := &sourceReader{r: bufio.NewReader(f), w: w, color: color}
	n := 1
	for n < l.Start {
		if err := src.line(0, false, true, false); err != nil {
			return err
		}
		n++
	}
	for _, ln := range l.Lines {
		for ; ln > n; n++ {
			if err := src.line(n-l.Offset, false, false, false); err != nil {
				return err
			}
		}
		if err := src.line(n-l.Offset, true, false, false); err != nil {
			return err
		}
		n++
	}
	end := l.End
	if end == OpenEnd {
		end = n + 2
	}
	for ; n <= end; n++ {
		if err := src.line(n-l.Offset, false, false, true); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
	}
	return nil
}

type sourceReader struct {
	r     *bufio.Reader
	w     io.Writer
	color bool
}

const blue, reset = "\x1b[34m", "\x1b[m"

// line reproduces perf's __show_one_line: it reads one source line in
// 255-byte chunks (fgets with a 256-byte buffer), printing the prefix before
// the first chunk. A line that ends at EOF without a newline is printed but
// counts as end of file, as in perf.
func (s *sourceReader) line(num int, numbered, skip, eofOK bool) error {
	prefixed := false
	for {
		chunk, err := s.readChunk()
		if len(chunk) == 0 {
			if err != nil && err != io.EOF {
				return fmt.Errorf("File read error: %w", err)
			}
			if eofOK {
				return io.EOF
			}
			return ErrShortSource
		}
		if !skip {
			if !prefixed {
				prefixed = true
				if numbered {
					fmt.Fprintf(s.w, "%7d  ", num)
				} else {
					s.colored("         ")
				}
			}
			if numbered {
				io.WriteString(s.w, chunk)
			} else {
				s.colored(chunk)
			}
		}
		if strings.HasSuffix(chunk, "\n") {
			return nil
		}
	}
}

func (s *sourceReader) colored(text string) {
	if s.color {
		io.WriteString(s.w, blue+text+reset)
		return
	}
	io.WriteString(s.w, text)
}

func (s *sourceReader) readChunk() (string, error) {
	var b strings.Builder
	for b.Len() < 255 {
		c, err := s.r.ReadByte()
		if err != nil {
			return b.String(), err
		}
		b.WriteByte(c)
		if c == '\n' {
			break
		}
	}
	return b.String(), nil
}

// MatchLazy returns the numbers of the lines of the file at path that match
// a lazy pattern (perf's find_lazy_match_lines), as match decides
// (spec.LazyMatch with the pattern); a line is given without its newline.
func MatchLazy(path string, match func(line string) bool) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []int
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := r.ReadString('\n')
		if line == "" && err != nil {
			if err == io.EOF {
				return out, nil
			}
			return nil, err
		}
		if match(strings.TrimSuffix(line, "\n")) {
			out = append(out, n)
		}
	}
}
