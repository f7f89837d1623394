package tracefmt

import (
	"strconv"
	"strings"
)

// PIDTable maps a pid to the text after it on its line of a "PID TEXT"
// listing, as the kernel writes saved_cmdlines ("PID COMM") and
// saved_tgids ("PID TGID"). A recording names a handful of the thousands
// of tasks such a listing holds, so the text is searched per pid asked
// for, and indexed whole only once many different pids were asked for.
// A later line for the same pid wins. The zero PIDTable is empty. It is
// not safe for concurrent use.
type PIDTable struct {
	text   string
	cache  map[int]string // answers so far, or every line once indexed
	misses int            // distinct pids searched for
	full   bool
}

// indexAfter is how many distinct pids are searched for in the text
// before the whole listing is indexed instead.
const indexAfter = 32

// NewPIDTable returns the table of text.
func NewPIDTable(text string) *PIDTable { return &PIDTable{text: text} }

// Lookup returns the text after pid's line's first space, trailing
// blanks removed.
func (t *PIDTable) Lookup(pid int) (string, bool) {
	if t == nil || t.text == "" {
		return "", false
	}
	if v, ok := t.cache[pid]; ok || t.full {
		return v, ok
	}
	if t.misses >= indexAfter {
		t.index()
		v, ok := t.cache[pid]
		return v, ok
	}
	t.misses++
	if t.cache == nil {
		t.cache = map[int]string{}
	}
	v, ok := t.search(pid)
	if ok {
		t.cache[pid] = v
	}
	return v, ok
}

// Int returns Lookup's text as a number, 0 when absent or not one.
func (t *PIDTable) Int(pid int) int {
	v, ok := t.Lookup(pid)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0
	}
	return n
}

// All returns every pid's text.
func (t *PIDTable) All() map[int]string {
	if t == nil {
		return nil
	}
	t.index()
	return t.cache
}

// search finds pid's last line.
func (t *PIDTable) search(pid int) (string, bool) {
	p := strconv.Itoa(pid)
	needle := "\n" + p + " "
	text := t.text
	if i := strings.LastIndex(text, needle); i >= 0 {
		return parsePIDLine(text[i+1:])
	}
	if strings.HasPrefix(text, p+" ") {
		return parsePIDLine(text)
	}
	return "", false
}

// index maps every line.
func (t *PIDTable) index() {
	if t.full {
		return
	}
	t.cache = make(map[int]string, strings.Count(t.text, "\n")+1)
	for rest := t.text; rest != ""; {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		p, _, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(p)
		if err != nil || strconv.Itoa(pid) != p {
			continue // search could not find it either
		}
		if v, ok := parsePIDLine(line); ok {
			t.cache[pid] = v
		}
	}
	t.full = true
}

// parsePIDLine returns the text after the first space of the line at the
// start of s.
func parsePIDLine(s string) (string, bool) {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	_, v, ok := strings.Cut(s, " ")
	return strings.TrimRight(v, " \t\r"), ok
}
