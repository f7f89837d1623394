// Package ftracetext parses the kernel's ftrace text output (the `trace`
// and `trace_pipe` files, with or without irq-info flags, the TGID column,
// the latency format) and `trace-cmd report` output into trace events.
package ftracetext

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/gprobe/gprobe/analyze/trace"
)

// ErrNotText: nothing in the input looks like an ftrace event line.
var ErrNotText = errors.New("not ftrace text")

var (
	// comm-pid [(tgid)] [cpu] [flags] ts: event: payload
	lineRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(.*?)-(\d+)\s+(?:\(\s*(-+|\d+)\)\s+)?\[(\d+)\]\s+(?:([.a-zA-Z0-9]{4,6})\s+)?(\d+(?:\.\d+)?):\s+(.*)$`)
	})
	// "event: payload"; function tracer lines are "func <-parent" instead.
	evRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([^:\s][^:\s]*):(?:\s(.*))?$`) })
	// latency format: comm-pid CPU+flags time(us)[mark]: event: payload
	latRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(.*?)-(\d+)\s+(\d+)([.a-zA-Z0-9]{4,5})\s+(\d+)us\s?[!+#*@$ ]?:\s+(.*)$`)
	})
	lostRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^CPU:\s*(\d+)\s+\[(?:LOST (\d+) EVENTS|(\d+) EVENTS DROPPED|EVENTS DROPPED)\]`)
	})
	entRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:entries-in-buffer/entries-written:\s*|latency: .*#)(\d+)/(\d+)`)
	})
)

// Reader is a trace.Source over text.
type Reader struct {
	r    io.Reader
	info trace.Info
	// Unparsed counts non-comment lines that matched no grammar.
	Unparsed int
	// traceCmd: the input is `trace-cmd report` output (it starts with
	// "cpus=N"), which prints return probes as "(FUNC <- RET)" in the
	// order of the format's print fmt, where the kernel prints
	// "(RET <- FUNC)".
	traceCmd bool
}

// NewReader reads text from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r, info: trace.Info{Format: "ftrace text", TextTimestamps: true}}
}

// Info implements trace.Source.
func (t *Reader) Info() trace.Info { return t.info }

// Run implements trace.Source.
func (t *Reader) Run(fn func(*trace.Event) error) error {
	br := bufio.NewReaderSize(t.r, 1<<16)
	var lastTS uint64
	var ev trace.Event
	parsedAny := false
	lineNo := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return err
		}
		complete := strings.HasSuffix(line, "\n")
		if line == "" && err == io.EOF {
			break
		}
		lineNo++
		line = strings.TrimRight(line, "\r\n")
		ok, perr := t.parseLine(line, &ev, &lastTS)
		if perr != nil {
			return perr
		}
		switch {
		case ok == lineEvent:
			parsedAny = true
			if e := fn(&ev); e != nil {
				return e
			}
		case ok == lineLost:
			parsedAny = true
			if e := fn(&ev); e != nil {
				return e
			}
		case ok == lineBad:
			if !complete {
				t.info.Truncated = true
			} else {
				t.Unparsed++
			}
			if !parsedAny && t.Unparsed > 50 {
				return fmt.Errorf("%w: line %d: %.60q", ErrNotText, lineNo, line)
			}
		}
		if err == io.EOF {
			break
		}
	}
	if !parsedAny && t.Unparsed > 0 {
		return fmt.Errorf("%w: no event line in %d lines", ErrNotText, t.Unparsed)
	}
	return nil
}

type lineKind int

const (
	lineSkip lineKind = iota
	lineEvent
	lineLost
	lineBad
)

