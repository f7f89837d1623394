package tracefs

import (
	"fmt"
	"os"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
)

// LogEntry is one error_log entry:
//
//	[  137.012345] trace_kprobe: error: Invalid probed address or symbol
//	  Command: p non_exist_func
//	             ^
type LogEntry struct {
	Subsystem string // "trace_kprobe", "trace_uprobe"
	Text      string // "Invalid probed address or symbol"
	Command   string // the command, argv re-joined with single spaces
	Pos       int    // byte offset of the caret in Command (may equal len(Command)+1)
}

// filterSubsystem is how the event filter parser (an eprobe's "if
// FILTER") names itself in error_log; its Command is the filter alone.
const filterSubsystem = "event filter parse error"

// Message is a one-line description naming the failing part of the command:
// the argument of a probe definition, the filter of an eprobe, or the
// command with a caret at the failing place for the other writers (hist
// triggers, synthetic events).
func (e LogEntry) Message() string {
	for _, k := range probe.Kinds {
		if e.Subsystem == k.Subsystem() {
			return probedef.Describe(e.Command, e.Pos, e.Text)
		}
	}
	pos := min(max(e.Pos, 0), len(e.Command))
	caret := e.Command[:pos] + "^" + e.Command[pos:]
	if e.Subsystem == filterSubsystem {
		return fmt.Sprintf("%s (filter %q)", e.Text, caret)
	}
	return fmt.Sprintf("%s (at %q)", e.Text, caret)
}

// ErrorLog reads and parses error_log (oldest first).
func (t *FS) ErrorLog() ([]LogEntry, error) {
	b, err := os.ReadFile(t.Path("error_log"))
	if err != nil {
		return nil, t.fileErr(err, "error_log")
	}
	return ParseErrorLog(string(b)), nil
}

const cmdPrefix = "  Command: "

// ParseErrorLog parses error_log text. Entries it cannot read are skipped.
func ParseErrorLog(s string) []LogEntry {
	lines := strings.Split(s, "\n")
	var out []LogEntry
	for i := 0; i+2 < len(lines); i++ {
		h := lines[i]
		if !strings.HasPrefix(h, "[") || !strings.HasPrefix(lines[i+1], cmdPrefix) {
			continue
		}
		rb := strings.Index(h, "] ")
		if rb < 0 {
			continue
		}
		rest := h[rb+2:]
		sub, text, ok := strings.Cut(rest, ": error: ")
		if !ok {
			continue
		}
		caret := strings.IndexByte(lines[i+2], '^')
		if caret < len(cmdPrefix) {
			continue
		}
		out = append(out, LogEntry{
			Subsystem: sub,
			Text:      text,
			Command:   strings.TrimPrefix(lines[i+1], cmdPrefix),
			Pos:       caret - len(cmdPrefix),
		})
		i += 2
	}
	return out
}
