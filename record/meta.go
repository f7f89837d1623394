package record

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// statValue reads one "name: value" line of a per_cpu stats file.
func statValue(stats, name string) uint64 {
	sc := bufio.NewScanner(strings.NewReader(stats))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// profileMisses sums the miss column of kprobe_profile lines
// ("  EVENT  HITS  MISSES") for the given event names.
func profileMisses(text string, events map[string]bool) uint64 {
	var sum uint64
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || !events[f[0]] {
			continue
		}
		n, _ := strconv.ParseUint(f[len(f)-1], 10, 64)
		sum += n
	}
	return sum
}

// Summary is the one line printed when recording ends.
func (r *Result) Summary() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "gprobe record: %d events, %s written to %s", r.Events, humanBytes(r.Bytes), r.Output)
	l := r.Meta.Lost
	if l.Total() == 0 && l.PagesMissedUnknown == 0 {
		b.WriteString(", no events lost")
	} else {
		fmt.Fprintf(&b, ", LOST %d events (ring buffer overrun %d, dropped %d, probe misses %d", l.Total(), max(l.Overrun, l.PageMissed), l.Dropped, l.ProbeMissed)
		if l.PagesMissedUnknown > 0 {
			fmt.Fprintf(&b, ", plus %d gaps of unknown size", l.PagesMissedUnknown)
		}
		b.WriteString(")")
	}
	if r.Meta.Interrupted != "" {
		fmt.Fprintf(&b, "; interrupted by %s", r.Meta.Interrupted)
	}
	for _, w := range r.Unmatched {
		fmt.Fprintf(&b, "; no user event matched %s", w)
	}
	return b.String()
}

func humanBytes(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 10<<10:
		return fmt.Sprintf("%d kB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