func (t *Reader) parseLine(line string, ev *trace.Event, lastTS *uint64) (lineKind, error) {
	s := strings.TrimSpace(line)
	if strings.HasPrefix(s, "cpus=") {
		t.traceCmd = true
		return lineSkip, nil
	}
	if s == "" || strings.HasPrefix(s, "#####") {
		return lineSkip, nil
	}
	if strings.HasPrefix(s, "#") {
		if m := entRE().FindStringSubmatch(s); m != nil {
			t.info.LossCounted = true
			in, _ := strconv.ParseInt(m[1], 10, 64)
			wr, _ := strconv.ParseInt(m[2], 10, 64)
			if wr > in {
				// Overwritten before anyone read them: lost at the start.
				*ev = trace.Event{Kind: trace.Lost, Count: wr - in, CPU: -1}
				t.info.Lost += wr - in
				return lineLost, nil
			}
		}
		return lineSkip, nil
	}
	if m := lostRE().FindStringSubmatch(s); m != nil {
		cpu, _ := strconv.Atoi(m[1])
		n := int64(-1)
		if m[2] != "" {
			n, _ = strconv.ParseInt(m[2], 10, 64)
		} else if m[3] != "" {
			n, _ = strconv.ParseInt(m[3], 10, 64)
		}
		*ev = trace.Event{Kind: trace.Lost, Count: n, CPU: cpu, TS: *lastTS}
		if n < 0 {
			t.info.LostUnknown++
		} else {
			t.info.Lost += n
		}
		return lineLost, nil
	}
	var comm, pid, tgid, cpu, ts, name, payload string
	latency := false
	var rest string
	if m := lineRE().FindStringSubmatch(line); m != nil {
		comm, pid, tgid, cpu, ts, rest = m[1], m[2], m[3], m[4], m[6], m[7]
	} else if m := latRE().FindStringSubmatch(line); m != nil {
		comm, pid, cpu, ts, rest = m[1], m[2], m[3], m[5], m[6]
		latency = true
	} else {
		return lineBad, nil
	}
	funcLine := false
	if m := evRE().FindStringSubmatch(rest); m != nil {
		name, payload = m[1], m[2]
	} else {
		name, payload, funcLine = "function", rest, true
	}
	*ev = trace.Event{Kind: trace.Data, Fields: ev.Fields[:0]}
	comm = strings.TrimSpace(comm)
	// trace-cmd report prefixes lines of a named buffer with "name: ".
	if i := strings.LastIndex(comm, ": "); i >= 0 && !strings.ContainsAny(comm[:i], " \t") {
		comm = strings.TrimSpace(comm[i+2:])
	}
	ev.Comm = comm
	ev.PID, _ = strconv.Atoi(pid)
	if tgid != "" && tgid[0] != '-' {
		ev.TGID, _ = strconv.Atoi(tgid)
	}
	ev.CPU, _ = strconv.Atoi(cpu)
	if latency {
		us, _ := strconv.ParseUint(ts, 10, 64)
		ev.TS = us * 1000
	} else {
		ev.TS = parseTS(ts)
	}
	*lastTS = ev.TS
	ev.Name = strings.TrimSpace(name)
	if i := strings.LastIndexByte(ev.Name, '/'); i >= 0 { // "group/event" as some tools print
		ev.System, ev.Name = ev.Name[:i], ev.Name[i+1:]
	}
	if funcLine {
		fn, parent, _ := strings.Cut(payload, " <-")
		ev.Fields = append(ev.Fields, trace.KV{Key: "ip", Val: strings.TrimSpace(fn)})
		if parent != "" {
			ev.Fields = append(ev.Fields, trace.KV{Key: "parent_ip", Val: strings.TrimSpace(parent)})
		}
	} else {
		ev.Fields = parsePayload(payload, ev.Fields, t.traceCmd)
	}
	t.info.Events++
	return lineEvent, nil
}

// parseTS turns "SECONDS.FRACTION" into nanoseconds; a plain integer (raw
// counter clocks) is returned as is.
func parseTS(s string) uint64 {
	sec, frac, ok := strings.Cut(s, ".")
	v, _ := strconv.ParseUint(sec, 10, 64)
	if !ok {
		return v
	}
	if len(frac) > 9 {
		frac = frac[:9]
	}
	f, _ := strconv.ParseUint(frac, 10, 64)
	for i := len(frac); i < 9; i++ {
		f *= 10
	}
	return v*1e9 + f
}

// parsePayload reads "(A)" / "(A <- B)" probe addresses and name=value
// pairs (values may be double-quoted). funcFirst: "(FUNC <- RET)".
func parsePayload(p string, kv []trace.KV, funcFirst bool) []trace.KV {
	p = strings.TrimSpace(p)
	if strings.HasPrefix(p, "(") {
		if j := strings.IndexByte(p, ')'); j > 0 {
			inner := p[1:j]
			if a, b, ok := strings.Cut(inner, " <- "); ok {
				ret, fn := addr(a), addr(b)
				if funcFirst {
					ret, fn = fn, ret
				}
				kv = append(kv, trace.KV{Key: "__probe_ret_ip", Val: ret}, trace.KV{Key: "__probe_func", Val: fn})
			} else {
				kv = append(kv, trace.KV{Key: "__probe_ip", Val: addr(inner)})
			}
			p = strings.TrimSpace(p[j+1:])
		}
	}
	for p != "" {
		eq := strings.IndexByte(p, '=')
		if eq <= 0 {
			break
		}
		key := strings.TrimSpace(p[:eq])
		if i := strings.LastIndexAny(key, " \t"); i >= 0 {
			key = key[i+1:]
		}
		rest := p[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				val, rest = rest[1:], ""
			} else {
				val, rest = rest[1:1+end], rest[2+end:]
			}
		} else {
			sp := strings.IndexAny(rest, " \t")
			if sp < 0 {
				val, rest = rest, ""
			} else {
				val, rest = rest[:sp], rest[sp:]
			}
		}
		kv = append(kv, trace.KV{Key: key, Val: val})
		p = strings.TrimSpace(rest)
	}
	return kv
}

// addr normalises a printed probe address: always hex, with or without
// 0x (libtraceevent prints %lx); symbolic kprobe addresses stay as they are.
func addr(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "0x") || s == "" {
		return s
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return s
		}
	}
	return "0x" + s
}
