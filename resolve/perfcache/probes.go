package perfcache

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/gprobe/gprobe/internal/atomicfile"
	"github.com/gprobe/gprobe/resolve/spec"
)

// Entry is one entry of a probe cache: a command and the definitions it
// stands for. In the file it is a line "%SPEC" (an SDT marker) or "#SPEC"
// (a probe added with `perf probe --cache`) followed by its definitions,
// one a line:
//
//	%sdt_python:line=line
//	p:sdt_python/line /usr/bin/python3.11:0x3423c(0x68326c) arg1=%r14:u64 arg2=%ax:u64 arg3=%bp:s32
type Entry struct {
	SDT bool
	// Spec is the perf probe command without its prefix: for an SDT
	// marker "sdt_PROVIDER:NAME=NAME".
	Spec string
	// Group and Event are the names Spec gives the event ("" when it
	// gives none): perf's parse_perf_probe_command of Spec.
	Group, Event string
	// Lines are the definitions, in byte order without repeats (perf keeps
	// them in a sorted string list).
	Lines []string
}

// Key is what perf's filters on the cache (--cache -l, --cache -d) match:
// "GROUP:EVENT", or the command of an entry without a name.
func (e *Entry) Key() string {
	if e.Event != "" {
		return e.Group + ":" + e.Event
	}
	return e.Spec
}

// SDTEntry is the entry perf's probe_cache__scan_sdt makes for marker
// NAME of group sdt_PROVIDER.
func SDTEntry(group, name string) Entry {
	return Entry{SDT: true, Spec: group + ":" + name + "=" + name, Group: group, Event: name}
}

// Add adds a definition to the entry, keeping perf's order.
func (e *Entry) Add(line string) {
	i, found := slices.BinarySearch(e.Lines, line)
	if !found {
		e.Lines = slices.Insert(e.Lines, i, line)
	}
}

// maxLine is perf's MAX_CMDLEN less the newline and NUL: fgets reads at
// most that many bytes of a line at once.
const maxLine = 4094

// ParseProbes reads a probe cache file. A definition before any entry is
// an error, as it is for perf (which then reads none of the file); so is
// an entry whose command perf could not parse.
func ParseProbes(data []byte) ([]Entry, error) {
	var entries []Entry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), len(data)+1)
	sc.Split(scanLines)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if len(line) > maxLine {
			return nil, fmt.Errorf("line %d: longer than %d bytes", n, maxLine)
		}
		if line != "" && (line[0] == '#' || line[0] == '%') {
			e := Entry{SDT: line[0] == '%', Spec: line[1:]}
			if g, ev, ok := sdtSpec(e.Spec); ok {
				e.Group, e.Event = g, ev
			} else if p, err := spec.ParseProbe(e.Spec); err != nil {
				return nil, fmt.Errorf("line %d: %q: %w", n, e.Spec, err)
			} else if p.UserEvent {
				e.Group, e.Event = p.Point.Group, p.Point.Event
			}
			entries = append(entries, e)
			continue
		}
		if len(entries) == 0 {
			return nil, fmt.Errorf("line %d: a definition before any command", n)
		}
		entries[len(entries)-1].Add(line)
	}
	return entries, sc.Err()
}

// sdtSpec reads a command of the form SDTEntry writes, GROUP:NAME=NAME
// with C identifiers no longer than maxFastName, as spec.ParseProbe reads
// it (TestSDTSpec compares the two); ok is false for any other command,
// which is then parsed in full. libjvm's cache is 517 such commands, and
// parsing each in full was a tenth of `list --sdt`.
func sdtSpec(s string) (group, event string, ok bool) {
	group, rest, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", false
	}
	event, point, ok := strings.Cut(rest, "=")
	if !ok || point != event || !cIdent(group) || !cIdent(event) {
		return "", "", false
	}
	return group, event, true
}

// maxFastName bounds the names sdtSpec reads itself (SDT provider and
// marker names are short); longer ones go to the full parse, so that the
// fast path stays inside what TestSDTSpec compares.
const maxFastName = 32

// cIdent reports whether s is a C identifier of at most maxFastName bytes.
func cIdent(s string) bool {
	if s == "" || len(s) > maxFastName || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// scanLines splits at '\n' only, as perf's fgets and strchr(buf, '\n')
// do: a '\r' before it stays in the line (bufio.ScanLines would drop it,
// and the line written back would differ from the one read).
func scanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// FormatProbes is the file perf's probe_cache__commit writes for entries.
func FormatProbes(entries []Entry) []byte {
	var b bytes.Buffer
	for _, e := range entries {
		if e.SDT {
			b.WriteByte('%')
		} else {
			b.WriteByte('#')
		}
		b.WriteString(e.Spec + "\n")
		for _, l := range e.Lines {
			b.WriteString(l + "\n")
		}
	}
	return b.Bytes()
}

// Find returns the entry named group:event (group "" matches any group),
// or nil: perf's probe_cache__find_by_name.
func Find(entries []Entry, group, event string) *Entry {
	for i := range entries {
		e := &entries[i]
		if e.Event == event && (group == "" || e.Group == group) {
			return e
		}
	}
	return nil
}

// Probes reads the probe cache of build-id bid, checked as the package
// documentation says. A binary cached without a probe cache has none.
func (c *Cache) Probes(bid string) ([]Entry, error) {
	dir, err := c.entryDir(bid)
	if err != nil {
		return nil, err
	}
	b, err := readTrusted(dir, "probes")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	es, err := ParseProbes(b)
	if err != nil {
		return nil, fmt.Errorf("%s/probes: %w", dir, err)
	}
	return es, nil
}

// SetProbes replaces the probe cache of build-id bid (whose entry Add
// made) with entries.
func (c *Cache) SetProbes(bid string, entries []Entry) error {
	dir, err := c.entryDir(bid)
	if err != nil {
		return err
	}
	p := dir + "/probes"
	if err := atomicfile.Write(p, FormatProbes(entries)); err != nil {
		return err
	}
	return os.Chmod(p, 0o644) // perf creates it 0644
}
